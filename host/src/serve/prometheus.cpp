#include "prometheus.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

namespace arbiter::host::serve {

namespace {

// A label value: backslash, double quote and line feed escaped, as the format asks. Plugin
// keys and metric names are already plain ([a-z0-9_.-]); the server id is the operator's.
std::string label(std::string_view value) {
    std::string out;
    for (char c : value) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string number(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", value);
}

class Exposition {
  public:
    // One family: its HELP and TYPE once, then its samples.
    void family(std::string_view name, std::string_view type, std::string_view help) {
        text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    }
    void sample(std::string_view name, std::string_view labels, double value) {
        text_ += fmt::format("{}{}{}{} {}\n", name, labels.empty() ? "" : "{", labels,
                             labels.empty() ? "" : "}", number(value));
    }
    void single(std::string_view name, std::string_view type, std::string_view help, double value) {
        family(name, type, help);
        sample(name, "", value);
    }
    std::string take() { return std::move(text_); }

  private:
    std::string text_;
};

}  // namespace

MetricsView metrics_view(const Host& host) {
    MetricsView view;
    view.server_id = host.config().host.server_id;
    view.counters = host.counters();
    view.open_matches = host.open_matches().size();
    view.tracked_players = host.tracked_players();
    view.store_records_lost = host.store_records_lost();
    for (const auto& slot : host.plugins()) {
        const IsolationStatus isolated =
            slot.active() ? slot.instance->isolation() : IsolationStatus{};
        // Isolated as the instance is, not as the settings ask (a change may be loading).
        view.plugins.push_back({slot.settings.name, slot.active(), slot.stats.calls,
                                slot.stats.errors, slot.stats.busy_ns, slot.stats.over_deadline,
                                isolated.isolated, !isolated.quarantined.empty(),
                                isolated.restarts,
                                slot.bounds ? slot.bounds->refused() : PluginBounds::Refused{}});
    }
    return view;
}

void add_plugin_metrics(MetricsView& view, const Metrics& metrics) {
    std::set<std::string, std::less<>> plugin_keys;
    for (const auto& plugin : view.plugins)
        plugin_keys.insert(plugin.name);
    for (const auto& [name, value] : metrics.entries()) {
        const size_t dot = name.find('.');
        if (dot == std::string::npos || !plugin_keys.count(std::string_view(name).substr(0, dot)))
            continue;
        std::string metric = name.substr(dot + 1), shard;
        if (const size_t hash = metric.find('#'); hash != std::string::npos) {
            shard = metric.substr(hash + 1);
            metric.resize(hash);
        }
        view.plugin_metrics.push_back(
            {name.substr(0, dot), std::move(metric), std::move(shard), value.value, value.counter});
    }
}

std::string render_prometheus(const MetricsView& view) {
    Exposition out;
    out.family("arbiter_info", "gauge", "The server, by its [host] server_id.");
    out.sample("arbiter_info", fmt::format("server_id=\"{}\"", label(view.server_id)), 1);
    out.single("arbiter_uptime_seconds", "gauge", "Seconds since the server started.",
               view.uptime_s);
    const HostCounters& c = view.counters;
    out.single("arbiter_batches_total", "counter", "Batches accepted.",
               static_cast<double>(c.batches));
    out.single("arbiter_events_total", "counter", "Events in accepted batches.",
               static_cast<double>(c.events));
    out.single("arbiter_refused_batches_total", "counter",
               "Batches refused: failed ingest, duplicates, relay time going back.",
               static_cast<double>(c.refused_batches));
    out.single("arbiter_lost_stretches_total", "counter", "Gaps in a match's batch sequence.",
               static_cast<double>(c.lost_stretches));
    out.single("arbiter_signals_total", "counter", "Signals accepted from plugins.",
               static_cast<double>(c.signals));
    out.single("arbiter_matches_ended_total", "counter", "Matches ended.",
               static_cast<double>(c.matches_ended));
    out.single("arbiter_open_matches", "gauge", "Matches with batches and no end yet.",
               static_cast<double>(view.open_matches));
    out.single("arbiter_tracked_players", "gauge",
               "Players held for assessment: those of the matches in play.",
               static_cast<double>(view.tracked_players));
    out.single("arbiter_queue_bytes", "gauge", "Bytes received and not yet processed.",
               static_cast<double>(view.queue_bytes));
    out.single("arbiter_queue_capacity_bytes", "gauge", "serve.max_queued_bytes.",
               static_cast<double>(view.queue_capacity_bytes));
    out.single("arbiter_queue_peak_bytes", "gauge",
               "The most bytes ever waiting (at most the capacity and one batch).",
               static_cast<double>(view.queue_peak_bytes));
    out.single("arbiter_relay_connections", "gauge", "Relays connected now.",
               static_cast<double>(view.relay_connections));
    out.single("arbiter_store_records_lost_total", "counter",
               "Records the [store] could not take (past max_queued, or left at the stop).",
               static_cast<double>(view.store_records_lost));
    out.family("arbiter_reloads_total", "counter", "Plugin reloads, by result.");
    out.sample("arbiter_reloads_total", "result=\"ok\"", static_cast<double>(view.reloads_ok));
    out.sample("arbiter_reloads_total", "result=\"failed\"",
               static_cast<double>(view.reloads_failed));

    auto per_plugin = [&](std::string_view name, std::string_view type, std::string_view help,
                          auto value_of) {
        out.family(name, type, help);
        for (const auto& plugin : view.plugins)
            out.sample(name, fmt::format("plugin=\"{}\"", label(plugin.name)), value_of(plugin));
    };
    using Plugin = MetricsView::Plugin;
    per_plugin("arbiter_plugin_active", "gauge", "1 when the plugin runs, 0 when it was refused.",
               [](const Plugin& p) { return p.active ? 1.0 : 0.0; });
    per_plugin("arbiter_plugin_calls_total", "counter", "Calls into the plugin.",
               [](const Plugin& p) { return static_cast<double>(p.calls); });
    per_plugin("arbiter_plugin_errors_total", "counter", "Calls the plugin failed.",
               [](const Plugin& p) { return static_cast<double>(p.errors); });
    per_plugin("arbiter_plugin_busy_seconds_total", "counter", "Time spent inside the plugin.",
               [](const Plugin& p) { return static_cast<double>(p.busy_ns) / 1e9; });
    per_plugin("arbiter_plugin_over_deadline_total", "counter",
               "Calls into the plugin longer than its deadline_ms.",
               [](const Plugin& p) { return static_cast<double>(p.over_deadline); });
    per_plugin("arbiter_plugin_isolated", "gauge",
               "1 when the plugin runs in a confined child process (isolation = \"process\").",
               [](const Plugin& p) { return p.isolated ? 1.0 : 0.0; });
    per_plugin("arbiter_plugin_restarts_total", "counter",
               "Child processes of an isolated plugin started again after a fault.",
               [](const Plugin& p) { return static_cast<double>(p.restarts); });
    per_plugin("arbiter_plugin_quarantined", "gauge",
               "1 when an isolated plugin failed too often and gets no more calls.",
               [](const Plugin& p) { return p.quarantined ? 1.0 : 0.0; });
    // What plugins lost past their bounds ([plugins.NAME] max_signals_per_call and the rest).
    out.family("arbiter_plugin_dropped_total", "counter",
               "What a plugin gave past its bounds and the host dropped, by kind.");
    for (const auto& plugin : view.plugins) {
        const PluginBounds::Refused& past = plugin.past_bounds;
        for (const auto& [kind, count] :
             {std::pair{"log_lines", past.log_lines}, std::pair{"metric_names", past.metric_names},
              std::pair{"signals_over_bound", past.signals_over_bound},
              std::pair{"signals_about_strangers", past.signals_about_strangers}})
            out.sample("arbiter_plugin_dropped_total",
                       fmt::format("plugin=\"{}\",kind=\"{}\"", label(plugin.name), kind),
                       static_cast<double>(count));
    }

    // A plugin's own metrics keep their names as a label: they are the plugin's to choose,
    // and Prometheus names cannot hold the dots they may have.
    for (const bool counter : {true, false}) {
        const char* name = counter ? "arbiter_plugin_metric_total" : "arbiter_plugin_metric";
        bool any = false;
        for (const auto& metric : view.plugin_metrics) {
            if (metric.counter != counter) continue;
            if (!any)
                out.family(
                    name, counter ? "counter" : "gauge",
                    counter ? "What plugins count (count())." : "What plugins gauge (gauge()).");
            any = true;
            out.sample(
                name,
                fmt::format("plugin=\"{}\",name=\"{}\"{}", label(metric.plugin), label(metric.name),
                            metric.shard.empty() ? std::string()
                                                 : fmt::format(",shard=\"{}\"", label(metric.shard))),
                metric.value);
        }
    }
    return out.take();
}

}  // namespace arbiter::host::serve
