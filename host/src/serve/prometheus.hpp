// GET /metrics of `arbiter serve`: the server's counters, each plugin's calls, time and
// errors, and every metric a plugin records through count() and gauge(), in Prometheus'
// text exposition format (version 0.0.4). Rendering is apart from the sockets, so that
// the text can be tested line by line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arbiter/host/host.hpp"

namespace arbiter::host::serve {

struct MetricsView {
    std::string server_id;
    double uptime_s = 0;
    HostCounters counters;
    uint64_t open_matches = 0;
    uint64_t tracked_players = 0;
    uint64_t queue_bytes = 0, queue_capacity_bytes = 0, queue_peak_bytes = 0;
    uint64_t relay_connections = 0;
    uint64_t reloads_ok = 0, reloads_failed = 0;
    uint64_t store_records_lost = 0;
    struct Plugin {
        std::string name;
        bool active = false;
        uint64_t calls = 0, errors = 0, busy_ns = 0, over_deadline = 0;
        bool isolated = false, quarantined = false;
        uint64_t restarts = 0;
        PluginBounds::Refused past_bounds{};  // what it lost past its bounds
    };
    std::vector<Plugin> plugins;
    // What plugins record: "<plugin>.<metric>" in the host's Metrics, split here.
    struct PluginMetric {
        std::string plugin, name;
        std::string shard;  // a sharded plugin's gauge: which shard's; "" otherwise
        double value = 0;
        bool counter = true;
    };
    std::vector<PluginMetric> plugin_metrics;
};

// The view of a running host: its counters and plugins. Only the event thread may take
// it (the Host is that thread's alone); it is small, one line per plugin.
MetricsView metrics_view(const Host& host);
// Adds to the view those of `metrics` whose name begins with one of its plugins' keys and
// a dot. Any thread may: Metrics has a lock of its own. What plugins record has no bound
// of ours (hundreds of thousands of series take a second to render), so `arbiter serve`
// does this, and the rendering, off the event thread.
void add_plugin_metrics(MetricsView& view, const Metrics& metrics);

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";
std::string render_prometheus(const MetricsView& view);

}  // namespace arbiter::host::serve
