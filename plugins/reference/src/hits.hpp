// Hit and kill checks as pure functions of a claim, the weapon's limits and the relay's
// measures: range, line of sight, timing, target state, fire rate and damage
// (docs/detection.md, "Hits").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace arbiter::reference {

struct WeaponLimits {
    double range_m = 100.0;
    double fire_interval_s = 0.0;  // shortest time between two shots; 0: not checked
    double max_damage = 0.0;       // most damage of one hit; 0: not checked
};

struct HitLimits {
    double default_range_m = 100.0;  // for a weapon the table does not name
    double range_tolerance = 1.0;    // multiplies a weapon's range
    double timing_window_s = 0.5;    // a claimed tick this far from the relay's is fine
    // The most a late claim or a fire-rate window is excused by a silence the relay saw:
    // what a spike held back arrives in its burst, as late as the spike was long.
    double max_lag_allowance_s = 10.0;
    // ...and by a round trip it measured, which a client can lengthen by answering pings
    // late without falling silent: a smaller bound for that.
    double max_rtt_allowance_s = 2.0;
    double fire_window_s = 2.0;   // relay time over which shots are counted
    double fire_tolerance = 1.1;  // divides a weapon's fire interval
    int64_t confident_count = 3;  // claims of a yes/no check for full confidence
    std::map<std::string, WeaponLimits> weapons;

    // The weapon's limits, or the defaults for a weapon the table does not name.
    WeaponLimits weapon(const std::string& name) const;
};

// A value past its limit.
struct Excess {
    double value = 0;
    double limit = 0;
    double score = 0;  // excess_score(value, limit)
};

// The server's range against the weapon's; nullopt when within it.
std::optional<Excess> check_range(double range_m, const WeaponLimits& weapon,
                                  const HitLimits& limits);

// A hit's damage against the weapon's maximum; nullopt within it or when not checked.
std::optional<Excess> check_damage(double damage, const WeaponLimits& weapon);

struct TimingMeasure {
    double offset_s = 0;     // claimed tick - relay tick, in seconds (negative: late)
    double limit_s = 0;      // the window on that side, lag allowance included
    double allowance_s = 0;  // the lag allowance (late claims only)
    double score = 0;
};

// A claim's tick against the tick the relay had open when it arrived. A late claim is
// excused by the lag the relay saw just before it (capped); a claim ahead of the relay
// has no such excuse: no network delivers an order before it was sent.
std::optional<TimingMeasure> check_timing(uint64_t relay_tick, uint64_t claimed_tick, double tick_s,
                                          double allowance_s, const HitLimits& limits);

struct FireRateMeasure {
    int64_t shots = 0;       // in the window
    int64_t allowed = 0;     // the most the weapon fires in the window and its allowance
    double window_s = 0;     // relay time from the window's first shot to its last
    double allowance_s = 0;  // lag allowance added to the window
    int64_t first_us = 0;
    int64_t last_us = 0;
    double score = 0;
};

// The shots (relay receive times, oldest first) in the fire window ending at the last one,
// against what the weapon fires in that window plus the lag allowance: shots fired through
// a silence arrive together after it, so the silence counts as time the weapon had.
std::optional<FireRateMeasure> check_fire_rate(const std::deque<int64_t>& shots_us,
                                               const WeaponLimits& weapon, double allowance_s,
                                               const HitLimits& limits);

// Confidence of a yes/no check (line of sight, target state) after `count` failures:
// one could be the server's own edge case, several are a pattern.
double count_confidence(int64_t count, int64_t confident_count);

}  // namespace arbiter::reference
