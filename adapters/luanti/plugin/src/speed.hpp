// luanti.speed: horizontal speed over windows of relay time against the player's allowance.
//
// A window closes at the first position at least window_s after it opened; its speed is
// the horizontal distance between its two ends over the relay time between them. Luanti's
// server steps every 0.09 s and a client's packets arrive in bursts, so one step says
// little, but a second of them says how fast the player went. A window over the limit
// counts only as part of a run of consecutive windows over it lasting sustained_s, and of
// at least kMinRunWindows windows: a burst shorter than a window (a punch's knockback, the
// catch-up after a lag spike) pushes over the limit at most the two windows it straddles.
#pragma once

#include <cstdint>
#include <optional>

#include "allowance.hpp"
#include "settings.hpp"

namespace arbiter::luanti {

inline constexpr int64_t kMinRunWindows = 3;

// The limit in m/s: (fast ? fast_speed : walk_speed) x allowance.speed x tolerance.
double speed_limit(const Allowance& allowance, const SpeedSettings& settings);

struct SpeedTrack {
    bool started = false;
    int64_t window_start_us = 0;
    double window_x = 0, window_y = 0;  // where the open window started
    // The run of consecutive windows over the limit, from the first one's start.
    int64_t run_windows = 0;
    int64_t run_start_us = 0;
    double run_distance_m = 0;
    double run_fastest_mps = 0;
};

// A run that has lasted sustained_s: what a reviewer needs to see why.
struct SpeedFinding {
    double mean_mps = 0;     // the run's distance over its length
    double fastest_mps = 0;  // its fastest window
    double limit_mps = 0;
    double sustained_s = 0;  // the run's length
    double distance_m = 0;
    int64_t windows = 0;
    int64_t from_us = 0, to_us = 0;
};

// Adds a position at relay time t_us; returns a finding when it closes a window that
// makes or extends a run of sustained_s and kMinRunWindows windows or more.
std::optional<SpeedFinding> add_speed_position(SpeedTrack& track, int64_t t_us, double x, double y,
                                               double limit_mps, const SpeedSettings& settings);

// The score of a finding: 0 at the limit, 1 - 1/e at 25 % over it, near 1 at twice it.
double speed_score(const SpeedFinding& finding);

}  // namespace arbiter::luanti
