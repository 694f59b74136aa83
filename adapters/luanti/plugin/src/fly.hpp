// luanti.fly: time spent unsupported and not falling, beyond what a jump explains.
//
// A player is supported on a walkable node, in a liquid or on a climbable one (the mod's
// on_ground). Unsupported, gravity pulls them down: a jump rises for
// jump_speed x jump / (gravity x gravity override) seconds, then falls. So a stretch of
// consecutive positions that are unsupported and not falling (not lower than fall_look_s
// before by more than fall_drop_m) longer than that rise plus hover_grace_s is a player
// the game's physics does not hold down. The grace covers the apex of a jump, a jump onto
// a ledge that the server sees as support a step late, and the server's step.
#pragma once

#include <cstdint>
#include <optional>

#include <arbiter/sdk/ring.hpp>

#include "allowance.hpp"
#include "settings.hpp"

namespace arbiter::luanti {

// How long a jump rises under this allowance, seconds; infinite without gravity.
double rise_time_s(const Allowance& allowance, const FlySettings& settings);

// The longest an honest player stays unsupported and not falling: the rise plus the grace.
double hover_limit_s(const Allowance& allowance, const FlySettings& settings);

struct HeightSample {
    int64_t t_us = 0;
    double z = 0;
};

struct FlyTrack {
    // Recent heights, supported or not: the oldest is the latest at or before fall_look_s
    // ago, what "falling" compares with.
    Ring<HeightSample> recent;
    bool hovering = false;  // in a stretch of unsupported, not falling positions
    int64_t hover_start_us = 0;
    double start_x = 0, start_y = 0, start_z = 0;
    double top_z = 0;  // the highest point of the stretch
};

struct FlyFinding {
    double hover_s = 0;  // the stretch so far
    double limit_s = 0;
    int64_t from_us = 0, to_us = 0;
    double start_x = 0, start_y = 0, start_z = 0;
    double x = 0, y = 0, z = 0;  // where the player is now
    double top_z = 0;
};

// Adds a position; returns a finding while the stretch it is in lasts beyond limit_s.
std::optional<FlyFinding> add_fly_position(FlyTrack& track, int64_t t_us, double x, double y,
                                           double z, bool supported, double limit_s,
                                           const FlySettings& settings);

// 0 at the limit, 1 - 1/e one more limit beyond it.
double fly_score(const FlyFinding& finding);

}  // namespace arbiter::luanti
