// order-rate: a player who sends more orders per second than the game allows, over a
// sliding window of relay time. A small, complete analyzer to copy from: config with
// checked keys, per-match state, signals with evidence, state kept across reloads.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <vector>

#include <arbiter/sdk.hpp>

namespace order_rate {

struct Settings {
    double max_per_second = 10.0;  // the most orders per second a player can give
    double window_s = 5.0;         // relay time the rate is measured over
    bool count_repeats = false;    // count a held key's repeats as orders

    // Reads [plugins.NAME.config]; a bad value throws arbiter::ConfigError naming the key.
    static Settings parse(const arbiter::ConfigTable& config);
};

class OrderRate final : public arbiter::Analyzer {
public:
    // What the host shows in `arbiter plugins` and logs.
    static constexpr arbiter::PluginInfo info{
        .name = "order-rate",
        .version = "1.0.0",
        .contact = "you@example.org",
        .description = "orders per second over a sliding window of relay time",
        .model_class = arbiter::ModelClass::behavioural,
        .shard_by_match = true,  // no state crosses matches
    };

    explicit OrderRate(const arbiter::Context& context);

    // Required: one batch of one match, in order.
    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override;

    // Optional members; the SDK sets a capability bit for each one present.
    void on_match_end(const arbiter::MatchKey& match, arbiter::Signals& signals);
    void configure(const arbiter::Context& context);
    std::vector<uint8_t> save_state();
    void restore_state(std::span<const uint8_t> blob);

private:
    struct Player {
        std::deque<int64_t> order_times_us;  // relay receive times within the window
        double reported = 0.0;               // the highest score reported so far
    };

    Settings settings_;
    std::map<arbiter::MatchKey, std::map<uint32_t, Player>> matches_;
};

}  // namespace order_rate
