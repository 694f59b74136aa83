#include "reaction.hpp"

#include <algorithm>

namespace arbiter::kaladin {

void ReactionTracker::stimulus(uint64_t id, int64_t t_us) {
    pending_[id] = t_us;
    // A stimulus nobody answers must not be kept for ever; ids grow within a match, so
    // the smallest is the oldest.
    while (pending_.size() > kMaxPending)
        pending_.erase(pending_.begin());
}

bool ReactionTracker::response(uint64_t id, int64_t t_us, size_t keep_pairs) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;  // not sent to this player, or answered already
    const int64_t delay = t_us - it->second;
    pending_.erase(it);
    if (delay < 0) return false;
    delays_us_.push_back(delay);
    while (delays_us_.size() > keep_pairs)
        delays_us_.pop_front();
    return true;
}

void ReactionTracker::rtt(uint32_t rtt_us) {
    if (rtt_us == 0) return;  // no measurement
    if (!lowest_rtt_us_ || rtt_us < *lowest_rtt_us_) lowest_rtt_us_ = rtt_us;
}

std::vector<double> ReactionTracker::corrected_ms() const {
    // Without a round trip measured, nothing is taken off: the player looks slower.
    const double rtt_ms = lowest_rtt_us_ ? static_cast<double>(*lowest_rtt_us_) / 1e3 : 0.0;
    std::vector<double> out;
    out.reserve(delays_us_.size());
    for (int64_t d : delays_us_)
        out.push_back(std::max(0.0, static_cast<double>(d) / 1e3 - rtt_ms));
    return out;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double reaction_score(double median_ms, double limit_ms, double tripwire_ms) {
    if (median_ms >= limit_ms) return 0.0;
    if (limit_ms <= tripwire_ms) return 1.0;
    return std::clamp((limit_ms - median_ms) / (limit_ms - tripwire_ms), 0.0, 1.0);
}

}  // namespace arbiter::kaladin
