// Movement checks as pure functions of a player's recent track and the limits:
// no plugin state, no I/O, so each can be tested at and around its limits.
//
// Lag is not cheating (DETECTION.md): speeds are measured over a window of relay time,
// never from one update, and the window is widened by the lag the relay saw, so that a
// late packet followed by a burst of catch-up packets averages out.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace arbiter::reference {

struct Vec3 {
    double x = 0, y = 0, z = 0;  // x and y horizontal, z up
};

double horizontal_distance(const Vec3& a, const Vec3& b);
double distance(const Vec3& a, const Vec3& b);

// One position update as the relay received it.
struct Sample {
    int64_t t_us = 0;  // relay receive time
    Vec3 position;
};

// A round-trip time the relay measured.
struct RttSample {
    int64_t t_us = 0;
    uint32_t rtt_us = 0;
};

struct MovementLimits {
    double max_speed = 20.0;          // m/s, horizontal
    double tolerance = 1.1;           // multiplies max_speed
    double window_s = 1.0;            // relay time a speed is measured over
    double max_lag_allowance_s = 2.0; // the most lag a window is widened by
    double teleport_distance = 100.0; // m: more in one update is impossible
    int64_t min_samples = 5;          // updates in a window for full confidence
};

// A player's recent position updates and measured round trips, oldest first.
struct Track {
    std::deque<Sample> samples;
    std::deque<RttSample> rtts;
};

// The lag a window starting at t0_us is widened by: the longest the relay waited for an
// update before the window's first one (that update may have been late, so it shows
// an older position than its receive time suggests), or the longest round trip it
// measured around then, whichever is larger, capped.
double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits);

struct WindowMeasure {
    Sample start;
    Sample end;
    double elapsed_s = 0;        // relay time between start and end
    double allowance_s = 0;      // lag allowance added to it
    double horizontal_m = 0;
    double distance_m = 0;
    double speed = 0;            // horizontal_m / (elapsed_s + allowance_s)
    int64_t samples = 0;         // updates within the window
};

// The window ending at the track's last sample and starting at the latest sample at
// least window_s before it; nullopt while the track is shorter than a window.
std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits);

// How far past a limit a value is, as a score in [0, 1]: 0 at the limit, about 0.4 at
// 10 % over, 0.78 at 30 % over, approaching 1.
double excess_score(double value, double limit);

}  // namespace arbiter::reference
