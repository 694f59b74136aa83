// The plugin's table of server_config.toml, read and checked in one place.
//
//   [plugins.lagpool.config]
//   min_capacity_s = 5.0      # Luanti's LAG_POOL_MIN
//   lag_factor = 2.0          # capacity = max(min_capacity_s, lag_factor x lag estimate)
//   lag_halving_s = 60.0      # the lag estimate halves over this much relay time
//   teleport_grace_s = 5.0    # failed grabs this soon after a server teleport or a join
//                             # are not held against the player (never less than the capacity)
//   window_s = 60.0           # relay time over which overdraws add up
//   burst_s = 0.1             # failed grabs this close together count as one episode
//   min_episodes = 3          # fewer episodes in a window score 0 (at least 2)
//   confident_episodes = 10   # episodes for full confidence
//   overdraw_scale_s = 1.0    # overdrawn seconds for a score of 1 - 1/e (0.63)
//
//   [plugins.lagpool.config.kinds.movement]   # fed by position updates
//   cost = "distance"
//   max_walk_speed = 20.0     # m/s
//   max_jump_speed = 10.0     # m/s upwards
//   tolerance = 1.2           # >= 1
//
//   [plugins.lagpool.config.kinds.dig]        # fed by orders of kind "dig"
//   cost = "fixed"
//   seconds = 0.15            # the least time one action takes in the game
//   tolerance = 1.2           # >= 1
//
//   [plugins.lagpool.config.kinds.dig_time]   # fed by StatChange events of stat "dig_time"
//   cost = "stated"           # each costs its delta (seconds) / tolerance: the relay states
//   tolerance = 1.2           # what the action takes, as Luanti's server computes a dig's
//                             # time from the node and the tool (get_dig_params().time)
//
// Without a `kinds` table the kinds are movement and dig; a `kinds` table replaces them.
// A stated cost is for actions whose time depends on what the game knows and Arbiter does
// not (the node, the tool); a delta that is not finite or is negative is no time at all,
// and is ignored and counted (stated_ignored.NAME) rather than charged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <arbiter/sdk/config.hpp>

#include "cost.hpp"
#include "overdraw.hpp"

namespace arbiter::lagpool {

// The kind fed by position updates; every other kind is fed by orders of its name
// ("fixed") or by StatChange events whose stat is its name ("stated").
inline constexpr std::string_view kMovementKind = "movement";

enum class CostModel { distance, fixed, stated };

struct KindSettings {
    std::string name;
    CostModel cost = CostModel::fixed;
    MovementLimits movement;  // cost = "distance"
    double seconds = 0.0;     // cost = "fixed"
    double tolerance = 1.2;   // every model (movement.tolerance for "distance")
};

struct LagpoolSettings {
    double min_capacity_s = 5.0;
    double lag_factor = 2.0;
    double lag_halving_s = 60.0;
    double teleport_grace_s = 5.0;
    OverdrawSettings overdraw;
    std::vector<KindSettings> kinds;  // sorted by name

    const KindSettings* find(std::string_view name) const;

    // Throws ConfigError naming the key; refuses unknown keys.
    static LagpoolSettings parse(const ConfigTable& config);
};

}  // namespace arbiter::lagpool
