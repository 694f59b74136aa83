#include "cost.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::lagpool {

MovementCost movement_cost(const Vec3& from, const Vec3& to, const MovementLimits& limits) {
    MovementCost cost;
    // Not std::hypot, whose guard against overflow float32 positions (events.fbs) never
    // need: it was a visible share of the whole path's time. (Positions from a restored
    // blob 1e154 apart would give an infinite cost instead of a huge one.)
    const double dx = to.x - from.x, dy = to.y - from.y;
    cost.horizontal_m = std::sqrt(dx * dx + dy * dy);
    cost.climb_m = std::max(0.0, to.z - from.z);
    double seconds = cost.horizontal_m / limits.max_walk_speed;
    if (cost.climb_m > 0) {
        const double vertical_speed = std::max(limits.max_jump_speed, limits.max_walk_speed);
        seconds = std::max(seconds, cost.climb_m / vertical_speed);
    }
    cost.seconds = seconds / limits.tolerance;
    return cost;
}

}  // namespace arbiter::lagpool
