// Movement checks as pure functions of a player's recent track (or a small record of its
// current stretch of movement) and the limits: no plugin state, no I/O, so each can be
// tested at and around its limits.
//
// Lag is not cheating (docs/detection.md, "Lag is not cheating"): speeds are measured over
// a window of relay time, never from one update, and the window is widened by the lag the
// relay saw, so that a late packet followed by a burst of catch-up packets averages out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <arbiter/sdk/prefetch.hpp>
#include <arbiter/sdk/ring.hpp>

#include "lazy.hpp"
#include "sample_ring.hpp"

namespace arbiter::reference {

double horizontal_distance(const Vec3& a, const Vec3& b);
double distance(const Vec3& a, const Vec3& b);

// A round-trip time the relay measured (kept for the evidence, not for decisions).
struct RttSample {
    int64_t t_us = 0;
    uint32_t rtt_us = 0;
};

struct MovementLimits {
    double max_speed = 20.0;           // m/s, horizontal
    double tolerance = 1.1;            // multiplies max_speed
    double window_s = 1.0;             // relay time a speed is measured over
    double max_lag_allowance_s = 2.0;  // the most lag a window is widened by;
                                       // longer silences are spanned (measure_window)
    double teleport_distance = 100.0;  // m: more in one update is impossible
    int64_t min_samples = 5;           // updates in a window for full confidence
    double burst_gap_s = 0.005;        // updates closer than this (at most) arrived in one burst
    double max_acceleration = 50.0;    // m/s², horizontal; multiplied by tolerance
    double sustained_s = 3.0;          // windowed speed over the limit for longer is a speed hack
    double max_jump_time_s = 1.0;      // the longest a jump keeps a player off the ground
    double airborne_grace_s = 1.0;     // added to max_jump_time_s: short falls, a late landing
    double below_terrain_m = 1.0;      // z this far under the reported ground height is inside it
};

// A player's recent position updates and measured round trips, oldest first.
struct Track {
    SampleRing samples;
    // Made at the first one: many games send none (a Ring alone is 24 bytes while empty).
    Lazy<Ring<RttSample>> rtts;
    // Whether the receive times never go back within the track, so that a look-back may
    // start with a binary search; its owner says when they do (SpacingMedian counts it).
    bool in_order = true;
};

// The usual time between a player's updates: the median receive gap of the track.
int64_t typical_interval_us(const Track& track);
// The same over the gaps that end at or after since_us only: the analyzer keeps two windows
// of track for the acceleration check, but measures the usual spacing over the stretch it
// kept before (the speed check's), which is what a median of a hundred gaps needs and
// half of what it costs.
int64_t typical_interval_us(const Track& track, int64_t since_us);

// typical_interval_us(track, since_us) kept up to date update by update instead of
// recomputed: the gaps of the track that end at or after since_us, in a sorted array, so
// that each update inserts one gap and removes the ones that aged out (a few dozen
// nanoseconds) instead of copying and partially sorting them all. The owner of the track
// reports every change to it (pushed, about to pop its front, cleared); while the track's
// times are out of order, or since_us moves back, value() recomputes with
// typical_interval_us, so the result is the same in every case.
class SpacingMedian {
  public:
    void pushed(const Track& track);         // after samples.push_back
    void popping_front(const Track& track);  // before samples.pop_front
    void cleared();                          // after samples.clear()
    void invalidate() { valid_ = false; }    // after any other change (a restore)
    void prefetch() const { prefetch_span(std::span<const Entry>(sorted_)); }
    // typical_interval_us(track, since_us).
    int64_t value(const Track& track, int64_t since_us);
    // No sample of the track received before the one before it (exact once value() ran).
    bool in_order() const { return descents_ == 0; }

    // The longest track whose gaps the set can name (below); a longer one is measured
    // afresh by typical_interval_us.
    static constexpr size_t kMaxSamples = 65536;

  private:
    // A gap by the sample it ends at: that sample's SampleRing::first_seq() + index, modulo
    // 2^16 (2 bytes where the gap itself takes 8; kMaxSamples).
    using Entry = uint16_t;
    static Entry entry_of(const Track& track, size_t index);
    static int64_t gap_of(const Track& track, Entry entry);
    void insert(const Track& track, Entry entry, int64_t gap);
    void erase(const Track& track, Entry entry, int64_t gap);
    bool rebuild(const Track& track, int64_t since_us);

