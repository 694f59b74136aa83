#include "engine_reports.hpp"

#include <algorithm>

namespace arbiter::luanti {

void EngineReports::add(std::string_view type) {
    auto at = [&](std::string_view name) {
        return std::lower_bound(
            counts_.begin(), counts_.end(), name,
            [](const auto& entry, std::string_view key) { return entry.first < key; });
    };
    auto it = at(type);
    if (it == counts_.end() || it->first != type) {
        if (counts_.size() >= kMostTypes) {
            type = "other";
            it = at(type);
        }
        if (it == counts_.end() || it->first != type)
            it = counts_.emplace(it, std::string(type), 0);
    }
    ++it->second;
}

bool EngineReports::restore(std::vector<std::pair<std::string, int64_t>> counts) {
    if (counts.size() > kMostTypes + 1) return false;  // + "other"
    for (size_t i = 0; i < counts.size(); ++i)
        if (counts[i].second < 0 || (i > 0 && !(counts[i - 1].first < counts[i].first)))
            return false;
    counts_ = std::move(counts);
    return true;
}

Evidence EngineReports::evidence() const {
    Evidence evidence;
    for (const auto& [type, count] : counts_)
        evidence.add(type, count);
    return evidence;
}

}  // namespace arbiter::luanti
