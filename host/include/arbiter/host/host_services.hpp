// The services the host offers plugins (arb_host_services): log, relay clock, metrics.
// An arb_host* handed to a plugin points at a ServiceContext.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include <arbiter/arbiter_plugin.h>

namespace arbiter::host {

class PluginBounds;

// Counters and gauges, by name. Thread-safe.
class Metrics {
  public:
    // A name only ever added to is a counter; one that was set, a gauge.
    struct Value {
        double value = 0;
        bool counter = true;
    };
    void add(const std::string& name, double value);
    void set(const std::string& name, double value);
    double get(const std::string& name) const;
    std::map<std::string, double> snapshot() const;
    std::map<std::string, Value> entries() const;
    // Whether `owner` (a plugin) may record under `name`: one it has used before, or a new
    // one while it has used fewer than `limit`. Kept here, with the names, so that a new
    // generation of the plugin finds the names of the old one already counted.
    bool admit_name(const std::string& owner, std::string_view name, uint64_t limit);

  private:
    mutable std::mutex mutex_;
    std::map<std::string, Value> values_;
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> names_by_owner_;
};

// What one arb_host* stands for: a plugin library (negotiation) or one instance.
struct ServiceContext {
    std::string plugin_name;
    Metrics* metrics = nullptr;
    // Added to a gauge's name ("#3") by an instance that is one shard of several: each
    // shard's gauge measures its own matches, and one name would show whichever shard set
    // it last. Counters are summed under the plain name. ('#' is in no metric name a
    // plugin may give, so the shard is told apart: Prometheus gets it as a label.)
    std::string gauge_suffix;
    // The relay time of the batch in hand; written by the dispatching thread before
    // each call, read by the plugin on the same thread.
    std::atomic<int64_t> relay_time_us{0};
    // Drops the plugin's log lines and metrics (AnalyzerInstance::set_quiet).
    std::atomic<bool> quiet{false};
    // What the plugin may take of the host's log and metrics; null: unbounded (a library
    // being negotiated, before any instance exists).
    std::shared_ptr<PluginBounds> bounds;

    arb_host* handle() { return reinterpret_cast<arb_host*>(this); }
};

const arb_host_services* host_services_table();

// Called first thing in a forked copy of the host (SnapshotHandover): from then on every
// service drops what it is given. The fork copied only the thread that made it, so a lock
// another thread held then (the log's, the metrics') stays held forever in the copy.
void services_in_forked_copy();

// Whether a metric name a plugin chose is acceptable: [a-z0-9_.], 1 to 64 bytes.
bool valid_metric_name(std::string_view name);

}  // namespace arbiter::host
