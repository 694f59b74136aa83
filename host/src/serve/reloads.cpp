// The event thread's reloads and config changes, asked for by `arbiter ctl` or a file
// that changed: the slow part (loading a plugin, reading a config) on the loader
// thread, the swap between two batches here, and what each asker is told.
#include "serve/event_processor.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "serve/serve_protocol.hpp"

namespace arbiter::host::serve {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

json report_json(const ReloadReport& report) {
    return {{"plugin", report.plugin},
            {"change", report.change},
            {"ok", report.ok},
            {"error", report.error},
            {"from_version", report.from_version},
            {"to_version", report.to_version},
            {"state", report.state},
            {"pause_us", report.pause_us},
            // Staged (shard by shard while the stream went on): pause_us is the longest a
            // shard's matches were held, elapsed_us the time until the last was across.
            {"staged", report.staged},
            {"elapsed_us", report.elapsed_us},
            // Of the carry, summed over shards: the old version's save, the new one's restore.
            {"save_us", report.save_us},
            {"restore_us", report.restore_us},
            {"message", report.describe()}};
}

namespace {

std::string joined(const std::vector<std::string>& parts, const char* between) {
    std::string text;
    for (const auto& part : parts)
        text += (text.empty() ? "" : between) + part;
    return text;
}

// What an applied config change did to each plugin of the file, as `plugins` (for
// `ctl reload --json`), and in one line. Without it a change that added nothing, or whose
// plugins were all unchanged, answered `ctl reload` with no output at all, and the log
// said only that it was being applied.
std::string applied_summary(const std::vector<ReloadReport>& reports, const Host& host,
                            bool aggregation_changed, json& plugins) {
    auto report_of = [&](const std::string& name) -> const ReloadReport* {
        for (const auto& report : reports)
            if (report.plugin == name) return &report;
        return nullptr;
    };
    // In this order, each with the plugins it names.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
        {"added", {}},   {"reloaded", {}}, {"took a new table", {}}, {"new settings", {}},
        {"removed", {}}, {"disabled", {}}, {"still refused", {}},    {"unchanged", {}}};
    auto add = [&](size_t group, const std::string& name, const std::string& outcome,
                   const std::string& version, const std::string& shown) {
        groups[group].second.push_back(shown);
        plugins.push_back({{"plugin", name}, {"outcome", outcome}, {"version", version}});
    };
    for (const PluginSlot& slot : host.plugins()) {
        const std::string& name = slot.settings.name;
        const std::string version = slot.active() ? slot.library->identity().version : "";
        const ReloadReport* report = report_of(name);
        const std::string change = report ? report->change : "";
        if (change == "added")
            add(0, name, "added", version, name + " " + version);
        else if (change == "reload")
            add(1, name, "reloaded", version,
                fmt::format("{} {} -> {}", name,
                            report->from_version.empty() ? "(none)" : report->from_version,
                            version));
        else if (change == "reconfigured")
            add(2, name, "reconfigured", version, name + " " + version);
        else if (change == "settings")
            add(3, name, "settings", version, name + " " + version);
        else if (!slot.active())
            add(6, name, "refused", version, name);
        else
            add(7, name, "unchanged", version, name + " " + version);
    }
    bool changed = aggregation_changed;
    for (const PluginSettings& settings : host.config().plugins) {
        if (settings.enabled) continue;
        // Disabled now, when it ran before: its generation was removed by this change.
        const ReloadReport* report = report_of(settings.name);
        changed = changed || report;
        add(5, settings.name, "disabled", "", settings.name);
    }
    for (const auto& report : reports)
        if (report.change == "removed" &&
            std::none_of(host.config().plugins.begin(), host.config().plugins.end(),
                         [&](const PluginSettings& s) { return s.name == report.plugin; }))
            add(4, report.plugin, "removed", report.from_version, report.plugin);

    std::vector<std::string> parts;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (groups[i].second.empty()) continue;
        changed = changed || i <= 4;
        parts.push_back(groups[i].first + " " + joined(groups[i].second, ", "));
    }
    if (host.plugins().empty()) parts.push_back("no plugin enabled");
    if (aggregation_changed) parts.push_back("[aggregation] changed");
    if (report_of("(sinks)")) {
        changed = true;
        parts.push_back("[sinks] changed");
    }
    return std::string(changed ? "applied: " : "nothing changed: ") + joined(parts, "; ");
}

