#include "order_rate.hpp"

#include <algorithm>

namespace order_rate {

Settings Settings::parse(const arbiter::ConfigTable& config) {
    Settings s;
    s.max_per_second = config.number("max_per_second", s.max_per_second, arbiter::Range::positive());
    s.window_s = config.number("window_s", s.window_s, arbiter::Range::between(0.5, 600));
    s.count_repeats = config.boolean("count_repeats", s.count_repeats);
    // A misspelt key is an error, never silently ignored.
    config.reject_unknown_keys();
    return s;
}

OrderRate::OrderRate(const arbiter::Context& context)
    : Analyzer(context), settings_(Settings::parse(context.config)) {}

void OrderRate::configure(const arbiter::Context& context) {
    // Parse first: if the new config is bad this throws and nothing changes.
    settings_ = Settings::parse(context.config);
}

void OrderRate::on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) {
    auto& players = matches_[batch.match()];
    const auto window_us = static_cast<int64_t>(settings_.window_s * 1e6);
    for (const arbiter::fb::Event* event : batch.events()) {
        const auto* order = event->body_as_Order();
        if (!order || event->player() == 0) continue;
        if (order->repeat() && !settings_.count_repeats) continue;

        // The relay's receive time decides, never a time the client claims.
        const int64_t now = event->relay_time_us();
        Player& player = players[event->player()];
        player.order_times_us.push_back(now);
        while (!player.order_times_us.empty() && player.order_times_us.front() <= now - window_us)
            player.order_times_us.pop_front();

        const double rate = static_cast<double>(player.order_times_us.size()) / settings_.window_s;
        if (rate <= settings_.max_per_second) continue;
        // 0 at the limit, 1 at twice the limit.
        const double score = std::min(1.0, rate / settings_.max_per_second - 1.0);
        // Report a check again only when it gets clearly worse (or reaches the top), so a
        // bot does not flood the host.
        const bool reached_top = score >= 1.0 && player.reported < 1.0;
        if (score < player.reported + 0.05 && !reached_top) continue;
        player.reported = score;
        signals.emit({.player = event->player(),
                      .code = "order_rate.sustained",
                      .score = score,
                      .confidence = 1.0,
                      .evidence = arbiter::Evidence()
                                      .add("orders_per_second", rate)
                                      .add("limit_per_second", settings_.max_per_second)
                                      .add("window_s", settings_.window_s)
                                      .add("orders_in_window", player.order_times_us.size())
                                      .add("at_relay_us", now)});
        host().count("signals");
    }
}

void OrderRate::on_match_end(const arbiter::MatchKey& match, arbiter::Signals&) { matches_.erase(match); }

std::vector<uint8_t> OrderRate::save_state() {
    // A sealed, versioned blob: a newer version of this plugin can read it, and a
    // damaged one is refused before anything is read.
    arbiter::StateWriter out("ORD1", 1);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, players] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        out.put<uint64_t>(players.size());
        for (const auto& [id, player] : players) {
            out.put<uint32_t>(id);
            out.put<double>(player.reported);
            out.put<uint64_t>(player.order_times_us.size());
            for (int64_t t : player.order_times_us) out.put<int64_t>(t);
        }
    }
    return out.finish();
}

void OrderRate::restore_state(std::span<const uint8_t> blob) {
    arbiter::StateReader in(blob, "ORD1", 1);
    decltype(matches_) matches;
    for (uint64_t m = in.get_count(16); m > 0; --m) {
        arbiter::MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        auto& players = matches[key];
        for (uint64_t p = in.get_count(20); p > 0; --p) {
            Player& player = players[in.get<uint32_t>()];
            player.reported = in.get<double>();
            for (uint64_t t = in.get_count(8); t > 0; --t) player.order_times_us.push_back(in.get<int64_t>());
        }
    }
    in.finish();
    matches_ = std::move(matches);  // only a blob read whole replaces the state
}

}  // namespace order_rate
