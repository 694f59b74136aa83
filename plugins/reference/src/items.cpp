#include "items.hpp"

#include <algorithm>
#include <cmath>

#include "movement.hpp"

namespace arbiter::reference {

const ItemLimits* ItemSettings::find(const std::string& id) const {
    auto it = items.find(id);
    return it == items.end() ? nullptr : &it->second;
}

bool ItemSettings::rate_limited(const std::string& source) const {
    return std::find(rate_sources.begin(), rate_sources.end(), source) != rate_sources.end();
}

double impossible_score(double value, double limit) {
    if (!(value > limit)) return 0.0;
    // A count is an integer the server keeps: one over is already impossible.
    return 0.8 + 0.2 * excess_score(value, limit);
}

std::optional<Excess> check_stack(int64_t count_after, const ItemLimits& item) {
    if (item.stack <= 0 || count_after <= item.stack) return std::nullopt;
    const auto value = static_cast<double>(count_after);
    const auto limit = static_cast<double>(item.stack);
    return Excess{value, limit, impossible_score(value, limit)};
}

std::optional<Excess> check_unique(int64_t count_after, const ItemLimits& item) {
    if (!item.unique || count_after <= 1) return std::nullopt;
    const auto value = static_cast<double>(count_after);
    return Excess{value, 1.0, impossible_score(value, 1.0)};
}

bool is_unknown_item(const std::string& id, const ItemSettings& settings) {
    return settings.known_only && !settings.items.empty() && settings.find(id) == nullptr;
}

std::optional<AcquisitionMeasure> check_acquisition_rate(const std::deque<int64_t>& times_us,
                                                         const ItemLimits& item, double allowance_s,
                                                         const ItemSettings& settings) {
    if (!(item.respawn_s > 0) || times_us.empty()) return std::nullopt;
    const int64_t window_us = static_cast<int64_t>(settings.window_s * 1e6);
    AcquisitionMeasure m;
    m.last_us = m.first_us = times_us.back();
    for (auto it = times_us.rbegin(); it != times_us.rend() && *it >= m.last_us - window_us; ++it) {
        ++m.acquisitions;
        m.first_us = *it;
    }
    m.window_s = static_cast<double>(m.last_us - m.first_us) / 1e6;
    m.allowance_s = allowance_s;
    m.allowed =
        static_cast<int64_t>(std::floor((m.window_s + allowance_s) / item.respawn_s + 1e-9)) + 1;
    if (m.acquisitions <= m.allowed) return std::nullopt;
    m.score = excess_score(static_cast<double>(m.acquisitions), static_cast<double>(m.allowed));
    return m;
}

}  // namespace arbiter::reference
