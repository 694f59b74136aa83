// Builds the matches the analyzer tests feed: a player's true movement at 20 Hz, then what
// the network did to it (a lag spike and its burst, lost updates, jitter), then the events
// as the relay received them, cut into batches.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/config_builder.hpp>
#include <arbiter/sdk/testing.hpp>

#include "movement.hpp"
#include "reference_analyzer.hpp"

namespace arbiter::reference::test {

inline constexpr int64_t kTickUs = 50'000;  // a 20 Hz relay
inline constexpr int64_t kSecondUs = 1'000'000;

inline int64_t us(double seconds) {
    return std::llround(seconds * 1e6);
}

using Harness = arbiter::testing::Harness<ReferenceAnalyzer>;
using RecordedSignal = arbiter::testing::RecordedSignal;
using Signals = std::vector<RecordedSignal>;
using Batches = std::vector<std::vector<uint8_t>>;

// One position update: where the client was when it sent it, and when the relay got it.
struct Update {
    int64_t sent_us = 0;
    int64_t received_us = 0;
    Vec3 position;
    bool server_teleport = false;
    // The server's view of the ground, where it reports one (see Mover::report_ground).
    std::optional<bool> on_ground = std::nullopt;
    std::optional<double> ground_height = std::nullopt;
};

// A player's true movement, one update per tick, each received the moment it is sent
// (the network is applied afterwards, by the functions below).
class Mover {
  public:
    static constexpr double kGravity = 9.81;

    explicit Mover(Vec3 start = {}, double start_s = 0.0) : position_(start), t_us_(us(start_s)) {
        updates_.push_back({t_us_, t_us_, position_, false});
    }

    // From now on every update carries the server's on_ground flag (true unless the mover is
    // off the ground) and the ground height under it, flat at ground_height (z is where the
    // feet are: on the ground, z equals it). The current update gets them too.
    Mover& report_ground(double ground_height = 0.0) {
        ground_ = ground_height;
        updates_.back().on_ground = !airborne_;
        updates_.back().ground_height = ground_;
        return *this;
    }

    // Moves along +x at speed_mps for `seconds`.
    Mover& run(double speed_mps, double seconds) {
        const int64_t ticks = us(seconds) / kTickUs;
        for (int64_t i = 0; i < ticks; ++i)
            step({speed_mps * 0.05, 0, 0}, false);
        return *this;
    }

    // A jump from the ground at vz_mps while running along +x: off the ground until gravity
    // brings it back (4.5 m/s: 0.92 s, 19 updates), then one update on the ground.
    Mover& hop(double speed_mps, double vz_mps = 4.5) {
        const double ground = ground_.value_or(0.0);
        double z = position_.z, vz = vz_mps;
        airborne_ = true;
        for (;;) {
            z += vz * 0.05;
            vz -= kGravity * 0.05;
            if (z <= ground) break;
            step({speed_mps * 0.05, 0, z - position_.z}, false);
        }
        airborne_ = false;
        step({speed_mps * 0.05, 0, ground - position_.z}, false);
        return *this;
    }

    // Off the ground for `seconds` while running along +x: climbs (or sinks) at 4 m/s to
    // height_m above the ground (negative: under it), and stays there.
    Mover& fly(double speed_mps, double height_m, double seconds) {
        const double target = ground_.value_or(0.0) + height_m;
        airborne_ = true;
        const int64_t ticks = us(seconds) / kTickUs;
        for (int64_t i = 0; i < ticks; ++i) {
            const double dz = std::clamp(target - position_.z, -0.2, 0.2);
            step({speed_mps * 0.05, 0, dz}, false);
        }
        return *this;
    }

    // Back on the ground at once (the end of a flight, or out of the terrain).
    Mover& land() {
        airborne_ = false;
        step({0, 0, ground_.value_or(0.0) - position_.z}, false);
        return *this;
    }

    // The next update lands `offset` from the last one, whatever the speed.
    Mover& jump(Vec3 offset) {
        step(offset, false);
        return *this;
    }

    Mover& server_teleport(Vec3 offset) {
        step(offset, true);
        return *this;
    }