    // The gaps in the set, ascending, and of equal gaps the oldest first: the gap that
    // leaves the set is always its oldest, so it is the first of its value.
    std::vector<Entry> sorted_;
    size_t count_ = 0;      // the set is the track's last count_ gaps
    int64_t since_us_ = 0;  // the since_us the set was cut at
    int64_t descents_ = 0;  // samples received before the one before them
    bool valid_ = false;
};

// The lag a window starting at t0_us is widened by: the longest the relay waited for an
// update in the stretch before the window's first one, beyond the usual spacing, capped.
// The round trips the relay measured do not count: a client controls its replies to
// pings, and a steady latency, however high, shifts both ends of a window alike.
double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits);

// The longest wait for an update beyond the usual spacing in the stretch lag_allowance_s
// looks back over from t0_us, not capped: how old the position of an update received at
// t0_us may be (the updates held back by a silence lost but the first).
double longest_wait_s(const Track& track, int64_t t0_us, const MovementLimits& limits,
                      int64_t typical_us);

// The most one update may move from the track's last: teleport_distance, or twice the top
// speed over the relay time since the last update and the longest wait before it (in the
// stretch lag_allowance_s looks back over), if longer. After a silence with every held-back
// update lost but the first, the next update carries the movement of the whole silence.
// Only teleport_distance with max_lag_allowance_s = 0.
double single_update_reach_m(const Track& track, const Sample& next, const MovementLimits& limits);

struct WindowMeasure {
    Sample start;
    Sample end;
    double elapsed_s = 0;    // relay time between start and end
    double allowance_s = 0;  // lag allowance added to it
    double horizontal_m = 0;
    double distance_m = 0;
    double speed = 0;        // horizontal_m / (elapsed_s + allowance_s)
    int64_t samples = 0;     // updates within the window
    size_t start_index = 0;  // the track's sample the window starts at
};

// Where the window ending at sample end_index starts: as window_start_index below, for an
// earlier end. samples.size() while the track up to end_index is shorter than a window.
size_t window_start_index(const Track& track, size_t end_index, const MovementLimits& limits);

// Where the window ending at the track's last sample starts: the latest sample at least
// window_s before the end, moved forward to the last update of a catch-up burst it belongs
// to (updates less than burst_gap_s apart), but by at most a quarter of the window, and
// never to the end itself.
// samples.size() while the track is shorter than a window.
size_t window_start_index(const Track& track, const MovementLimits& limits);

// The window ending at the track's last sample, from window_start_index; nullopt while
// the track is shorter than a window.
//
// A silence longer than max_lag_allowance_s (beyond the usual spacing) in the stretch the
// allowance looks back over is more lag than the allowance may cover: the update after it
// can show a position as old as the silence is long, the others held back lost. Then the
// window starts at the last update before that silence instead, and spans it: its relay
// time covers all the movement since, however long the silence was, so honest movement
// through a silence of any length reads at its own speed. A cheater gains nothing by
// stalling: the time stalled is in the window. With max_lag_allowance_s = 0 (no lag
// tolerance) windows are neither widened nor stretched.
std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits);

// The window ending at sample end_index, with the track's typical interval already known
// (typical_interval_us: the allowance of each window is the wait beyond it).
std::optional<WindowMeasure> measure_window(const Track& track, size_t end_index,
                                            const MovementLimits& limits, int64_t typical_us);

// ---- acceleration: the change of windowed speed between two consecutive windows

struct AccelerationMeasure {
    WindowMeasure before;     // the window ending where `after` starts
    WindowMeasure after;      // the window ending at the track's last sample
    double change_mps = 0;    // after.speed - before.speed (negative: slowing down)
    double separation_s = 0;  // relay time between the two windows' midpoints
    double allowance_s = 0;   // the longest wait beyond the usual spacing in or before either
    double acceleration = 0;  // |change_mps| / (separation_s + allowance_s), m/s²
};

// The acceleration between the window ending at the track's last sample and the one before
// it. Both are measured as the speed check measures them (burst-aware starts, each widened
// by the lag before it), and the divisor is widened by the longest wait the relay saw in or
// before them, capped: a late update or a burst of catch-up updates moves a window's speed
// by at most the player's own speed, and spread over a longer time. nullopt until two
// windows fit in the track.
std::optional<AccelerationMeasure> measure_acceleration(const Track& track,
                                                        const MovementLimits& limits,
                                                        int64_t typical_us);
