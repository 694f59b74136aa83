#include "clock.hpp"

#include <algorithm>
#include <vector>

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

namespace {

// Relay time minus client time: latency plus the clocks' offset. Client times are what the
// client claims, unbounded (ingest bounds relay times only): taken as doubles, so that
// INT64_MIN then INT64_MAX cannot overflow.
double delay_of(const ClockSample& s) {
    return static_cast<double>(s.relay_us) - static_cast<double>(s.client_us);
}

int64_t step_of(int64_t relay_us, int64_t step_us) {
    // Floor division: relay times may be negative.
    return relay_us >= 0 ? relay_us / step_us : -((-relay_us + step_us - 1) / step_us);
}

}  // namespace

bool add_to_clock_trend(Ring<ClockSample>& trend, ClockSample sample, const ClockLimits& limits) {
    const auto step_us = std::max<int64_t>(1, static_cast<int64_t>(limits.rate_step_s * 1e6));
    bool closed = false;
    if (!trend.empty() &&
        step_of(trend.back().relay_us, step_us) == step_of(sample.relay_us, step_us)) {
        if (delay_of(sample) < delay_of(trend.back())) trend.back() = sample;
    } else {
        closed = !trend.empty();
        trend.push_back(sample);
    }
    const auto window_us = static_cast<int64_t>(limits.rate_window_s * 1e6);
    while (!trend.empty() && trend.front().relay_us < sample.relay_us - window_us)
        trend.pop_front();
    return closed;
}

std::optional<ClockRateMeasure> check_clock_rate(const Ring<ClockSample>& trend,
                                                 const ClockLimits& limits) {
    if (trend.size() < 3) return std::nullopt;  // two closed steps at least
    const Ring<ClockSample>& points = trend;
    const size_t closed = points.size() - 1;  // the last step is still open
    ClockRateMeasure m;
    m.first = points.front();
    m.last = points[closed - 1];
    m.relay_s = static_cast<double>(m.last.relay_us - m.first.relay_us) / 1e6;
    if (m.relay_s < limits.rate_min_window_s) return std::nullopt;
    m.client_s =
        (static_cast<double>(m.last.client_us) - static_cast<double>(m.first.client_us)) / 1e6;
    struct Pair {
        double client_us, relay_us;
        double rate() const { return client_us / relay_us; }
    };
    std::vector<Pair> pairs;
    for (size_t i = 1; i < closed; ++i) {
        const ClockSample& a = points[i - 1];
        const ClockSample& b = points[i];
        const double relay = static_cast<double>(b.relay_us - a.relay_us);
        if (!(relay > 0)) continue;
        pairs.push_back(
            {static_cast<double>(b.client_us) - static_cast<double>(a.client_us), relay});
    }
    if (pairs.empty()) return std::nullopt;
    std::vector<double> rates;
    for (const Pair& p : pairs)
        rates.push_back(p.rate());
    std::sort(rates.begin(), rates.end());
    const size_t n = rates.size();
    m.median = n % 2 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
    m.slowest = rates.front();
    m.fastest = rates.back();
    m.steps = n;
    // The rate over the whole trend but the two pairs that gained the most. A clock step
    // (an NTP correction) gains its size in one pair and never gives it back, and two can
    // fall in one window, so those two are set aside; lag only ever delays a point, so the
    // pair into it loses what the pair out of it gains: a pair set aside takes the losing
    // pair before it with it (else a client that holds its orders back now and then would
    // pull its rate down). A clock run fast keeps gaining in every pair, and one switched on
    // and off gains in every stretch it is on: both show in the rest. With fewer than five
    // pairs (a player who sends few orders) nothing can be set aside, and the slowest pair
    // is the rate.
    if (n < 5) {
        m.rate = rates.front();
    } else {
        auto gain = [&](size_t i) { return pairs[i].client_us - pairs[i].relay_us; };
        std::vector<size_t> order(pairs.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return gain(a) > gain(b); });
        std::vector<bool> aside(pairs.size(), false);
        for (size_t k = 0; k < 2; ++k) {
            aside[order[k]] = true;
            if (order[k] > 0 && gain(order[k] - 1) < 0) aside[order[k] - 1] = true;
        }
        double client = 0, relay = 0;
        for (size_t i = 0; i < pairs.size(); ++i) {
            if (aside[i]) continue;
            client += pairs[i].client_us;
            relay += pairs[i].relay_us;
        }
        m.rate = relay > 0 ? client / relay : rates.front();
    }
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
