#include "hits.hpp"

#include <algorithm>
#include <cmath>

#include "movement.hpp"

namespace arbiter::reference {

namespace {
// Claims travel as 32-bit floats: a value at its limit must not read as past it.
constexpr double kFloatSlack = 1e-6;

bool past(double value, double limit) {
    return value > limit * (1.0 + kFloatSlack);
}
}  // namespace

WeaponLimits HitLimits::weapon(const std::string& name) const {
    if (auto it = weapons.find(name); it != weapons.end()) return it->second;
    return WeaponLimits{.range_m = default_range_m};
}

std::optional<Excess> check_range(double range_m, const WeaponLimits& weapon,
                                  const HitLimits& limits) {
    const double limit = weapon.range_m * limits.range_tolerance;
    if (!past(range_m, limit)) return std::nullopt;
    return Excess{range_m, limit, excess_score(range_m, limit)};
}

std::optional<Excess> check_damage(double damage, const WeaponLimits& weapon) {
    if (!(weapon.max_damage > 0) || !past(damage, weapon.max_damage)) return std::nullopt;
    return Excess{damage, weapon.max_damage, excess_score(damage, weapon.max_damage)};
}

std::optional<TimingMeasure> check_timing(uint64_t relay_tick, uint64_t claimed_tick, double tick_s,
                                          double allowance_s, const HitLimits& limits) {
    const double ticks = claimed_tick >= relay_tick
                             ? static_cast<double>(claimed_tick - relay_tick)
                             : -static_cast<double>(relay_tick - claimed_tick);
    TimingMeasure m;
    m.offset_s = ticks * tick_s;
    m.allowance_s = m.offset_s < 0 ? allowance_s : 0.0;
    m.limit_s = limits.timing_window_s + m.allowance_s;
    // Within the window, or exactly at it, is honest.
    if (std::abs(m.offset_s) <= m.limit_s + 1e-9) return std::nullopt;
    m.score = excess_score(std::abs(m.offset_s), m.limit_s);
    return m;
}

std::optional<FireRateMeasure> check_fire_rate(const std::deque<int64_t>& shots_us,
                                               const WeaponLimits& weapon, double allowance_s,
                                               const HitLimits& limits) {
    if (!(weapon.fire_interval_s > 0) || shots_us.empty()) return std::nullopt;
    const int64_t last = shots_us.back();
    const int64_t window_us = static_cast<int64_t>(limits.fire_window_s * 1e6);
    FireRateMeasure m;
    m.last_us = last;
    m.first_us = last;
    for (auto it = shots_us.rbegin(); it != shots_us.rend() && *it >= last - window_us; ++it) {
        ++m.shots;
        m.first_us = *it;
    }
    m.window_s = static_cast<double>(m.last_us - m.first_us) / 1e6;
    m.allowance_s = allowance_s;
    // Shots at exactly the weapon's rate: one at each end of every interval.
    const double interval = weapon.fire_interval_s / limits.fire_tolerance;
    m.allowed = static_cast<int64_t>(std::floor((m.window_s + allowance_s) / interval + 1e-9)) + 1;
    if (m.shots <= m.allowed) return std::nullopt;
    m.score = excess_score(static_cast<double>(m.shots), static_cast<double>(m.allowed));
    return m;
}

double count_confidence(int64_t count, int64_t confident_count) {
    if (confident_count <= 0) return 1.0;
    return std::min(1.0, static_cast<double>(count) / static_cast<double>(confident_count));
}

}  // namespace arbiter::reference