// The same, with the later window already measured: `after`, the window ending at the
// track's last sample (measure_window), which starts at sample after_start.
std::optional<AccelerationMeasure> measure_acceleration(const Track& track,
                                                        const WindowMeasure& after,
                                                        size_t after_start,
                                                        const MovementLimits& limits,
                                                        int64_t typical_us);

// ---- sustained speed: windowed speed over the limit, window after window

struct SustainedRun {
    bool active = false;  // the latest window was over the limit
    Sample first_from;    // the first window over the limit: where it started...
    Sample first_to;      // ...and where it ended
    Sample last_to;       // where the latest window over the limit ended
    double lowest_mps = 0;
    double highest_mps = 0;
    double sum_mps = 0;   // of the windows' speeds, for their mean
    int64_t windows = 0;  // windows over the limit in the run
};

// Folds the latest window into the run: extends it while each window's speed is over
// max_speed × tolerance, ends it at the first one that is not.
SustainedRun extend_run(SustainedRun run, const WindowMeasure& window,
                        const MovementLimits& limits);

struct SustainedMeasure {
    double duration_s = 0;  // relay time from the end of the first window over the limit
                            // to the end of the latest one
    double limit_s = 0;
    double mean_mps = 0;    // the mean speed of the run's windows
    double lowest_mps = 0;  // the slowest window of the run: over the limit throughout
    double speed_limit_mps = 0;
    double score = 0;  // excess_score of mean_mps over the speed limit (the first windows of a
                       // run are always only just over it, so the lowest would say little)
};

// A run that lasted longer than sustained_s; nullopt otherwise.
std::optional<SustainedMeasure> check_sustained(const SustainedRun& run,
                                                const MovementLimits& limits);

// ---- airborne too long, from the server's on_ground flag

struct AirborneStretch {
    bool active = false;  // the latest update was off the ground
    Sample takeoff;       // the first update off the ground
    Sample last;          // the latest update off the ground
    int64_t updates = 0;
    // The longest wait for an update within the stretch, beyond the usual spacing.
    int64_t longest_wait_us = 0;
};

// Folds one update into the stretch. on_ground: the server's flag (nullopt where it does not
// report it: the stretch ends, nothing is known); previous_us: relay time of the player's
// update before it (-1 if none); typical_us: the track's usual spacing.
AirborneStretch extend_airborne(AirborneStretch stretch, const Sample& sample,
                                std::optional<bool> on_ground, int64_t previous_us,
                                int64_t typical_us);

struct AirborneMeasure {
    double elapsed_s = 0;    // relay time from the takeoff to the latest update
    double allowance_s = 0;  // lag taken off it
    double airborne_s = 0;   // elapsed_s - allowance_s
    double limit_s = 0;      // max_jump_time_s + airborne_grace_s
    double score = 0;
};

// The time the stretch has kept the player off the ground, less the lag: the longest wait
// for an update within it, beyond the usual spacing. Not capped, unlike the speed check's:
// after a silence the relay may get a burst of the updates sent in it (the landing among
// them, which ends the stretch) or only the first of them, and then a lost landing and a
// new jump look like one long flight. Only the longest wait counts, so a cheater gains one
// silence per stretch at most, and must stay in the air past the limit after it.
// A stretch longer than the limit; nullopt otherwise.
std::optional<AirborneMeasure> check_airborne(const AirborneStretch& stretch,
                                              const MovementLimits& limits);

// ---- below the terrain

struct BelowTerrainMeasure {
    double depth_m = 0;  // ground_height - z
    double limit_m = 0;  // below_terrain_m
    double score = 0;
};

// z more than below_terrain_m under the ground height the server reported for the same
// update (nullopt where it reports none). One update is enough: both come from the server
// in the same update, so lag cannot separate them.
std::optional<BelowTerrainMeasure> check_below_terrain(double z,
                                                       std::optional<double> ground_height,
                                                       const MovementLimits& limits);

// How far past a limit a value is, as a score in [0, 1]: 0 at the limit, about 0.4 at
// 10 % over, 0.78 at 30 % over, approaching 1.
double excess_score(double value, double limit);

}  // namespace arbiter::reference
