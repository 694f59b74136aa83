// Movement checks as pure functions of a player's recent track and the limits:
// no plugin state, no I/O, so each can be tested at and around its limits.
//
// Lag is not cheating (DETECTION.md): speeds are measured over a window of relay time,
// never from one update, and the window is widened by the lag the relay saw, so that a
// late packet followed by a burst of catch-up packets averages out.
#pragma once

#include <cstddef>
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

// A round-trip time the relay measured (kept for the evidence, not for decisions).
struct RttSample {
    int64_t t_us = 0;
    uint32_t rtt_us = 0;
};

struct MovementLimits {
    double max_speed = 20.0;           // m/s, horizontal
    double tolerance = 1.1;            // multiplies max_speed
    double window_s = 1.0;             // relay time a speed is measured over
    double max_lag_allowance_s = 2.0;  // the most lag a window is widened by
    double teleport_distance = 100.0;  // m: more in one update is impossible
    int64_t min_samples = 5;           // updates in a window for full confidence
    double burst_gap_s = 0.005;        // updates closer than this (at most) arrived in one burst
};

// A player's recent position updates and measured round trips, oldest first.
struct Track {
    std::deque<Sample> samples;
    std::deque<RttSample> rtts;
};

// The usual time between a player's updates: the median receive gap of the track.
int64_t typical_interval_us(const Track& track);

// The lag a window starting at t0_us is widened by: the longest the relay waited for an
// update in the stretch before the window's first one, beyond the usual spacing, capped.
// The round trips the relay measured do not count: a client controls its replies to
// pings, and a steady latency, however high, shifts both ends of a window alike.
double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits);

struct WindowMeasure {
    Sample start;
    Sample end;
    double elapsed_s = 0;    // relay time between start and end
    double allowance_s = 0;  // lag allowance added to it
    double horizontal_m = 0;
    double distance_m = 0;
    double speed = 0;     // horizontal_m / (elapsed_s + allowance_s)
    int64_t samples = 0;  // updates within the window
};

// Where the window ending at the track's last sample starts: the latest sample at least
// window_s before the end, moved forward to the last update of a catch-up burst it belongs
// to (updates less than burst_gap_s apart), but by at most a quarter of the window, and
// never to the end itself.
// samples.size() while the track is shorter than a window.
size_t window_start_index(const Track& track, const MovementLimits& limits);

// The window ending at the track's last sample, from window_start_index; nullopt while
// the track is shorter than a window.
std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits);

// How far past a limit a value is, as a score in [0, 1]: 0 at the limit, about 0.4 at
// 10 % over, 0.78 at 30 % over, approaching 1.
double excess_score(double value, double limit);

}  // namespace arbiter::reference
