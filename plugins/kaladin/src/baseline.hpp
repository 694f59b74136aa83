// Population baselines: per rating tier, the percentiles of the population's own
// measurements that kaladin's checks compare a player against.
//
// `arbiter baseline` runs a corpus of recorded matches through the plugin in baseline
// mode (baseline_begin ... baseline_end); each player of each match adds one sample per
// metric (their sustained peak rate, whole-match rate, lowest CV, lowest entropy, median
// reaction) to their tier and to the pooled tier "*". The file is a sealed StateWriter
// blob (tag "KLB1"): a damaged or foreign file is refused, never half read.
//
// The plugin has no wall clock; the file records the relay wall-clock range of the corpus
// (MatchStart.started_unix_us) and `arbiter baseline` writes the date it ran beside it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace arbiter::kaladin {

enum class Metric : uint8_t {
    peak_rate = 0,       // the busiest 30 s, distinct inputs a minute
    match_rate = 1,      // the whole match, distinct inputs a minute
    min_cv = 2,          // the lowest trimmed CV of any window
    min_entropy = 3,     // the lowest entropy of any window, bits
    median_reaction = 4  // ms, corrected; players with enough pairs only
};
inline constexpr size_t kMetricCount = 5;
const char* metric_name(Metric metric);

// The percentiles a baseline keeps of each metric: both far tails and the middle.
inline constexpr std::array<double, 5> kPercentiles = {0.1, 1.0, 50.0, 99.0, 99.9};

struct MetricPercentiles {
    uint64_t samples = 0;
    std::array<double, kPercentiles.size()> values{};  // in the order of kPercentiles
    // The value at percentile p (one of kPercentiles).
    double at(double p) const;
};

struct TierBaseline {
    uint64_t players = 0;
    std::array<MetricPercentiles, kMetricCount> metrics{};
    const MetricPercentiles& operator[](Metric m) const { return metrics[static_cast<size_t>(m)]; }
};

struct BaselineFile {
    static constexpr const char* kPooledTier = "*";
    uint64_t matches = 0;
    int64_t corpus_from_unix_us = 0;  // the earliest match start in the corpus, 0 unknown
    int64_t corpus_to_unix_us = 0;    // the latest
    std::map<std::string, TierBaseline> tiers;

    std::vector<uint8_t> write() const;
    // Throws StateError for a damaged, foreign or inconsistent file.
    static BaselineFile read(std::span<const uint8_t> bytes);
};

// Gathers samples while a corpus runs.
class BaselineCollector {
  public:
    void add_match(int64_t started_unix_us);
    void add(const std::string& tier, Metric metric, double value);
    void add_player(const std::string& tier);
    BaselineFile finish() const;

  private:
    struct Samples {
        uint64_t players = 0;
        std::array<std::vector<double>, kMetricCount> values;
    };
    std::map<std::string, Samples> tiers_;
    uint64_t matches_ = 0;
    std::optional<int64_t> from_, to_;
};

// Percentile p (0..100) of values, linear between order statistics.
double percentile(std::vector<double> values, double p);

}  // namespace arbiter::kaladin
