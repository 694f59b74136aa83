#include "match_script.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace lagpool_test {

namespace {
double uniform(std::mt19937& random) {
    return static_cast<double>(random()) / 4294967296.0;
}
}  // namespace

void Timeline::add(int64_t t_us, uint32_t player, Body body) {
    events_.push_back({t_us, player, std::move(body)});
}

void Timeline::sort() {
    std::stable_sort(events_.begin(), events_.end(),
                     [](const TimedEvent& a, const TimedEvent& b) { return a.t_us < b.t_us; });
}

void Timeline::stall(int64_t start_us, int64_t length_us) {
    sort();
    const int64_t end_us = start_us + length_us;
    constexpr int64_t kSpacingUs = 10;
    std::vector<TimedEvent> kept, held;
    for (auto& event : events_) {
        // The burst takes time to deliver; what arrives while it lasts queues behind it.
        const int64_t burst_end_us = end_us + 100 + static_cast<int64_t>(held.size()) * kSpacingUs;
        if (event.t_us < start_us || event.t_us >= burst_end_us) {
            kept.push_back(std::move(event));
        } else if (event.t_us >= end_us ||
                   !std::holds_alternative<build::TickBoundary>(event.body)) {
            held.push_back(std::move(event));
        }
    }
    kept.push_back(
        {end_us, 0, build::TickBoundary{.tick_lag_us = static_cast<uint32_t>(length_us)}});
    for (size_t i = 0; i < held.size(); ++i) {
        held[i].t_us = end_us + 100 + static_cast<int64_t>(i) * kSpacingUs;
        kept.push_back(std::move(held[i]));
    }
    events_ = std::move(kept);
    sort();
}

void Timeline::forget_tick_lag() {
    for (auto& event : events_)
        if (auto* tick = std::get_if<build::TickBoundary>(&event.body)) tick->tick_lag_us = 0;
}

std::vector<std::vector<uint8_t>> Timeline::batches(size_t events_per_batch,
                                                    const std::string& relay,
                                                    uint64_t match_id) const {
    std::vector<TimedEvent> sorted = events_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const TimedEvent& a, const TimedEvent& b) { return a.t_us < b.t_us; });
    arbiter::BatchBuilder builder(relay, match_id);
    std::vector<std::vector<uint8_t>> out;
    for (const auto& event : sorted) {
        const auto tick = static_cast<uint64_t>(std::max<int64_t>(event.t_us, 0) / kTickUs);
        std::visit([&](const auto& body) { builder.add(event.t_us, tick, event.player, body); },
                   event.body);
        if (builder.event_count() >= events_per_batch) out.push_back(builder.finish());
    }
    if (builder.event_count() > 0) out.push_back(builder.finish());
    return out;
}

void add_runner(Timeline& timeline, const Runner& r) {
    std::mt19937 random(r.seed);
    double x = r.x, y = r.y, heading = r.heading;
    std::vector<std::vector<build::Position>> held(r.spikes.size());
    size_t next_teleport = 0;
    int tick_index = 0;
    for (int64_t t = r.from_us + kTickUs; t <= r.to_us; t += kTickUs, ++tick_index) {
        const double t_s = static_cast<double>(t) / 1e6;
        if (tick_index % r.turn_every_ticks == 0) heading += (uniform(random) - 0.5) * 3.14159;
        const double step = r.speed(t_s) * static_cast<double>(kTickUs) / 1e6;
        x += std::cos(heading) * step;
        y += std::sin(heading) * step;
        double z = 0;
        if (r.jumps) {  // up at 5.05 m/s against gravity: 1.3 m high, 1.03 s in the air
            const double phase = std::fmod(t_s, 2.0);
            z = std::max(0.0, 5.05 * phase - 4.905 * phase * phase);
        }
        bool teleport = false;
        if (next_teleport < r.server_teleports.size() && t >= r.server_teleports[next_teleport]) {
            x += 300;
            teleport = true;
            ++next_teleport;
        }
        build::Position update{
            .position = {static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)},
            .server_teleport = teleport};
        const int64_t receive_us =
            t + static_cast<int64_t>(uniform(random) * static_cast<double>(r.jitter_us));
        const bool lost = uniform(random) < r.packet_loss && !teleport;

        bool in_spike = false;
        for (size_t i = 0; i < r.spikes.size(); ++i) {
            // An update that would arrive while the burst is still coming queues behind it.
            const int64_t burst_end_us =
                r.spikes[i].second + static_cast<int64_t>(held[i].size()) * 300;
            if (receive_us >= r.spikes[i].first && receive_us < burst_end_us) {
                held[i].push_back(update);
                in_spike = true;
            }
        }
        if (!in_spike && !lost) timeline.add(receive_us, r.player, update);
    }
    // The bursts: everything held back arrives 300 us apart when its spike ends.
    for (size_t i = 0; i < r.spikes.size(); ++i)
        for (size_t k = 0; k < held[i].size(); ++k)
            timeline.add(r.spikes[i].second + static_cast<int64_t>(k) * 300, r.player, held[i][k]);
}

void add_actor(Timeline& timeline, const Actor& a) {
    std::mt19937 random(a.seed);
    for (int64_t t = a.from_us; t <= a.to_us; t += a.interval_us) {
        const int64_t at =
            t + static_cast<int64_t>(uniform(random) * static_cast<double>(a.jitter_us));
        for (int i = 0; i < a.burst; ++i) {
            timeline.add(at + i, a.player, build::Order{.kind = a.kind});
            if (!a.stat.empty())
                timeline.add(at + i, a.player, build::Stat{.stat = a.stat, .delta = a.stated_s});
        }
    }
}

void add_match_frame(Timeline& timeline, const std::vector<uint32_t>& players, int64_t length_us,
                     uint32_t max_noise_us, uint32_t seed) {
    std::mt19937 random(seed);
    timeline.add(
        0, 0,
        build::MatchStart{.game = "minetest", .map = "valley", .rules = "survival", .rated = true});
    for (uint32_t id : players) {
        build::PlayerJoin join;
        join.account_id = "player" + std::to_string(id);
        timeline.add(10 + id, id, join);
    }
    for (int64_t t = kTickUs; t <= length_us; t += kTickUs)
        timeline.add(t + 49'000, 0,
                     build::TickBoundary{
                         .tick_lag_us = static_cast<uint32_t>(uniform(random) * max_noise_us)});
    timeline.add(length_us + 49'500, 0, build::MatchEnd{.reason = "finished"});
}

}  // namespace lagpool_test
