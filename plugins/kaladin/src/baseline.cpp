#include "baseline.hpp"

#include <algorithm>
#include <cmath>

#include <arbiter/sdk/state.hpp>

namespace arbiter::kaladin {

namespace {
constexpr const char* kTag = "KLB1";
constexpr uint32_t kVersion = 1;
// A tier name is a rating tier from PlayerJoin; anything longer is a damaged file.
constexpr size_t kMaxTierName = 256;
}  // namespace

const char* metric_name(Metric metric) {
    switch (metric) {
        case Metric::peak_rate:
            return "peak_rate_per_min";
        case Metric::match_rate:
            return "match_rate_per_min";
        case Metric::min_cv:
            return "min_cv";
        case Metric::min_entropy:
            return "min_entropy_bits";
        case Metric::median_reaction:
            return "median_reaction_ms";
    }
    return "?";
}

double MetricPercentiles::at(double p) const {
    for (size_t i = 0; i < kPercentiles.size(); ++i)
        if (kPercentiles[i] == p) return values[i];
    return std::nan("");
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return std::nan("");
    std::sort(values.begin(), values.end());
    const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
    const auto below = static_cast<size_t>(std::floor(rank));
    const size_t above = std::min(below + 1, values.size() - 1);
    const double f = rank - static_cast<double>(below);
    return values[below] + f * (values[above] - values[below]);
}

void BaselineCollector::add_match(int64_t started_unix_us) {
    ++matches_;
    if (started_unix_us <= 0) return;
    from_ = std::min(from_.value_or(started_unix_us), started_unix_us);
    to_ = std::max(to_.value_or(started_unix_us), started_unix_us);
}

void BaselineCollector::add_player(const std::string& tier) {
    ++tiers_[tier].players;
    ++tiers_[BaselineFile::kPooledTier].players;
}

void BaselineCollector::add(const std::string& tier, Metric metric, double value) {
    if (!std::isfinite(value)) return;
    tiers_[tier].values[static_cast<size_t>(metric)].push_back(value);
    tiers_[BaselineFile::kPooledTier].values[static_cast<size_t>(metric)].push_back(value);
}

BaselineFile BaselineCollector::finish() const {
    BaselineFile file;
    file.matches = matches_;
    file.corpus_from_unix_us = from_.value_or(0);
    file.corpus_to_unix_us = to_.value_or(0);
    for (const auto& [name, samples] : tiers_) {
        TierBaseline& tier = file.tiers[name];
        tier.players = samples.players;
        for (size_t m = 0; m < kMetricCount; ++m) {
            MetricPercentiles& out = tier.metrics[m];
            out.samples = samples.values[m].size();
            for (size_t i = 0; i < kPercentiles.size(); ++i)
                out.values[i] = out.samples ? percentile(samples.values[m], kPercentiles[i]) : 0.0;
        }
    }
    return file;
}

std::vector<uint8_t> BaselineFile::write() const {
    StateWriter out(kTag, kVersion);
    out.put<uint64_t>(matches);
    out.put<int64_t>(corpus_from_unix_us);
    out.put<int64_t>(corpus_to_unix_us);
    out.put<uint64_t>(kMetricCount);
    out.put<uint64_t>(kPercentiles.size());
    for (double p : kPercentiles)
        out.put<double>(p);
    out.put<uint64_t>(tiers.size());
    for (const auto& [name, tier] : tiers) {
        out.put_string(name);
        out.put<uint64_t>(tier.players);
        for (const MetricPercentiles& m : tier.metrics) {
            out.put<uint64_t>(m.samples);
            for (double v : m.values)
                out.put<double>(v);
        }
    }
    return out.finish();
}

BaselineFile BaselineFile::read(std::span<const uint8_t> bytes) {
    StateReader in(bytes, kTag, kVersion);
    BaselineFile file;
    file.matches = in.get<uint64_t>();
    file.corpus_from_unix_us = in.get_relay_time("corpus start");
    file.corpus_to_unix_us = in.get_relay_time("corpus end");
    if (in.get<uint64_t>() != kMetricCount)
        throw StateError("baseline file has another set of metrics than this kaladin");
    if (in.get<uint64_t>() != kPercentiles.size())
        throw StateError("baseline file has another set of percentiles than this kaladin");
    for (double p : kPercentiles)
        if (in.get<double>() != p)
            throw StateError("baseline file has another set of percentiles than this kaladin");
    const uint64_t count = in.get_count(8 + 8);
    for (uint64_t t = 0; t < count; ++t) {
        std::string name = in.get_string();
        if (name.size() > kMaxTierName) throw StateError("baseline file has a damaged tier name");
        TierBaseline tier;
        tier.players = in.get<uint64_t>();
        for (MetricPercentiles& m : tier.metrics) {
            m.samples = in.get<uint64_t>();
            for (double& v : m.values) {
                v = in.get<double>();
                if (!std::isfinite(v))
                    throw StateError("baseline file holds a non-finite percentile");
            }
            if (m.samples > tier.players)
                throw StateError("baseline file tier '" + name + "' has more samples than players");
        }
        if (!file.tiers.emplace(std::move(name), tier).second)
            throw StateError("baseline file names a tier twice");
    }
    in.finish();
    return file;
}

}  // namespace arbiter::kaladin
