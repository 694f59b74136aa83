#include "movement.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::reference {

double horizontal_distance(const Vec3& a, const Vec3& b) { return std::hypot(a.x - b.x, a.y - b.y); }

double distance(const Vec3& a, const Vec3& b) {
    return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z));
}

double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits) {
    // Look back over as long a stretch as the allowance may reach.
    const int64_t from_us = t0_us - static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) - 1'000'000;
    int64_t longest_us = 0;
    for (size_t i = 1; i < track.samples.size(); ++i) {
        const Sample& sample = track.samples[i];
        if (sample.t_us > t0_us) break;
        if (sample.t_us < from_us) continue;
        longest_us = std::max(longest_us, sample.t_us - track.samples[i - 1].t_us);
    }
    for (const RttSample& rtt : track.rtts) {
        if (rtt.t_us < from_us || rtt.t_us > t0_us + 1'000'000) continue;
        longest_us = std::max<int64_t>(longest_us, rtt.rtt_us);
    }
    return std::min(static_cast<double>(longest_us) / 1e6, limits.max_lag_allowance_s);
}

std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits) {
    if (track.samples.size() < 2) return std::nullopt;
    const Sample& end = track.samples.back();
    const int64_t window_us = static_cast<int64_t>(limits.window_s * 1e6);
    // The latest sample at least a window before the end.
    auto it = std::upper_bound(track.samples.begin(), track.samples.end(), end.t_us - window_us,
                               [](int64_t t, const Sample& s) { return t < s.t_us; });
    if (it == track.samples.begin()) return std::nullopt;
    --it;
    WindowMeasure m;
    m.start = *it;
    m.end = end;
    m.samples = static_cast<int64_t>(track.samples.end() - it);
    m.elapsed_s = static_cast<double>(end.t_us - m.start.t_us) / 1e6;
    m.allowance_s = lag_allowance_s(track, m.start.t_us, limits);
    m.horizontal_m = horizontal_distance(m.start.position, end.position);
    m.distance_m = distance(m.start.position, end.position);
    m.speed = m.horizontal_m / (m.elapsed_s + m.allowance_s);
    return m;
}

double excess_score(double value, double limit) {
    // Negated so that a NaN value scores 0 too: a score must stay in [0, 1].
    if (!(limit > 0) || !(value > limit)) return 0.0;
    return std::clamp(1.0 - std::exp(-5.0 * (value / limit - 1.0)), 0.0, 1.0);
}

}  // namespace arbiter::reference
