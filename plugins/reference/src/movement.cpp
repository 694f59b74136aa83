#include "movement.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace arbiter::reference {

double horizontal_distance(const Vec3& a, const Vec3& b) {
    return std::hypot(a.x - b.x, a.y - b.y);
}

double distance(const Vec3& a, const Vec3& b) {
    return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) +
                     (a.z - b.z) * (a.z - b.z));
}

int64_t typical_interval_us(const Track& track) {
    if (track.samples.size() < 2) return 0;
    std::vector<int64_t> gaps;
    gaps.reserve(track.samples.size() - 1);
    for (size_t i = 1; i < track.samples.size(); ++i)
        gaps.push_back(track.samples[i].t_us - track.samples[i - 1].t_us);
    auto middle = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
    std::nth_element(gaps.begin(), middle, gaps.end());
    return *middle;
}

namespace {

double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits,
                       int64_t typical_us) {
    // Look back over as long a stretch as the allowance may reach.
    const int64_t from_us =
        t0_us - static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) - 1'000'000;
    int64_t longest_us = 0;
    for (size_t i = 1; i < track.samples.size(); ++i) {
        const Sample& sample = track.samples[i];
        if (sample.t_us > t0_us) break;
        if (sample.t_us < from_us) continue;
        longest_us = std::max(longest_us, sample.t_us - track.samples[i - 1].t_us);
    }
    // The usual spacing of updates is not lag: only the wait beyond it is.
    const int64_t late_us = std::max<int64_t>(0, longest_us - typical_us);
    return std::min(static_cast<double>(late_us) / 1e6, limits.max_lag_allowance_s);
}

}  // namespace

size_t window_start_index(const Track& track, const MovementLimits& limits) {
    const auto& samples = track.samples;
    if (samples.empty()) return 0;  // shorter than a window
    const Sample& end = samples.back();
    const int64_t window_us = static_cast<int64_t>(limits.window_s * 1e6);
    auto it = std::upper_bound(samples.begin(), samples.end(), end.t_us - window_us,
                               [](int64_t t, const Sample& s) { return t < s.t_us; });
    if (it == samples.begin()) return samples.size();  // shorter than a window
    size_t start = static_cast<size_t>(it - samples.begin()) - 1;
    // Updates of a catch-up burst arrive together but were sent over the whole silence
    // before it: the first of them shows a position older than its receive time says.
    // Start from the burst's last update, the one sent closest to its arrival; but never
    // further than a quarter of the window, so that a window is never one update long.
    // The gap is absolute, not relative to the track's usual spacing: the updates of a
    // long catch-up burst can be most of a track, and must not redefine what normal is.
    const auto spacing_us = static_cast<int64_t>(limits.burst_gap_s * 1e6);
    const int64_t latest_us = samples[start].t_us + window_us / 4;
    while (start + 2 < samples.size() &&
           samples[start + 1].t_us - samples[start].t_us < spacing_us &&
           samples[start + 1].t_us <= latest_us)
        ++start;
    return start;
}

double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits) {
    return lag_allowance_s(track, t0_us, limits, typical_interval_us(track));
}

std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits) {
    if (track.samples.size() < 2) return std::nullopt;
    const int64_t typical_us = typical_interval_us(track);
    const size_t start = window_start_index(track, limits);
    if (start >= track.samples.size() - 1) return std::nullopt;
    const Sample& end = track.samples.back();
    WindowMeasure m;
    m.start = track.samples[start];
    m.end = end;
    m.samples = static_cast<int64_t>(track.samples.size() - start);
    m.elapsed_s = static_cast<double>(end.t_us - m.start.t_us) / 1e6;
    m.allowance_s = lag_allowance_s(track, m.start.t_us, limits, typical_us);
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