// A refused change in one line: each refusal, without the note every one of them carries.
std::string refused_summary(const std::vector<ReloadReport>& reports) {
    std::vector<std::string> reasons;
    for (const auto& report : reports) {
        if (report.ok) continue;
        std::string error = report.error;
        if (error.ends_with(kConfigNotAppliedNote))
            error.resize(error.size() - std::string_view(kConfigNotAppliedNote).size());
        if (report.plugin == "(sinks)")
            error = "[sinks]: " + error;
        else if (error.find("plugin '" + report.plugin + "'") == std::string::npos)
            error = fmt::format("plugin '{}': {}", report.plugin, error);
        reasons.push_back(error);
    }
    return "NOT applied, the running config stays: " + joined(reasons, "; ");
}

}  // namespace

bool EventProcessor::LoadInFlight::request(uint64_t connection) {
    auto& list = busy ? answer_next : answer_to;
    // At most 16 ctl clients wait at once (the network thread counts a request until its
    // answer), so these lists stay short without dropping anyone.
    if (connection != 0) list.push_back(connection);
    if (busy) {
        again = true;
        return false;
    }
    busy = true;
    return true;
}

std::vector<uint64_t> EventProcessor::LoadInFlight::finish(bool& start_again) {
    std::vector<uint64_t> done = std::move(answer_to);
    answer_to.clear();
    start_again = again;
    busy = again;
    again = false;
    if (start_again) answer_to = std::exchange(answer_next, {});
    return done;
}

void EventProcessor::abandon_load(const Work& work, const std::string& why) {
    // The load's end failed: its waiting clients are told, and the next request starts a
    // load afresh instead of being folded into one that will never come.
    LoadInFlight& load = work.kind == Work::Kind::installed ? reloads_[work.text] : config_load_;
    std::vector<uint64_t> waiting = std::exchange(load.answer_to, {});
    waiting.insert(waiting.end(), load.answer_next.begin(), load.answer_next.end());
    load = LoadInFlight{};
    if (work.kind == Work::Kind::installed) reloads_.erase(work.text);
    answer_all(waiting, {{"ok", false}, {"error", "the load failed: " + why}});
}

void EventProcessor::answer_all(const std::vector<uint64_t>& connections, const json& answer) {
    for (uint64_t connection : connections)
        answer_control(connection, answer);
}

void EventProcessor::release_off_the_event_path(std::vector<PluginSlot> retired) {
    // (Slots that hold no library, refused loads, have nothing to release.)
    std::erase_if(retired, [](const PluginSlot& slot) { return !slot.library; });
    if (retired.empty()) return;
    auto slots = std::make_shared<std::vector<PluginSlot>>(std::move(retired));
    loader_.post([slots] {
        for (PluginSlot& slot : *slots)
            Host::release_retired(std::move(slot));
    });
}

void EventProcessor::request_reload(const std::string& plugin, uint64_t connection) {
    const bool configured =
        std::any_of(host_.plugins().begin(), host_.plugins().end(),
                    [&](const PluginSlot& slot) { return slot.settings.name == plugin; });
    const auto in_flight = reloads_.find(plugin);
    if (!configured && (in_flight == reloads_.end() || !in_flight->second.busy)) {
        const ReloadReport report =
            refused_reload(plugin, "no plugin '" + plugin + "' is configured");
        spdlog::error("{}", report.describe());
        answer_control(connection, {{"ok", false}, {"reports", {report_json(report)}}});
        return;
    }
    if (reloads_[plugin].request(connection)) start_reload(plugin);
}

void EventProcessor::start_reload(const std::string& plugin) {
    if (reloading_.begin(plugin)) {
        // Removed by a config change while a reload of it waited.
        bool again = false;
        const auto waiting = reloads_[plugin].finish(again);
        reloads_.erase(plugin);
        answer_all(waiting,
                   {{"ok", false}, {"error", "no plugin '" + plugin + "' is configured any more"}});
    }
}

// The slow half on the loader thread; the slot comes back here as `installed`.
void EventProcessor::load_off_the_event_path(const PluginSettings& settings) {
    spdlog::info("plugin '{}': loading {} for a reload, off the event path", settings.name,
                 settings.library.string());
    loader_.post([this, settings] {
        Work done;
        done.kind = Work::Kind::installed;
        done.text = settings.name;
        done.prepared = std::make_shared<PluginSlot>(host_.prepare_plugin(settings));
        queue_.push_urgent(std::move(done));
    });
}

void EventProcessor::on_installed(Work& work) {
    // A sharded plugin goes over shard by shard while batches keep coming; its report
    // comes through collect_installs.
    for (const ReloadReport& report : reloading_.loaded(std::move(*work.prepared)))
        finish_reload(report);
}

void EventProcessor::collect_installs() {
    for (const ReloadReport& report : reloading_.collect())
        finish_reload(report);
}

void EventProcessor::finish_reload(const ReloadReport& report) {
    const std::string plugin = report.plugin;
    note_reload(report);
    bool again = false;
    answer_all(reloads_[plugin].finish(again),
               {{"ok", report.ok}, {"reports", {report_json(report)}}});
    if (again)
        start_reload(plugin);  // the file changed (or was asked for) again during the load
    else
        reloads_.erase(plugin);
}

