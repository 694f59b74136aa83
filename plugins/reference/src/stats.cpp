#include "stats.hpp"

#include <algorithm>
#include <cmath>

#include "movement.hpp"

namespace arbiter::reference {

std::optional<RateMeasure> check_experience_rate(const Ring<StatGain>& gains,
                                                 const StatLimits& limits) {
    if (gains.empty()) return std::nullopt;
    const int64_t window_us = static_cast<int64_t>(limits.experience_window_s * 1e6);
    RateMeasure m;
    m.last_us = m.first_us = gains.back().t_us;
    for (auto it = gains.rbegin(); it != gains.rend() && it->t_us > m.last_us - window_us; ++it) {
        m.gained += it->delta;
        m.first_us = it->t_us;
        ++m.changes;
    }
    m.window_s = limits.experience_window_s;
    m.per_hour = m.gained / limits.experience_window_s * 3600.0;
    m.limit_per_hour = limits.max_experience_per_hour;
    if (!(m.per_hour > m.limit_per_hour)) return std::nullopt;
    m.score = excess_score(m.per_hour, m.limit_per_hour);
    return m;
}

std::optional<InvulnerableMeasure> check_invulnerable(int64_t hits_taken, int64_t damage_events,
                                                      const StatLimits& limits) {
    if (damage_events > 0 || hits_taken < limits.min_hits_taken) return std::nullopt;
    InvulnerableMeasure m;
    m.hits_taken = hits_taken;
    m.window_s = limits.combat_window_s;
    m.score = 0.9;
    // At the minimum it is worth watching; twice as many unhurt hits is a pattern.
    m.confidence = std::min(
        1.0, static_cast<double>(hits_taken) / (2.0 * static_cast<double>(limits.min_hits_taken)));
    return m;
}

bool resource_not_spent(std::optional<double> previous, double delta, double value_after) {
    if (!previous || !(delta < 0)) return false;
    // Half the spend is slack for rounding: a spend of 1 must take at least 0.5 off.
    return value_after > *previous + delta / 2.0;
}

}  // namespace arbiter::reference
