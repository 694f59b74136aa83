// circleguard's snap rule (circlecore's Investigations.snaps), as a pure function of the
// cursor path: aim correction shows as a sharp turn with long legs on either side, the
// cursor pulled onto a circle and back. Frames of a time already seen just before are
// dropped first (the first of each time is kept: repeated times read as false snaps), then
// for each three consecutive frames a, b, c, the angle at b (law of cosines on |ab|, |bc|,
// |ac|) under `max_angle_deg` with both |ab| and |bc| over `min_distance_px` is a snap,
// reported at b's time with the angle and the shorter of the two legs.
//
// circleguard keeps only the snaps on a hit object by default, which needs the beatmap;
// this is the rule from the replay alone (docs/games/osu.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "osr_reader.hpp"

namespace arbiter::osu {

struct SnapRule {
    double max_angle_deg = 10.0;   // circleguard's DEFAULT_ANGLE
    double min_distance_px = 8.0;  // circleguard's DEFAULT_DISTANCE
};

struct Snap {
    int64_t time_ms = 0;       // of the middle frame
    double angle_deg = 0.0;    // at the middle frame
    double distance_px = 0.0;  // the shorter of its two legs
    double x = 0.0, y = 0.0;   // the middle frame's cursor
};

// The snaps of a replay's frames in the file's order; osu! stable's two placeholder frames
// (no cursor) are left out.
std::vector<Snap> find_snaps(std::span<const OsrFrame> frames, const SnapRule& rule = {});

}  // namespace arbiter::osu
