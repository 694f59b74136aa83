#include "cv.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::kaladin {

std::optional<IntervalWindow> newest_window(const Ring<Input>& recent, size_t min_intervals,
                                            int64_t min_span_us) {
    if (recent.size() < min_intervals + 1) return std::nullopt;
    const int64_t end_us = recent.back().t_us;
    size_t first = recent.size() - 1 - min_intervals;  // gives min_intervals intervals
    while (first > 0 && end_us - recent[first].t_us < min_span_us)
        --first;
    if (end_us - recent[first].t_us < min_span_us) return std::nullopt;
    IntervalWindow w;
    w.from_us = recent[first].t_us;
    w.to_us = end_us;
    w.intervals_us.reserve(recent.size() - first - 1);
    for (size_t i = first + 1; i < recent.size(); ++i)
        w.intervals_us.push_back(recent[i].t_us - recent[i - 1].t_us);
    return w;
}

std::optional<double> trimmed_cv(std::vector<int64_t> intervals_us) {
    if (intervals_us.size() < 4) return std::nullopt;
    auto [lo, hi] = std::minmax_element(intervals_us.begin(), intervals_us.end());
    // Erase the later one first so that the other iterator stays valid.
    if (lo > hi) std::swap(lo, hi);
    intervals_us.erase(hi);
    intervals_us.erase(lo);
    double sum = 0;
    for (int64_t v : intervals_us)
        sum += static_cast<double>(v);
    const double n = static_cast<double>(intervals_us.size());
    const double mean = sum / n;
    if (mean <= 0) return std::nullopt;
    double squares = 0;
    for (int64_t v : intervals_us)
        squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
    return std::sqrt(squares / (n - 1)) / mean;
}

double cv_score(double cv, double limit, double at_limit) {
    // Negated so that a NaN CV scores 0.
    if (!(cv < limit) || !(limit > 0)) return 0.0;
    const double below = std::clamp((limit - cv) / limit, 0.0, 1.0);
    return std::clamp(at_limit + (1.0 - at_limit) * below, 0.0, 1.0);
}

}  // namespace arbiter::kaladin
