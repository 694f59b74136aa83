#include "speed.hpp"

#include <cmath>

namespace arbiter::luanti {

namespace {
// The excess over the limit (a fraction of it) at which the score reaches 1 - 1/e. The
// tolerance is already in the limit: 25 % past limit x tolerance is 62 % past the game's
// own speed, which no honest player reaches for seconds.
constexpr double kExcessScale = 0.25;
}  // namespace

double speed_limit(const Allowance& allowance, const SpeedSettings& settings) {
    return (allowance.fast ? settings.fast_speed : settings.walk_speed) * allowance.speed *
           settings.tolerance;
}

std::optional<SpeedFinding> add_speed_position(SpeedTrack& track, int64_t t_us, double x, double y,
                                               double limit_mps, const SpeedSettings& settings) {
    if (!track.started || t_us < track.window_start_us) {
        track = SpeedTrack{};
        track.started = true;
        track.window_start_us = t_us;
        track.window_x = x;
        track.window_y = y;
        return std::nullopt;
    }
    const double elapsed_s = static_cast<double>(t_us - track.window_start_us) / 1e6;
    if (elapsed_s < settings.window_s) return std::nullopt;

    const double dx = x - track.window_x, dy = y - track.window_y;
    const double distance_m = std::sqrt(dx * dx + dy * dy);
    const double window_mps = distance_m / elapsed_s;
    const int64_t window_start_us = track.window_start_us;
    track.window_start_us = t_us;
    track.window_x = x;
    track.window_y = y;

    if (!(window_mps > limit_mps)) {
        track.run_windows = 0;
        track.run_distance_m = 0;
        track.run_fastest_mps = 0;
        return std::nullopt;
    }
    if (track.run_windows == 0) track.run_start_us = window_start_us;
    ++track.run_windows;
    track.run_distance_m += distance_m;
    if (window_mps > track.run_fastest_mps) track.run_fastest_mps = window_mps;

    const double run_s = static_cast<double>(t_us - track.run_start_us) / 1e6;
    if (run_s < settings.sustained_s || track.run_windows < kMinRunWindows) return std::nullopt;
    SpeedFinding finding;
    finding.mean_mps = track.run_distance_m / run_s;
    finding.fastest_mps = track.run_fastest_mps;
    finding.limit_mps = limit_mps;
    finding.sustained_s = run_s;
    finding.distance_m = track.run_distance_m;
    finding.windows = track.run_windows;
    finding.from_us = track.run_start_us;
    finding.to_us = t_us;
    return finding;
}

double speed_score(const SpeedFinding& finding) {
    if (!(finding.limit_mps > 0)) return finding.mean_mps > 0 ? 1.0 : 0.0;
    const double excess = finding.mean_mps / finding.limit_mps - 1.0;
    return excess > 0 ? 1.0 - std::exp(-excess / kExcessScale) : 0.0;
}

}  // namespace arbiter::luanti
