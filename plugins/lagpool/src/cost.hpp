// What an action costs a budget: the time it legitimately takes, in seconds.
#pragma once

namespace arbiter::lagpool {

// A position; x and y horizontal, z up (the convention of the bundled plugins).
struct Vec3 {
    double x = 0, y = 0, z = 0;
};

struct MovementLimits {
    double max_walk_speed = 20.0;  // m/s, horizontal
    double max_jump_speed = 10.0;  // m/s, upwards
    double tolerance = 1.2;        // >= 1; every cost is divided by it
};

struct MovementCost {
    double horizontal_m = 0;
    double climb_m = 0;  // upwards only; going down costs nothing
    double seconds = 0;
};

// The cost of moving from `from` to `to`, after Luanti's PlayerSAO::checkMovementCheat:
// the horizontal distance at walking speed or, when going up, the climb at the faster of
// jumping and walking speed (Luanti: climbing, swimming and flying move vertically at
// walking speed), whichever takes longer: a player climbs while walking, so the two
// times overlap and are not added. Then divided by the tolerance. Going down is free:
// a fall is gravity, and Luanti does not check it either.
MovementCost movement_cost(const Vec3& from, const Vec3& to, const MovementLimits& limits);

// The cost of one action of a kind with a fixed time per action.
inline double fixed_cost(double seconds, double tolerance) {
    return seconds / tolerance;
}

}  // namespace arbiter::lagpool
