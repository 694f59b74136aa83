// Builds matches of any kind of event for the analyzer tests of hits, items, stats,
// sessions and the clock: each event at a relay time (and by default the tick open then),
// sorted by relay time and cut into batches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/config_builder.hpp>

#include "match_script.hpp"

namespace arbiter::reference::test {

class EventScript {
  public:
    explicit EventScript(std::string relay_id = "test-relay", uint64_t match_id = 1)
        : relay_id_(std::move(relay_id)), match_id_(match_id) {}

    // One event at t_s seconds of relay time; tick: the relay tick, by default the one open.
    template <class E>
    EventScript& at(double t_s, uint32_t player, E body,
                    std::optional<uint64_t> tick = std::nullopt) {
        const int64_t t = us(t_s);
        const uint64_t k = tick.value_or(static_cast<uint64_t>(t / kTickUs));
        events_.push_back({t, [=](BatchBuilder& b) { b.add(t, k, player, body); }});
        return *this;
    }

    Batches batches(double batch_s = 0.25) const {
        std::vector<Event> events = events_;
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
        BatchBuilder builder(relay_id_, match_id_);
        Batches out;
        const int64_t batch_us = us(batch_s);
        int64_t current = events.empty() ? 0 : events.front().t_us / batch_us;
        for (const Event& e : events) {
            if (e.t_us / batch_us != current && builder.event_count() > 0)
                out.push_back(builder.finish());
            current = e.t_us / batch_us;
            e.add(builder);
        }
        if (builder.event_count() > 0) out.push_back(builder.finish());
        return out;
    }

    const std::string& relay_id() const { return relay_id_; }
    uint64_t match_id() const { return match_id_; }

  private:
    struct Event {
        int64_t t_us;
        std::function<void(BatchBuilder&)> add;
    };
    std::string relay_id_;
    uint64_t match_id_;
    std::vector<Event> events_;
};

// A match start at tick_rate_hz and the relay's wall clock `started_unix_us`.
inline build::MatchStart match_start(float tick_rate_hz, int64_t started_unix_us) {
    build::MatchStart m;
    m.tick_rate_hz = tick_rate_hz;
    m.started_unix_us = started_unix_us;
    return m;
}

inline build::PlayerJoin player_join(std::string account, bool reconnect = false,
                                     std::string version = "1.4.2",
                                     std::string handshake = "arena/7", uint64_t address = 42) {
    build::PlayerJoin j;
    j.account_id = std::move(account);
    j.client_version = std::move(version);
    j.handshake = std::move(handshake);
    j.address_hash = address;
    j.reconnect = reconnect;
    return j;
}

// Runs a whole match through a fresh analyzer, then ends it: every signal.
inline Signals run_events(const EventScript& script,
                          const ConfigValue& config = ConfigValue::table({})) {
    Harness harness(config);
    if (!harness.ok()) throw std::runtime_error("create failed: " + harness.error());
    Signals out = feed_all(harness, script.batches());
    const Signals at_end = harness.end_match(script.relay_id(), script.match_id());
    out.insert(out.end(), at_end.begin(), at_end.end());
    if (harness.dropped() != 0) throw std::runtime_error("the analyzer emitted malformed signals");
    return out;
}

// The plugin's config with these members in the sub-table `area`.
inline ConfigValue area_config(const std::string& area, ConfigValue::Table members) {
    return ConfigValue::table({{area, ConfigValue::table(std::move(members))}});
}

// The [hits] table with the simulator's two weapons.
inline ConfigValue::Table weapons_table() {
    return {
        {"pistol", ConfigValue::table(
                       {{"range_m", 40.0}, {"rounds_per_minute", 240.0}, {"max_damage", 18.0}})},
        {"rifle",
         ConfigValue::table({{"range_m", 80.0}, {"fire_interval_s", 0.1}, {"max_damage", 12.0}})}};
}

inline std::string codes(const Signals& signals) {
    std::string out;
    for (const auto& s : signals)
        out += std::to_string(s.player) + " " + s.code + " " + std::to_string(s.score) + " " +
               std::to_string(s.confidence) + " " + s.evidence + "\n";
    return out;
}

}  // namespace arbiter::reference::test