    const std::vector<Update>& updates() const { return updates_; }
    double now_s() const { return static_cast<double>(t_us_) / 1e6; }

  private:
    void step(Vec3 delta, bool teleport) {
        t_us_ += kTickUs;
        position_ = {position_.x + delta.x, position_.y + delta.y, position_.z + delta.z};
        updates_.push_back({t_us_, t_us_, position_, teleport});
        if (ground_) {
            updates_.back().on_ground = !airborne_;
            updates_.back().ground_height = ground_;
        }
    }

    std::vector<Update> updates_;
    std::optional<double> ground_;  // reported from report_ground on
    bool airborne_ = false;
    Vec3 position_;
    int64_t t_us_;
};

// A lag spike: the relay hears nothing for `silence_s` after `from_s`, then every update
// sent meanwhile arrives in one burst, `spacing_us` apart.
inline std::vector<Update> lag_spike(std::vector<Update> updates, double from_s, double silence_s,
                                     int64_t spacing_us = 300) {
    const int64_t from = us(from_s), until = us(from_s + silence_s);
    int64_t next = until;
    for (Update& u : updates) {
        if (u.sent_us > from && u.sent_us <= until) {
            u.received_us = next;
            next += spacing_us;
        }
    }
    return updates;
}

// A late update: the relay hears nothing for `silence_s` after `from_s`, then gets the
// first update sent meanwhile (its position as old as the silence is long); the others it
// held back are lost.
inline std::vector<Update> late_update(const std::vector<Update>& updates, double from_s,
                                       double silence_s) {
    std::vector<Update> kept;
    bool first = true;
    for (const Update& u : lag_spike(updates, from_s, silence_s)) {
        const bool held_back = u.received_us != u.sent_us;
        if (held_back && !first) continue;
        if (held_back) first = false;
        kept.push_back(u);
    }
    return kept;
}

// Loses `percent` of the updates sent in [from_s, to_s), in a fixed scattered pattern
// that sometimes loses two in a row.
inline std::vector<Update> lose(const std::vector<Update>& updates, double from_s, double to_s,
                                int percent) {
    std::vector<Update> kept;
    int64_t index = 0;
    for (const Update& u : updates) {
        if (u.sent_us >= us(from_s) && u.sent_us < us(to_s)) {
            // 13 is coprime with 100: over any 100 updates this loses exactly `percent`.
            if ((index++ * 13) % 100 < percent) continue;
        }
        kept.push_back(u);
    }
    return kept;
}

// Delays each receipt by up to max_us in a fixed pattern; under a tick, so order holds.
inline std::vector<Update> jitter(std::vector<Update> updates, int64_t max_us) {
    int64_t index = 0;
    for (Update& u : updates)
        u.received_us += (index++ * 7919) % (max_us + 1);
    return updates;
}

// The events of one match, as the relay received them.
class MatchScript {
  public:
    explicit MatchScript(std::string relay_id = "test-relay", uint64_t match_id = 1)
        : relay_id_(std::move(relay_id)), match_id_(match_id) {}

    MatchScript& add(uint32_t player, std::span<const Update> updates) {
        for (const Update& u : updates) {
            build::Position body{
                .position = {static_cast<float>(u.position.x), static_cast<float>(u.position.y),
                             static_cast<float>(u.position.z)},
                .server_teleport = u.server_teleport};
            body.on_ground = u.on_ground;
            if (u.ground_height) body.ground_height = static_cast<float>(*u.ground_height);
            events_.push_back({u.received_us, player, Kind::position, body, 0});
        }
        return *this;
    }
    MatchScript& add(uint32_t player, const Mover& mover) { return add(player, mover.updates()); }

    MatchScript& latency(uint32_t player, double at_s, uint32_t rtt_us) {
        events_.push_back({us(at_s), player, Kind::latency, {}, rtt_us});
        return *this;
    }

    // A measured round trip of rtt_us every second in [from_s, to_s).
    MatchScript& latencies(uint32_t player, double from_s, double to_s, uint32_t rtt_us) {
        for (int64_t t = us(from_s); t < us(to_s); t += kSecondUs)
            events_.push_back({t + 1, player, Kind::latency, {}, rtt_us});
        return *this;
    }

