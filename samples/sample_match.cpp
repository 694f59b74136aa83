#include "sample_match.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace arbiter::samples {

namespace {

constexpr int64_t kTickUs = 50'000;
constexpr int kTicks = 1200;
constexpr double kPi = 3.14159265358979323846;

struct Mover {
    uint32_t id;
    std::string account;
    double x, y;
    double heading;
};

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

EventGroups sample_match_events() {
    std::mt19937 random(20261121);
    auto uniform = [&]() { return static_cast<double>(random()) / 4294967296.0; };
    std::vector<Mover> movers = {
        {1, "alice", 0, 0, 0.0},   {2, "bob", 100, 0, 0.5},      {3, "carol", 0, 100, 1.0},
        {4, "dave", -100, 0, 2.0}, {5, "mallory", 0, -100, 3.0}, {6, "trent", 50, 50, 4.0},
    };
    const int64_t start_unix_us = 1'790'000'000'000'000;

    EventGroups groups;
    std::vector<MatchEvent> first;
    first.push_back({0, 0, 0,
                     build::MatchStart{.game = "arena",
                                       .map = "plaza",
                                       .rules = "deathmatch",
                                       .rated = true,
                                       .tick_rate_hz = 20.0f,
                                       .started_unix_us = start_unix_us}});
    for (const auto& m : movers)
        first.push_back({1000 + m.id, 0, m.id,
                         build::PlayerJoin{.account_id = m.account,
                                           .client_version = "1.4.2",
                                           .handshake = "arena/7",
                                           .connection_id = 100 + m.id,
                                           .address_hash = 0x9e3779b97f4a7c15ull * m.id,
                                           .rating = 1500,
                                           .rating_tier = "gold"}});
    groups.push_back(std::move(first));

    std::vector<std::pair<int, build::Position>> held;
    struct Pending {
        int order;
        MatchEvent event;
    };
    std::vector<Pending> pending;
    auto later = [&](MatchEvent event) {
        pending.push_back({static_cast<int>(pending.size()), std::move(event)});
    };

    for (int tick = 1; tick <= kTicks; ++tick) {
        const int64_t t_us = tick * kTickUs;
        const double t = tick * 0.05;
        const auto tick_u = static_cast<uint64_t>(tick);
        for (auto& m : movers) {
            if (tick % 100 == 0) m.heading += (uniform() - 0.5) * kPi;
            double step = speed_of(m.id, tick) * 0.05;
            m.x += std::cos(m.heading) * step;
            m.y += std::sin(m.heading) * step;

            bool server_teleport = false;
            if (m.id == 4 && tick == 600) {
                m.x += 500;
                server_teleport = true;
            }
            if (m.id == 6 && tick == 500) m.x += 250;
            if (m.id == 6 && tick == 800) m.y += 60;

            build::Position update{
                .position = {static_cast<float>(m.x), static_cast<float>(m.y), 0.0f},
                .on_ground = true,
                .ground_height = 0.0f,
                .server_teleport = server_teleport};
            int64_t receive_us = t_us + static_cast<int64_t>(uniform() * 20'000);

            if (m.id == 3 && t >= 20.0 && t < 20.8) {
                held.emplace_back(tick, update);
                continue;
            }
            if (m.id == 3 && t >= 30.0 && t < 40.0 && uniform() < 0.10) continue;
            later({receive_us, tick_u, m.id, update});

            if (tick % 20 == 0) {
                uint32_t rtt = 40'000 + static_cast<uint32_t>(uniform() * 40'000);
                if (m.id == 3 && t >= 20.8 && t < 23.0) rtt = 850'000;
                later({receive_us + 1, tick_u, m.id, build::Latency{.rtt_us = rtt}});
            }
        }
        if (tick == 416) {  // t = 20.8 s: carol's held updates arrive within 5 ms
            int64_t burst_us = t_us + 20'000;
            for (size_t i = 0; i < held.size(); ++i)
                later({burst_us + static_cast<int64_t>(i) * 300, tick_u, 3, held[i].second});
            held.clear();
        }
        std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
            return a.event.t_us != b.event.t_us ? a.event.t_us < b.event.t_us : a.order < b.order;
        });
        std::vector<MatchEvent> group;
        for (auto& p : pending)
            group.push_back(std::move(p.event));
        pending.clear();
        group.push_back(
            {t_us + 49'000, tick_u, 0,
             build::TickBoundary{.tick_lag_us = static_cast<uint32_t>(uniform() * 2'000)}});
        if (tick == kTicks)
            group.push_back({t_us + 49'500, tick_u, 0,
                             build::MatchEnd{.reason = "finished",
                                             .claimed_length_us = std::nullopt,
                                             .ended_unix_us = start_unix_us + t_us + 49'500}});
        groups.push_back(std::move(group));
    }
    return groups;
}

EventGroups regroup(const EventGroups& groups, size_t size) {
    EventGroups out;
    std::vector<MatchEvent> current;
    for (const auto& group : groups)
        for (const auto& event : group) {
            current.push_back(event);
            if (current.size() == size) out.push_back(std::exchange(current, {}));
        }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
}

std::vector<std::vector<uint8_t>> encode(const EventGroups& groups, const std::string& relay_id,
                                         uint64_t match_id) {
    BatchBuilder builder(relay_id, match_id);
    std::vector<std::vector<uint8_t>> batches;
    for (const auto& group : groups) {
        for (const auto& event : group)
            std::visit(
                [&](const auto& body) { builder.add(event.t_us, event.tick, event.player, body); },
                event.body);
        batches.push_back(builder.finish());
    }
    return batches;
}

}  // namespace arbiter::samples
