// The antibot module's driver test: loads libantibot.so as a DDNet 16.4 server does, plays
// a round of simulated tees through it (server_sim.hpp), then checks what the module told
// the server about each player against the expectations on the command line.
//
//   antibot_driver LIBANTIBOT CONFIG [--report monitor|flag] [--seconds S] [--idle] EXPECT...
//
// EXPECT is NAME=ACTION (the highest action said about NAME, in a report or a log line;
// Clear: nothing said at all) or NAME=ACTION@report (said through the report callback,
// with NAME's client id). The round has the players human1..human4 (irregular, human
// timing; human4 leaves two thirds of the way through), macro (direction flipped every
// 10 ticks exactly) and runner (human timing, running at 30 units a tick, 47 m/s, which
// DDNet's physics allows). After the round's play, every export is called with data no
// server should pass. Exit status 0 when every expectation holds, the module refused no
// batch, and every input it was handed was matched with the one the game took. With
// --idle (a config that cannot be read): 0 when the module said it stays idle and said
// nothing about any player, all calls having returned.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "server_sim.hpp"

using namespace arbiter::ddnet::antibot::test;

namespace {

int rank(const std::string& action) {
    static const std::map<std::string, int> ranks = {
        {"Clear", 0}, {"Monitor", 1}, {"FlagForReview", 2}, {"ShadowRestrict", 3}};
    auto it = ranks.find(action);
    return it == ranks.end() ? -1 : it->second;
}

struct Said {
    std::string action = "Clear";
    bool reported = false;
    int client_id = -1;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: %s LIBANTIBOT CONFIG [--report monitor|flag] [--seconds S] "
                     "NAME=ACTION[@report]...\n",
                     argv[0]);
        return 1;
    }
    int seconds = 90;
    bool idle = false;
    std::vector<std::string> expectations;
    setenv("ARBITER_ANTIBOT_CONFIG", argv[2], 1);
    for (int i = 3; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--report" && i + 1 < argc)
            setenv("ARBITER_ANTIBOT_REPORT", argv[++i], 1);
        else if (arg == "--idle")
            idle = true;
        else if (arg == "--seconds" && i + 1 < argc)
            seconds = std::atoi(argv[++i]);
        else
            expectations.push_back(arg);
    }
    const int ticks = seconds * 50;
    const std::vector<SimPlayer> players = {
        {.name = "human1", .behaviour = Behaviour::human, .join_tick = 0},
        {.name = "human2", .behaviour = Behaviour::human, .join_tick = 3},
        {.name = "human3", .behaviour = Behaviour::human, .join_tick = 40},
        {.name = "human4",
         .behaviour = Behaviour::human,
         .join_tick = 41,
         .leave_tick = ticks * 2 / 3},
        {.name = "macro", .behaviour = Behaviour::macro, .join_tick = 5},
        {.name = "runner", .behaviour = Behaviour::runner, .speed = 30.0f, .join_tick = 7},
    };

    AntibotLibrary lib;
    try {
        lib = AntibotLibrary::open(argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    ServerSim sim(lib, 41);
    sim.start();
    sim.play(players, ticks);
    sim.dump();
    const std::string after_play = sim.log().empty() ? "" : sim.log().back();
    sim.abuse();
    sim.dump();
    const std::string after_abuse = sim.log().back();
    sim.stop();
    lib.close();

    // What the module said about whom: "arbiter: ACTION (score S) for NAME", followed in a
    // log line by " (client N)" and ", match M player P".
    std::map<std::string, Said> said;
    const std::regex line(
        R"(^arbiter: (Clear|Monitor|FlagForReview|ShadowRestrict) \(score [0-9.]+\) for (.*?)( \(client [0-9]+\))?(, match .*)?$)");
    for (const std::string& l : sim.log()) {
        std::printf("log: %s\n", l.c_str());
        std::smatch m;
        if (!std::regex_match(l, m, line)) continue;
        Said& s = said[m[2]];
        if (rank(m[1]) > rank(s.action)) s.action = m[1];
    }
    for (const SimReport& r : sim.reports()) {
        std::printf("report: %d: %s\n", r.client_id, r.message.c_str());
        std::smatch m;
        if (!std::regex_match(r.message, m, line)) continue;
        Said& s = said[m[2]];
        if (rank(m[1]) >= rank(s.action)) {
            s.action = m[1];
            s.reported = true;
            s.client_id = r.client_id;
        }
    }

    int failures = 0;
    for (const std::string& e : expectations) {
        const auto eq = e.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "bad expectation: %s\n", e.c_str());
            return 1;
        }
        const std::string name = e.substr(0, eq);
        std::string action = e.substr(eq + 1);
        const bool want_report = action.size() > 7 && action.ends_with("@report");
        if (want_report) action.resize(action.size() - 7);
        const Said s = said.count(name) ? said[name] : Said{};
        int expected_client = -1;
        for (size_t i = 0; i < players.size(); ++i)
            if (players[i].name == name) expected_client = static_cast<int>(i);
        const bool ok =
            s.action == action && (!want_report || (s.reported && s.client_id == expected_client));
        std::printf("%-8s %-14s expected %s%s: %s\n", name.c_str(), s.action.c_str(),
                    action.c_str(), want_report ? " (reported)" : "", ok ? "ok" : "FAILED");
        if (!ok) ++failures;
    }
    if (idle) {
        bool said_idle = false;
        for (const std::string& l : sim.log())
            if (l.find("cannot start the host") != std::string::npos &&
                l.find("stays idle") != std::string::npos)
                said_idle = true;
        const bool silent = sim.reports().empty() && said.empty();
        std::printf("said it stays idle: %s; said nothing about players: %s\n",
                    said_idle ? "yes" : "NO", silent ? "yes" : "NO");
        return failures == 0 && said_idle && silent ? 0 : 3;
    }
    // Every batch taken by the host, and every input matched (the simulated clients' every
    // message was readable): said by the module's own dump line.
    const bool accepted = after_abuse.find("(0 refused)") != std::string::npos;
    const bool matched = after_play.find("(0 inputs taken by aim alone)") != std::string::npos;
    // "N events (P positions, O orders)": both counts must be above 0.
    std::smatch counts;
    const bool flowed =
        std::regex_search(after_play, counts, std::regex(R"(\((\d+) positions, (\d+) orders\))")) &&
        std::stoull(counts[1].str()) > 0 && std::stoull(counts[2].str()) > 0;
    std::printf("batches all accepted: %s; inputs all matched: %s; events flowed: %s\n",
                accepted ? "yes" : "NO", matched ? "yes" : "NO", flowed ? "yes" : "NO");
    if (!accepted || !matched || !flowed) ++failures;
    std::printf("library time: %.3f s over %zu ticks\n", sim.library_seconds(),
                sim.tick_seconds().size());
    return failures == 0 ? 0 : 3;
}
