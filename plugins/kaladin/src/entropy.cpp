#include "entropy.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace arbiter::kaladin {

EntropyMeasure binned_entropy(const std::vector<int64_t>& intervals_us, double tick_us) {
    EntropyMeasure m;
    if (intervals_us.empty() || !(tick_us > 0)) return m;
    std::map<int64_t, size_t> bins;
    for (int64_t v : intervals_us)
        ++bins[static_cast<int64_t>(std::floor(static_cast<double>(v) / tick_us))];
    const double n = static_cast<double>(intervals_us.size());
    for (const auto& [bin, count] : bins) {
        const double p = static_cast<double>(count) / n;
        m.bits -= p * std::log2(p);
    }
    m.bits = std::max(0.0, m.bits);  // -0 for a single bin
    m.bins = bins.size();
    return m;
}

double entropy_score(double bits, double limit) {
    if (bits >= limit || limit <= 0) return 0.0;
    return std::clamp((limit - bits) / limit, 0.0, 1.0);
}

}  // namespace arbiter::kaladin
