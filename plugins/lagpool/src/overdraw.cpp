#include "overdraw.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::lagpool {

void OverdrawWindow::add(const Overdraw& overdraw, double window_s) {
    items_.push_back(overdraw);
    const int64_t horizon_us = overdraw.t_us - static_cast<int64_t>(window_s * 1e6);
    while (!items_.empty() && items_.front().t_us < horizon_us)
        items_.pop_front();
}

OverdrawSummary OverdrawWindow::summary(double burst_s) const {
    OverdrawSummary s;
    if (items_.empty()) return s;
    const int64_t burst_us = static_cast<int64_t>(burst_s * 1e6);
    int64_t episode_start_us = 0;
    for (const Overdraw& item : items_) {
        if (s.failed_grabs == 0 || item.t_us - episode_start_us > burst_us) {
            ++s.episodes;
            episode_start_us = item.t_us;
        }
        ++s.failed_grabs;
        s.overdrawn_s += item.cost_s;
        s.largest_deficit_s = std::max(s.largest_deficit_s, item.deficit_s());
    }
    s.first_us = items_.front().t_us;
    s.last_us = items_.back().t_us;
    return s;
}

OverdrawScore score_overdraws(const OverdrawSummary& summary, const OverdrawSettings& settings) {
    if (summary.episodes < std::max<int64_t>(settings.min_episodes, 2)) return {};
    OverdrawScore result;
    result.score =
        std::clamp(1.0 - std::exp(-summary.overdrawn_s / settings.overdraw_scale_s), 0.0, 1.0);
    result.confidence =
        std::clamp(static_cast<double>(summary.episodes) /
                       static_cast<double>(std::max<int64_t>(settings.confident_episodes, 1)),
                   0.0, 1.0);
    return result;
}

}  // namespace arbiter::lagpool
