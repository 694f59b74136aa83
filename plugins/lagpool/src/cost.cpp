#include "cost.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::lagpool {

MovementCost movement_cost(const Vec3& from, const Vec3& to, const MovementLimits& limits) {
    MovementCost cost;
    cost.horizontal_m = std::hypot(to.x - from.x, to.y - from.y);
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
