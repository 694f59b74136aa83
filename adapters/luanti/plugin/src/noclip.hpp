// luanti.noclip: horizontal distance moved while inside walkable (solid) nodes.
//
// The mod reports each server step on which the player's feet or head node is walkable
// ("luanti.inside"). Luanti's collision keeps a player out of such nodes, so an honest
// player is inside one only briefly and in place: a node placed or fallen onto them, a
// door closing, a step up the server corrects. Moving through them, step after step, is
// what the noclip privilege allows and what a client that ignores collision does. A
// stretch is a run of consecutive steps inside; a step outside ends it.
#pragma once

#include <cstdint>
#include <optional>

#include "settings.hpp"

namespace arbiter::luanti {

struct NoclipTrack {
    bool active = false;
    uint64_t last_step = 0;  // the step (the player's position count) last seen inside
    double x = 0, y = 0;     // and where the player was then
    double distance_m = 0;   // horizontal, over the stretch
    int64_t start_us = 0;
    double start_x = 0, start_y = 0, start_z = 0;
    int64_t steps = 0;
};

struct NoclipFinding {
    double distance_m = 0;
    double limit_m = 0;
    int64_t steps = 0;
    int64_t from_us = 0, to_us = 0;
    double start_x = 0, start_y = 0, start_z = 0;
    double x = 0, y = 0, z = 0;
};

// The player was inside a walkable node on step `step` (their position count), at this
// position and relay time. Returns a finding while the stretch has gone beyond
// noclip distance_m. A second report for the same step (feet and head) adds nothing.
std::optional<NoclipFinding> add_inside_step(NoclipTrack& track, uint64_t step, int64_t t_us,
                                             double x, double y, double z,
                                             const NoclipSettings& settings);

// 0 at the limit, 1 - 1/e one more limit beyond it.
double noclip_score(const NoclipFinding& finding);

}  // namespace arbiter::luanti