    MatchScript& leave(uint32_t player, double at_s) {
        events_.push_back({us(at_s), player, Kind::leave, {}, 0});
        return *this;
    }

    // The events in relay-time order (ties in the order added), one batch per batch_s of
    // relay time.
    Batches batches(double batch_s = 0.25) const {
        std::vector<Event> events = events_;
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
        BatchBuilder builder(relay_id_, match_id_);
        Batches out;
        const int64_t batch_us = us(batch_s);
        int64_t current = events.empty() ? 0 : events.front().t_us / batch_us;
        for (const Event& e : events) {
            if (e.t_us / batch_us != current && builder.event_count() > 0) {
                out.push_back(builder.finish());
            }
            current = e.t_us / batch_us;
            const auto tick = static_cast<uint64_t>(e.t_us / kTickUs);
            switch (e.kind) {
                case Kind::position:
                    builder.add(e.t_us, tick, e.player, e.position);
                    break;
                case Kind::latency:
                    builder.add(e.t_us, tick, e.player, build::Latency{.rtt_us = e.rtt_us});
                    break;
                case Kind::leave:
                    builder.add(e.t_us, tick, e.player, build::PlayerLeave{});
                    break;
            }
        }
        if (builder.event_count() > 0) out.push_back(builder.finish());
        return out;
    }

    const std::string& relay_id() const { return relay_id_; }
    uint64_t match_id() const { return match_id_; }

  private:
    enum class Kind { position, latency, leave };
    struct Event {
        int64_t t_us;
        uint32_t player;
        Kind kind;
        build::Position position;  // for Kind::position
        uint32_t rtt_us;           // for Kind::latency
    };

    std::string relay_id_;
    uint64_t match_id_;
    std::vector<Event> events_;
};

// Any analyzer's harness: the accounts plugin's tests feed theirs too.
template <class AnyHarness>
Signals feed_all(AnyHarness& harness, const Batches& batches) {
    Signals out;
    for (const auto& batch : batches) {
        auto signals = harness.feed(batch);
        out.insert(out.end(), signals.begin(), signals.end());
    }
    return out;
}

// Runs a whole match through a fresh analyzer with `config`.
inline Signals run_match(const MatchScript& script,
                         const ConfigValue& config = ConfigValue::table({})) {
    Harness harness(config);
    if (!harness.ok()) throw std::runtime_error("create failed: " + harness.error());
    Signals signals = feed_all(harness, script.batches());
    if (harness.dropped() != 0) throw std::runtime_error("the analyzer emitted malformed signals");
    return signals;
}

// A whole match through a fresh analyzer, then its end: what it reported during the match,
// and what it reported when the match ended.
struct Ended {
    Signals during;
    Signals at_end;

    Signals all() const {
        Signals out = during;
        out.insert(out.end(), at_end.begin(), at_end.end());
        return out;
    }
};

inline Ended run_match_to_end(const MatchScript& script,
                              const ConfigValue& config = ConfigValue::table({})) {
    Harness harness(config);
    if (!harness.ok()) throw std::runtime_error("create failed: " + harness.error());
    Ended out;
    out.during = feed_all(harness, script.batches());
    out.at_end = harness.end_match(script.relay_id(), script.match_id());
    if (harness.dropped() != 0) throw std::runtime_error("the analyzer emitted malformed signals");
    return out;
}

inline Signals only(const Signals& signals, uint32_t player, std::string_view code) {
    Signals out;
    for (const auto& s : signals)
        if (s.player == player && s.code == code) out.push_back(s);
    return out;
}

inline double max_score(const Signals& signals) {
    double best = 0.0;
    for (const auto& s : signals)
        best = std::max(best, s.score);
    return best;
}

// The plugin's config with these members in its [movement] table.
inline ConfigValue movement_config(ConfigValue::Table members) {
    return ConfigValue::table({{"movement", ConfigValue::table(std::move(members))}});
}

}  // namespace arbiter::reference::test
