#include "noclip.hpp"

#include <cmath>

namespace arbiter::luanti {

std::optional<NoclipFinding> add_inside_step(NoclipTrack& track, uint64_t step, int64_t t_us,
                                             double x, double y, double z,
                                             const NoclipSettings& settings) {
    if (track.active && step == track.last_step) return std::nullopt;
    if (track.active && step == track.last_step + 1) {
        const double dx = x - track.x, dy = y - track.y;
        track.distance_m += std::sqrt(dx * dx + dy * dy);
        ++track.steps;
    } else {  // the first step inside, or a step outside came between: a new stretch
        track = NoclipTrack{};
        track.active = true;
        track.start_us = t_us;
        track.start_x = x;
        track.start_y = y;
        track.start_z = z;
        track.steps = 1;
    }
    track.last_step = step;
    track.x = x;
    track.y = y;
    if (!(track.distance_m > settings.distance_m)) return std::nullopt;
    NoclipFinding finding;
    finding.distance_m = track.distance_m;
    finding.limit_m = settings.distance_m;
    finding.steps = track.steps;
    finding.from_us = track.start_us;
    finding.to_us = t_us;
    finding.start_x = track.start_x;
    finding.start_y = track.start_y;
    finding.start_z = track.start_z;
    finding.x = x;
    finding.y = y;
    finding.z = z;
    return finding;
}

double noclip_score(const NoclipFinding& finding) {
    const double excess = finding.distance_m - finding.limit_m;
    return excess > 0 ? 1.0 - std::exp(-excess / finding.limit_m) : 0.0;
}

}  // namespace arbiter::luanti
