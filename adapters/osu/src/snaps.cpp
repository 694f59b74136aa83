#include "snaps.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace arbiter::osu {

std::vector<Snap> find_snaps(std::span<const OsrFrame> frames, const SnapRule& rule) {
    // The frames of distinct times: a frame whose time is that of the frame kept before it
    // is dropped, as circlecore's remove_duplicate_t does.
    std::vector<const OsrFrame*> kept;
    kept.reserve(frames.size());
    for (const OsrFrame& f : frames) {
        if (f.placeholder) continue;
        if (!kept.empty() && kept.back()->time_ms == f.time_ms) continue;
        kept.push_back(&f);
    }
    std::vector<Snap> snaps;
    for (size_t i = 1; i + 1 < kept.size(); ++i) {
        const OsrFrame &a = *kept[i - 1], &b = *kept[i], &c = *kept[i + 1];
        const double ab = std::hypot(b.x - a.x, b.y - a.y);
        const double bc = std::hypot(c.x - b.x, c.y - b.y);
        const double ac = std::hypot(c.x - a.x, c.y - a.y);
        const double denominator = 2.0 * ab * bc;
        if (denominator == 0.0) continue;  // no angle where a leg has no length
        // ac^2 = ab^2 + bc^2 - 2 ab bc cos(beta); rounding can step outside arccos' domain.
        const double cos_beta = std::clamp(-(ac * ac - ab * ab - bc * bc) / denominator, -1.0, 1.0);
        const double beta = std::acos(cos_beta) * 180.0 / std::numbers::pi;
        const double shorter = std::min(ab, bc);
        if (beta < rule.max_angle_deg && shorter > rule.min_distance_px)
            snaps.push_back({b.time_ms, beta, shorter, b.x, b.y});
    }
    return snaps;
}

}  // namespace arbiter::osu
