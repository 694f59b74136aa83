// clang-format off: the table below is laid out as an operator's file would be.
// The plugin's table of server_config.toml, read and checked in one place. The defaults
// are Luanti 5.6.1's own physics (builtin/settingtypes.txt: movement_speed_walk 4,
// movement_speed_fast 20, movement_speed_jump 6.5, movement_gravity 9.81), in metres (a
// node) and seconds.
//
//   [plugins.luanti.config]
//   window_s = 1.0            # luanti.speed: speed is measured over windows of this much
//                             # relay time
//   walk_speed = 4.0          # m/s, Luanti's movement_speed_walk
//   fast_speed = 20.0         # m/s, Luanti's movement_speed_fast (the "fast" privilege)
//   tolerance = 1.3           # limit = (fast ? fast_speed : walk_speed) x allowance.speed
//                             # x this
//   sustained_s = 2.0         # over the limit in consecutive windows for this long to count
//                             # (a punch's knockback is shorter)
//   jump_speed = 6.5          # m/s, Luanti's movement_speed_jump
//   gravity = 9.81            # m/s^2, Luanti's movement_gravity
//   hover_grace_s = 1.5       # luanti.fly: unsupported and not falling for longer than the
//                             # rise of a jump (jump_speed x jump / (gravity x gravity override))
//                             # plus this
//   fall_look_s = 0.5         # a player is falling when lower than this long ago...
//   fall_drop_m = 0.1         # ...by more than this
//   noclip_distance_m = 2.0   # luanti.noclip: horizontal distance moved inside walkable
//                             # nodes, in one stretch of consecutive steps
//   max_gap_s = 2.0           # a player's updates this far apart restart every measurement
// clang-format on
#pragma once

#include <arbiter/sdk/config.hpp>

namespace arbiter::luanti {

struct SpeedSettings {
    double window_s = 1.0;
    double walk_speed = 4.0;
    double fast_speed = 20.0;
    double tolerance = 1.3;
    double sustained_s = 2.0;
};

struct FlySettings {
    double jump_speed = 6.5;
    double gravity = 9.81;
    double hover_grace_s = 1.5;
    double fall_look_s = 0.5;
    double fall_drop_m = 0.1;
};

struct NoclipSettings {
    double distance_m = 2.0;
};

struct LuantiSettings {
    SpeedSettings speed;
    FlySettings fly;
    NoclipSettings noclip;
    double max_gap_s = 2.0;

    // Throws ConfigError naming the key; refuses unknown keys.
    static LuantiSettings parse(const ConfigTable& config);
};

}  // namespace arbiter::luanti
