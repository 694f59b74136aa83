// What the antibot module costs a DDNet server: a full server (64 tees, 56 of human
// timing and 8 macros, all running and aiming) played for 60 s of game time through
// libantibot.so as 16.4's server calls it (server_sim.hpp), once per batch size; prints the
// time spent inside the library per server tick (mean, median, 99th percentile, worst)
// and per tee, as the calling thread's CPU time and as wall-clock time. The host runs its plugins
// on the calling thread unless the config sets
// `[host] threads`: this is time the server's own tick waits for.
//
//   antibot_bench LIBANTIBOT CONFIG [SECONDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "server_sim.hpp"

using namespace arbiter::ddnet::antibot::test;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s LIBANTIBOT CONFIG [SECONDS]\n", argv[0]);
        return 1;
    }
    const int seconds = argc > 3 ? std::atoi(argv[3]) : 60;
    setenv("ARBITER_ANTIBOT_CONFIG", argv[2], 1);
    std::vector<SimPlayer> players;
    for (int i = 0; i < 64; ++i)
        players.push_back({.name = "tee" + std::to_string(i),
                           .behaviour = i % 8 == 7 ? Behaviour::macro : Behaviour::human,
                           .join_tick = i});
    std::printf("%-12s %-5s %6s %10s %10s %10s %10s %12s\n", "batch ticks", "time", "tees",
                "mean us", "p50 us", "p99 us", "max us", "us/tee/tick");
    for (const char* batch : {"1", "5", "25"}) {
        setenv("ARBITER_ANTIBOT_BATCH_TICKS", batch, 1);
        AntibotLibrary lib;
        try {
            lib = AntibotLibrary::open(argv[1]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 2;
        }
        ServerSim sim(lib, 7);
        sim.start();
        sim.play(players, seconds * 50);
        sim.dump();
        const std::string dump = sim.log().back();
        sim.stop();
        lib.close();
        // The ticks after every tee has joined and spawned.
        for (const auto* series : {&sim.tick_cpu_seconds(), &sim.tick_seconds()}) {
            std::vector<double> t(series->begin() + 100, series->end());
            std::sort(t.begin(), t.end());
            double sum = 0;
            for (double v : t)
                sum += v;
            const double mean = sum / static_cast<double>(t.size());
            const auto at = [&](double q) {
                return t[static_cast<size_t>(q * static_cast<double>(t.size() - 1))];
            };
            std::printf("%-12s %-5s %6zu %10.1f %10.1f %10.1f %10.1f %12.2f\n", batch,
                        series == &sim.tick_seconds() ? "wall" : "cpu", players.size(), mean * 1e6,
                        at(0.5) * 1e6, at(0.99) * 1e6, t.back() * 1e6,
                        mean * 1e6 / static_cast<double>(players.size()));
        }
        std::printf("  %s\n", dump.c_str());
    }
    return 0;
}
