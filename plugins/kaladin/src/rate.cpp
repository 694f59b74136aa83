#include "rate.hpp"

#include <algorithm>

namespace arbiter::kaladin {

RateMeasure measure_rate(const Ring<Input>& recent, int64_t window_us, int64_t first_input_us) {
    RateMeasure m;
    if (recent.empty()) return m;
    m.to_us = recent.back().t_us;
    m.from_us = m.to_us - window_us;
    for (auto it = recent.rbegin(); it != recent.rend() && it->t_us > m.from_us; ++it)
        ++m.inputs;
    // Always divided by the whole window: a player seen for less than it is measured at
    // a lower rate than theirs, an error that favours the player.
    m.per_min = static_cast<double>(m.inputs) * 60e6 / static_cast<double>(window_us);
    m.full = first_input_us <= m.from_us;
    return m;
}

double rate_tripwire(double absolute_per_min, double tick_share, double tick_rate_hz) {
    return std::min(absolute_per_min, tick_share * tick_rate_hz * 60.0);
}

double rate_score(double per_min, double limit, double tripwire) {
    if (per_min <= limit) return 0.0;
    if (tripwire <= limit) return 1.0;
    return std::clamp((per_min - limit) / (tripwire - limit), 0.0, 1.0);
}

}  // namespace arbiter::kaladin
