#include "clock.hpp"

#include "movement.hpp"

namespace arbiter::reference {

std::optional<Excess> check_tick_ahead(uint64_t relay_tick, uint64_t claimed_tick,
                                       const ClockLimits& limits) {
    if (claimed_tick <= relay_tick) return std::nullopt;
    const auto ahead = static_cast<double>(claimed_tick - relay_tick);
    const auto allowed = static_cast<double>(limits.ahead_ticks);
    if (ahead <= allowed) return std::nullopt;
    // One tick past the allowance already scores high: no lag makes an order early.
    return Excess{ahead, allowed, excess_score(ahead + 1.0, allowed + 1.0)};
}

std::optional<ClockRateMeasure> check_clock_rate(const std::deque<ClockSample>& samples,
                                                 double allowance_s, const ClockLimits& limits) {
    if (samples.size() < 2) return std::nullopt;
    const ClockSample& last = samples.back();
    const int64_t window_us = static_cast<int64_t>(limits.rate_window_s * 1e6);
    const ClockSample* first = &last;
    for (auto it = samples.rbegin();
         it != samples.rend() && it->relay_us >= last.relay_us - window_us; ++it)
        first = &*it;
    ClockRateMeasure m;
    m.first = *first;
    m.last = last;
    m.relay_s = static_cast<double>(last.relay_us - first->relay_us) / 1e6;
    if (m.relay_s < limits.rate_min_window_s) return std::nullopt;
    // Client times are what the client claims, unbounded (ingest bounds relay times
    // only): subtracted as doubles, so that INT64_MIN then INT64_MAX cannot overflow.
    m.client_s =
        (static_cast<double>(last.client_us) - static_cast<double>(first->client_us)) / 1e6;
    m.allowance_s = allowance_s;
    m.rate = m.client_s / (m.relay_s + allowance_s);
    if (!(m.rate > limits.max_rate)) return std::nullopt;
    // Scored on the drift, not the ratio: 1.06 against 1.05 is a fifth past the limit.
    m.score = excess_score(m.rate - 1.0, limits.max_rate - 1.0);
    return m;
}

std::optional<RunLengthMeasure> check_run_length(int64_t started_unix_us, int64_t ended_unix_us,
                                                 int64_t claimed_length_us,
                                                 const ClockLimits& limits) {
    RunLengthMeasure m;
    m.relay_s = static_cast<double>(ended_unix_us - started_unix_us) / 1e6;
    m.claimed_s = static_cast<double>(claimed_length_us) / 1e6;
    m.short_s = m.relay_s - m.claimed_s;
    if (!(m.short_s > limits.run_length_leeway_s)) return std::nullopt;
    m.score = excess_score(m.short_s, limits.run_length_leeway_s);
    return m;
}

}  // namespace arbiter::reference
