#include "clock_area.hpp"

#include <algorithm>
#include <string>

namespace arbiter::reference {

ClockArea::ClockArea(const ConfigTable& config) {
    ConfigTable clock = config.table("clock");
    ClockLimits& c = limits_;
    c.tick_rate_hz = clock.number("tick_rate_hz", c.tick_rate_hz, Range::between(0.1, 10000.0));
    c.ahead_ticks = clock.integer("ahead_ticks", c.ahead_ticks, Range::between(0, 100000));
    c.confident_count =
        clock.integer("confident_count", c.confident_count, Range::between(1, 1000));
    c.max_rate = clock.number("max_rate", c.max_rate, Range{1.0, 10.0, true});
    c.rate_window_s = clock.number("rate_window_s", c.rate_window_s, Range::between(1.0, 3600.0));
    c.rate_step_s = clock.number("rate_step_s", c.rate_step_s, Range::between(0.5, 600.0));
    // The trend is judged when a step closes, and its closed points then span at most the
    // window less two steps: a minimum beyond that would never be reached. Unset, the
    // minimum is 30 s or what the window allows (a config written for the 30 s window of
    // before stays valid and keeps its check).
    const double most = c.rate_window_s - 2 * c.rate_step_s;
    const bool explicit_minimum = clock.has("rate_min_window_s");
    c.rate_min_window_s = clock.number("rate_min_window_s", std::min(c.rate_min_window_s, most),
                                       Range::between(1.0, 3600.0));
    if (c.rate_min_window_s > most || c.rate_min_window_s < 2 * c.rate_step_s)
        throw ConfigError(
            clock.path() + (explicit_minimum ? ".rate_min_window_s" : ".rate_window_s"),
            "expected rate_min_window_s between two steps (" + std::to_string(2 * c.rate_step_s) +
                " s) and rate_window_s less two "
                "steps (" +
                std::to_string(most) + " s), so that the rate is ever judged");
    c.max_lag_allowance_s =
        clock.number("max_lag_allowance_s", c.max_lag_allowance_s, Range::between(0.0, 10.0));
    c.run_length_leeway_s =
        clock.number("run_length_leeway_s", c.run_length_leeway_s, Range::at_least(0.0));
}

double ClockArea::tick_s(const Match& match) const {
    return match.tick_s > 0 ? match.tick_s : 1.0 / limits_.tick_rate_hz;
}

void ClockArea::on_match_start(const fb::MatchStart& start, Match& match) const {
    if (const float hz = start.tick_rate_hz(); hz > 0) match.tick_s = 1.0 / static_cast<double>(hz);
    match.started_unix_us = start.started_unix_us();
}

void ClockArea::on_order(const fb::Event& event, Player& player, Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::Order& order = *event.body_as_Order();
    if (auto claimed = order.claimed_tick(); claimed.has_value()) {
        if (auto ahead = check_tick_ahead(event.tick(), *claimed, limits_)) {
            ++player.ahead_orders;
            out.report(
                {.player = id,
                 .code = "clock.tick_ahead",
                 .score = ahead->score,
                 .confidence = count_confidence(player.ahead_orders, limits_.confident_count),
                 .evidence = Evidence()
                                 .add("ahead_ticks", ahead->value)
                                 .add("allowed_ticks", ahead->limit)
                                 .add("relay_tick", event.tick())
                                 .add("claimed_tick", *claimed)
                                 .add("orders_ahead", player.ahead_orders)
                                 .add("t_us", t_us)});
        }
    }
    if (auto client = order.client_time_us(); client.has_value()) {
        // Judged when a step of the trend closes.
        const auto rate = add_to_clock_trend(player.trend.get(), {t_us, *client}, limits_)
                              ? check_clock_rate(player.trend.view(), limits_)
                              : std::nullopt;
        if (rate) {
            out.report({.player = id,
                        .code = "clock.rate",
                        .score = rate->score,
                        .confidence = 0.9,
                        .evidence = Evidence()
                                        .add("rate", rate->rate)
                                        .add("limit", limits_.max_rate)
                                        .add("median_rate", rate->median)
                                        .add("steps", static_cast<uint64_t>(rate->steps))
                                        .add("step_s", limits_.rate_step_s)
                                        .add("slowest_step_rate", rate->slowest)
                                        .add("fastest_step_rate", rate->fastest)
                                        .add("client_s", rate->client_s)
                                        .add("relay_s", rate->relay_s)
                                        .add("first_t_us", rate->first.relay_us)
                                        .add("last_t_us", rate->last.relay_us)});
        }
    }
}

std::optional<Signal> ClockArea::check_run_length(const fb::Event& event, const Match& match,
                                                  uint32_t runner) const {
    const fb::MatchEnd& end = *event.body_as_MatchEnd();
    const auto claimed = end.claimed_length_us();
    if (!claimed.has_value() || match.started_unix_us < 0 || runner == 0) return std::nullopt;
    auto run =
        reference::check_run_length(match.started_unix_us, end.ended_unix_us(), *claimed, limits_);
    if (!run) return std::nullopt;
    return Signal{.player = runner,
                  .code = "clock.run_length",
                  .score = run->score,
                  .confidence = 0.95,
                  .evidence = Evidence()
                                  .add("claimed_s", run->claimed_s)
                                  .add("relay_s", run->relay_s)
                                  .add("short_s", run->short_s)
                                  .add("leeway_s", limits_.run_length_leeway_s)
                                  .add("started_unix_us", match.started_unix_us)
                                  .add("ended_unix_us", end.ended_unix_us())};
}

void ClockArea::on_input_lost(Player& player) const {
    player.trend.reset();
}

void ClockArea::save_player(StateWriter& out, const Player& player) const {
    out.put<int64_t>(player.ahead_orders);
    const Ring<ClockSample>& trend = player.trend.view();
    out.put<uint64_t>(trend.size());
    for (const ClockSample& c : trend) {
        out.put<int64_t>(c.relay_us);
        out.put<int64_t>(c.client_us);
    }
}

void ClockArea::restore_player(StateReader& in, Player& player) const {
    player.ahead_orders = in.get_counter("ahead-of-tick order");
    // Raw samples (before the trend) or the trend's points: either way, added to the trend
    // as they come they give its points.
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        ClockSample c;
        c.relay_us = in.get_relay_time("clock sample time");
        c.client_us = in.get<int64_t>();
        add_to_clock_trend(player.trend.get(), c, limits_);
    }
}

void ClockArea::save_match(StateWriter& out, const Match& match) const {
    out.put<double>(match.tick_s);
    out.put<int64_t>(match.started_unix_us);
}

void ClockArea::restore_match(StateReader& in, Match& match) const {
    match.tick_s = in.get_finite("tick length");
    if (match.tick_s < 0) throw StateError("state blob has a negative tick length");
    match.started_unix_us = in.get_relay_time("match start");
}

}  // namespace arbiter::reference
