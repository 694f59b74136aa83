#include "settings.hpp"

namespace arbiter::luanti {

LuantiSettings LuantiSettings::parse(const ConfigTable& config) {
    LuantiSettings s;
    SpeedSettings& speed = s.speed;
    // A window shorter than two server steps (0.09 s each) would measure one step's jitter.
    speed.window_s = config.number("window_s", speed.window_s, Range::between(0.2, 60.0));
    speed.walk_speed = config.number("walk_speed", speed.walk_speed, {0.0, 1000.0, true});
    speed.fast_speed = config.number("fast_speed", speed.fast_speed, {0.0, 1000.0, true});
    speed.tolerance = config.number("tolerance", speed.tolerance, Range::between(1.0, 10.0));
    speed.sustained_s = config.number("sustained_s", speed.sustained_s, Range::between(0.0, 600.0));

    FlySettings& fly = s.fly;
    fly.jump_speed = config.number("jump_speed", fly.jump_speed, Range::between(0.0, 1000.0));
    fly.gravity = config.number("gravity", fly.gravity, {0.0, 1000.0, true});
    fly.hover_grace_s =
        config.number("hover_grace_s", fly.hover_grace_s, Range::between(0.0, 600.0));
    fly.fall_look_s = config.number("fall_look_s", fly.fall_look_s, Range::between(0.1, 10.0));
    fly.fall_drop_m = config.number("fall_drop_m", fly.fall_drop_m, Range::between(0.0, 100.0));

    s.noclip.distance_m =
        config.number("noclip_distance_m", s.noclip.distance_m, {0.0, 1000.0, true});
    // A silence between two of a player's updates longer than this restarts every
    // measurement: what the player did in it is unknown, and lag is not speed.
    s.max_gap_s = config.number("max_gap_s", s.max_gap_s, Range::between(0.2, 600.0));
    config.reject_unknown_keys();
    return s;
}

}  // namespace arbiter::luanti
