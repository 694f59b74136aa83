// Writes samples/sample-match.arbev: the recorded match the README's main command
// replays. Deterministic (a fixed seed, no clock), so a test can check that the
// committed file is exactly what this program writes.
//
// One match of 60 s on a 20 Hz relay, six players:
//   1 alice    honest, walks at 5 m/s and turns now and then
//   2 bob      honest, runs at 18.5 m/s, close to the 20 m/s limit
//   3 carol    honest, runs at 17 m/s; a lag spike at 20 s (0.8 s of silence, then a
//              burst of 16 late updates within 5 ms) and 10 % packet loss from 30 to 40 s
//   4 dave     honest, respawned 500 m away by the server at 30 s
//   5 mallory  speed hack: 32 m/s from 15 s to 35 s
//   6 trent    teleports 250 m in one update at 25 s, and 60 m in one update at 40 s
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/event_file.hpp"

namespace {

constexpr int64_t kTickUs = 50'000;
constexpr int kTicks = 1200;  // 60 s
constexpr double kPi = 3.14159265358979323846;

struct Mover {
    uint32_t id;
    std::string account;
    double x, y;
    double heading;  // radians
};

// How fast each player moves at a given tick, in m/s.
double speed_of(uint32_t player, int tick) {
    double t = tick * 0.05;
    switch (player) {
        case 1:
            return 5.0;
        case 2:
            return 18.5;
        case 3:
            return 17.0;
        case 4:
            return 9.0;
        case 5:
            return (t >= 15.0 && t < 35.0) ? 32.0 : 10.0;
        case 6:
            return 6.0;
    }
    return 0.0;
}

}  // namespace

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "sample-match.arbev";
    std::mt19937 random(20261121);
    auto uniform = [&]() { return static_cast<double>(random()) / 4294967296.0; };

    std::vector<Mover> movers = {
        {1, "alice", 0, 0, 0.0},   {2, "bob", 100, 0, 0.5},      {3, "carol", 0, 100, 1.0},
        {4, "dave", -100, 0, 2.0}, {5, "mallory", 0, -100, 3.0}, {6, "trent", 50, 50, 4.0},
    };

    arbiter::BatchBuilder builder("sample-relay", 1);
    std::vector<std::vector<uint8_t>> batches;
    const int64_t start_unix_us = 1'790'000'000'000'000;

    builder.add(0, 0, 0,
                arbiter::build::MatchStart{.game = "arena",
                                           .map = "plaza",
                                           .rules = "deathmatch",
                                           .rated = true,
                                           .tick_rate_hz = 20.0f,
                                           .started_unix_us = start_unix_us});
    for (const auto& m : movers)
        builder.add(1000 + m.id, 0, m.id,
                    arbiter::build::PlayerJoin{.account_id = m.account,
                                               .client_version = "1.4.2",
                                               .handshake = "arena/7",
                                               .connection_id = 100 + m.id,
                                               .address_hash = 0x9e3779b97f4a7c15ull * m.id,
                                               .rating = 1500,
                                               .rating_tier = "gold"});
    batches.push_back(builder.finish());

    // carol's updates held back by her lag spike, released as a burst.
    std::vector<std::pair<int, arbiter::build::Position>> held;
    // A tick's events, put in relay-time order before they go into its batch.
    struct Pending {
        int64_t t_us;
        int order;  // breaks ties in the order of writing
        std::function<void()> add;
    };
    std::vector<Pending> pending;
    auto later = [&](int64_t at_us, std::function<void()> add) {
        pending.push_back({at_us, static_cast<int>(pending.size()), std::move(add)});
    };

    for (int tick = 1; tick <= kTicks; ++tick) {
        const int64_t t_us = tick * kTickUs;
        const double t = tick * 0.05;
        for (auto& m : movers) {
            // Turn now and then, as people do.
            if (tick % 100 == 0) m.heading += (uniform() - 0.5) * kPi;
            double step = speed_of(m.id, tick) * 0.05;
            m.x += std::cos(m.heading) * step;
            m.y += std::sin(m.heading) * step;

            bool server_teleport = false;
            if (m.id == 4 && tick == 600) {  // dave respawns
                m.x += 500;
                server_teleport = true;
            }
            if (m.id == 6 && tick == 500) m.x += 250;  // trent teleports
            if (m.id == 6 && tick == 800) m.y += 60;

            arbiter::build::Position update{
                .position = {static_cast<float>(m.x), static_cast<float>(m.y), 0.0f},
                .on_ground = true,
                .ground_height = 0.0f,
                .server_teleport = server_teleport};
            // Jitter of the relay's receive time within the tick.
            int64_t receive_us = t_us + static_cast<int64_t>(uniform() * 20'000);

            if (m.id == 3 && t >= 20.0 && t < 20.8) {
                held.emplace_back(tick, update);
                continue;
            }
            if (m.id == 3 && t >= 30.0 && t < 40.0 && uniform() < 0.10) continue;  // packet loss
            const auto id = m.id;
            later(receive_us, [&builder, receive_us, tick, id, update] {
                builder.add(receive_us, static_cast<uint64_t>(tick), id, update);
            });

            if (tick % 20 == 0) {
                uint32_t rtt = 40'000 + static_cast<uint32_t>(uniform() * 40'000);
                if (m.id == 3 && t >= 20.8 && t < 23.0)
                    rtt = 850'000;  // the spike, as the relay measured it
                later(receive_us + 1, [&builder, receive_us, tick, id, rtt] {
                    builder.add(receive_us + 1, static_cast<uint64_t>(tick), id,
                                arbiter::build::Latency{.rtt_us = rtt});
                });
            }
        }
        if (tick == 16 * 20 + 16) {  // t = 20.8 s: carol's burst arrives within 5 ms
            int64_t burst_us = t_us + 20'000;
            for (size_t i = 0; i < held.size(); ++i) {
                int64_t at_us = burst_us + static_cast<int64_t>(i) * 300;
                auto update = held[i].second;
                later(at_us, [&builder, at_us, tick, update] {
                    builder.add(at_us, static_cast<uint64_t>(tick), 3, update);
                });
            }
            held.clear();
        }
        std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
            return a.t_us != b.t_us ? a.t_us < b.t_us : a.order < b.order;
        });
        for (auto& event : pending)
            event.add();
        pending.clear();
        builder.add(
            t_us + 49'000, static_cast<uint64_t>(tick), 0,
            arbiter::build::TickBoundary{.tick_lag_us = static_cast<uint32_t>(uniform() * 2'000)});
        if (tick == kTicks)
            builder.add(t_us + 49'500, static_cast<uint64_t>(tick), 0,
                        arbiter::build::MatchEnd{.reason = "finished",
                                                 .claimed_length_us = std::nullopt,
                                                 .ended_unix_us = start_unix_us + t_us + 49'500});
        batches.push_back(builder.finish());
    }

    try {
        arbiter::host::write_event_file(path, batches);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    std::printf("wrote %zu batches to %s\n", batches.size(), path);
    return 0;
}