void EventProcessor::note_reload(const ReloadReport& report) {
    ++(report.ok ? reloads_ok_ : reloads_failed_);
    recent_reloads_.push_back(report);
    if (recent_reloads_.size() > 20) recent_reloads_.erase(recent_reloads_.begin());
}

void EventProcessor::request_config(uint64_t connection) {
    if (config_load_.request(connection)) start_config_load();
}

// Reading the file and loading what it adds or changes are the slow part: they run on the
// loader thread while batches flow, and come back as `config_loaded`.
void EventProcessor::start_config_load() {
    spdlog::info("{}: reading it and loading what it adds or changes, off the event path",
                 host_.config().file.string());
    loader_.post([this, file = host_.config().file, running = host_.running_plugins()] {
        auto load = std::make_shared<ConfigLoad>();
        try {
            load->next = load_config(file, options_);
            for (const PluginSettings& settings : Host::plugins_to_load(running, *load->next))
                load->prepared.push_back(host_.prepare_plugin(settings));
        } catch (const ConfigError& error) {
            load->next.reset();
            load->problems = error.problems();
        } catch (const std::exception& error) {
            load->next.reset();
            load->problems = {file.string() + ": " + error.what()};
        }
        Work done;
        done.kind = Work::Kind::config_loaded;
        done.config = std::move(load);
        queue_.push_urgent(std::move(done));
    });
}

void EventProcessor::on_config_loaded(Work& work) {
    ConfigLoad& load = *work.config;
    const auto file = host_.config().file;
    json answer = {{"ok", false}, {"config", file.string()}};
    if (!load.next) {
        // The old config stays, whole.
        for (const auto& problem : load.problems)
            spdlog::error("{} (the config was not applied; the old one stays)", problem);
        answer["error"] = "the config has errors and was not applied; the old one stays";
        answer["problems"] = load.problems;
        answer["summary"] =
            fmt::format("NOT applied, the running config stays: {} problem(s) in the file",
                        load.problems.size());
        spdlog::error("{}: {}", file.string(), answer["summary"].get<std::string>());
    } else {
        ServerConfig next = std::move(*load.next);
        // A plugin reload may have swapped a generation in while this loaded, so that the
        // plugins to load are no longer those prepared: load again rather than load here.
        for (const PluginSettings& needed : Host::plugins_to_load(host_.running_plugins(), next)) {
            const bool have = std::any_of(
                load.prepared.begin(), load.prepared.end(),
                [&](const PluginSlot& slot) { return needed.makes_what(slot.settings); });
            if (!have) {
                spdlog::info("{}: plugin '{}' changed while the config loaded; loading it again",
                             file.string(), needed.name);
                release_off_the_event_path(std::move(load.prepared));
                return start_config_load();
            }
        }
        if (next.serve.unix_socket != host_.config().serve.unix_socket ||
            next.serve.tcp_listen != host_.config().serve.tcp_listen ||
            next.serve.control_socket != host_.config().serve.control_socket ||
            next.serve.metrics_listen != host_.config().serve.metrics_listen)
            spdlog::warn("{}: [serve] sockets changed; they take effect at the next start",
                         file.string());
        next.serve = host_.config().serve;
        const AggregationSettings aggregation_before = host_.config().aggregation;
        json reports = json::array();
        bool all_ok = true;
        std::vector<PluginSlot> retired;
        const std::vector<ReloadReport> applied =
            host_.apply_config(std::move(next), &load.prepared, &retired);
        for (const auto& report : applied) {
            reports.push_back(report_json(report));
            all_ok = all_ok && report.ok;
            note_reload(report);
        }
        for (PluginSlot& unused : load.prepared)
            retired.push_back(std::move(unused));
        release_off_the_event_path(std::move(retired));
        answer["ok"] = all_ok;
        answer["reports"] = reports;
        // apply_config takes a change whole or not at all: one refusal means nothing of it.
        json plugins = json::array();
        const std::string summary =
            all_ok ? applied_summary(applied, host_,
                                     host_.config().aggregation != aggregation_before, plugins)
                   : refused_summary(applied);
        answer["summary"] = summary;
        if (all_ok) answer["plugins"] = plugins;
        all_ok ? spdlog::info("{}: {}", file.string(), summary)
               : spdlog::error("{}: {}", file.string(), summary);
        outbox_.post_watch(watched_files());
    }
    bool again = false;
    answer_all(config_load_.finish(again), answer);
    if (again) start_config_load();  // the file changed (or was asked for) again meanwhile
}

}  // namespace arbiter::host::serve
