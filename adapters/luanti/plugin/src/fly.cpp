#include "fly.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace arbiter::luanti {

double rise_time_s(const Allowance& allowance, const FlySettings& settings) {
    const double pull = settings.gravity * allowance.gravity;
    if (!(pull > 0)) return std::numeric_limits<double>::infinity();
    return settings.jump_speed * allowance.jump / pull;
}

double hover_limit_s(const Allowance& allowance, const FlySettings& settings) {
    return rise_time_s(allowance, settings) + settings.hover_grace_s;
}

std::optional<FlyFinding> add_fly_position(FlyTrack& track, int64_t t_us, double x, double y,
                                           double z, bool supported, double limit_s,
                                           const FlySettings& settings) {
    if (!track.recent.empty() && t_us < track.recent.back().t_us) track = FlyTrack{};
    // Keep exactly one sample at or before t - fall_look_s (the reference), and the rest.
    const auto look_us = static_cast<int64_t>(settings.fall_look_s * 1e6);
    while (track.recent.size() >= 2 && track.recent[1].t_us <= t_us - look_us)
        track.recent.pop_front();
    // Younger than fall_look_s, the track compares with the oldest height it has.
    const bool falling = !track.recent.empty() && z < track.recent.front().z - settings.fall_drop_m;
    track.recent.push_back({t_us, z});

    if (supported || falling) {
        track.hovering = false;
        return std::nullopt;
    }
    if (!track.hovering) {
        track.hovering = true;
        track.hover_start_us = t_us;
        track.start_x = x;
        track.start_y = y;
        track.start_z = z;
        track.top_z = z;
    }
    track.top_z = std::max(track.top_z, z);
    const double hover_s = static_cast<double>(t_us - track.hover_start_us) / 1e6;
    if (!(hover_s > limit_s)) return std::nullopt;
    FlyFinding finding;
    finding.hover_s = hover_s;
    finding.limit_s = limit_s;
    finding.from_us = track.hover_start_us;
    finding.to_us = t_us;
    finding.start_x = track.start_x;
    finding.start_y = track.start_y;
    finding.start_z = track.start_z;
    finding.x = x;
    finding.y = y;
    finding.z = z;
    finding.top_z = track.top_z;
    return finding;
}

double fly_score(const FlyFinding& finding) {
    const double excess = finding.hover_s - finding.limit_s;
    return excess > 0 ? 1.0 - std::exp(-excess / finding.limit_s) : 0.0;
}

}  // namespace arbiter::luanti
