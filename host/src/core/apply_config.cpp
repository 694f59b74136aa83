// Live reconfiguration: a changed server_config.toml applied between two batches. Each
// plugin is kept, reconfigured through its configure slot, or loaded afresh and swapped
// in as a reload does (reload.cpp); the host's own settings change in place.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/elf_symbols.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/host/sharded_instance.hpp"

namespace arbiter::host {

namespace {

// What a config change does to one enabled plugin.
enum class ConfigStep {
    load,         // load it afresh: it is new, or its library (or its table, without
                  // the capability to take one live) changed, or it is not running
    keep,         // the same library and table: at most new host-side settings
    reconfigure,  // a new table or baseline, taken live through configure
};

ConfigStep step_for(const PluginSettings* running, bool active, bool can_reconfigure,
                    const PluginSettings& wanted) {
    // A new pin or signer is checked by loading the file again against it. A new isolation
    // (into a child, out of one, other limits for it) is a new instance: the running one
    // cannot move across the process boundary, and keeping it while the settings say
    // otherwise would have `ctl status` report a child that does not exist. New bounds
    // come with a new generation too (each holds its own, plugin_bounds.hpp).
    if (!running || !active || running->library != wanted.library ||
        running->pin() != wanted.pin() || running->isolation != wanted.isolation ||
        running->limits != wanted.limits)
        return ConfigStep::load;
    if (running->config == wanted.config && running->baseline == wanted.baseline)
        return ConfigStep::keep;
    return can_reconfigure ? ConfigStep::reconfigure : ConfigStep::load;
}

}  // namespace

std::vector<Host::RunningPlugin> Host::running_plugins() const {
    std::vector<RunningPlugin> running;
    for (const auto& slot : dispatcher_.slots())
        running.push_back(
            {.settings = slot.settings,
             .active = slot.active(),
             .can_reconfigure = slot.active() && slot.library->has(ARB_CAP_RECONFIGURE)});
    return running;
}

std::vector<PluginSettings> Host::plugins_to_load(const std::vector<RunningPlugin>& running,
                                                  const ServerConfig& next) {
    std::vector<PluginSettings> loads;
    for (const PluginSettings& wanted : next.plugins) {
        if (!wanted.enabled) continue;
        auto it = std::find_if(running.begin(), running.end(), [&](const RunningPlugin& r) {
            return r.settings.name == wanted.name;
        });
        const bool found = it != running.end();
        if (step_for(found ? &it->settings : nullptr, found && it->active,
                     found && it->can_reconfigure, wanted) == ConfigStep::load)
            loads.push_back(wanted);
    }
    return loads;
}

std::vector<ReloadReport> Host::apply_config(ServerConfig next, std::vector<PluginSlot>* prepared,
                                             std::vector<PluginSlot>* retired) {
    refuse_inside_take_in("apply a config");
    settle_install();
    catch_up();  // the batches pushed before the change run as things were
    // A fresh generation of a plugin: the one prepared off the event path, else loaded now.
    auto fresh_slot = [&](const PluginSettings& settings) {
        if (prepared) {
            auto it = std::find_if(prepared->begin(), prepared->end(), [&](const PluginSlot& slot) {
                return settings.makes_what(slot.settings);
            });
            if (it != prepared->end()) {
                PluginSlot slot = std::move(*it);
                prepared->erase(it);
                slot.settings = settings;
                if (slot.active())
                    slot.model_class =
                        settings.model_class.value_or(slot.library->identity().declared_class);
                return slot;
            }
        }
        return load_plugin_slot(settings, plugin_copies_, metrics_, config_.host.plugin_runner,
                                shards_);
    };
    auto running = [&](const std::string& name) -> PluginSlot* { return dispatcher_.find(name); };

    if (next.host.work_dir != config_.host.work_dir)
        spdlog::warn("host.work_dir changed: it takes effect at the next start, not on a reload");
    next.host.work_dir = config_.host.work_dir;
    // Unset in the new file means "as before" here: the count is fixed at start (and an
    // embedded host's unset count was made 1 there).
    if (next.host.threads && next.host.threads != config_.host.threads)
        spdlog::warn("host.threads changed: it takes effect at the next start, not on a reload");
    next.host.threads = config_.host.threads;

    // First everything that can fail without touching what runs: each fresh generation the
    // change needs, and the new security-event log. One that fails refuses the whole
    // config, so that the host never runs half of one file and half of another.
    struct Change {
        const PluginSettings* settings;
        ConfigStep step;
        PluginSlot fresh;  // step == load
    };
    std::vector<Change> changes;
    std::vector<ReloadReport> refusals;
    for (const PluginSettings& settings : next.plugins) {
        if (!settings.enabled) continue;
        const PluginSlot* old = running(settings.name);
        Change change{
            &settings,
            old ? step_for(&old->settings, old->active(),
                           old->active() && old->library->has(ARB_CAP_RECONFIGURE), settings)
                : ConfigStep::load,
            {}};
        if (change.step == ConfigStep::load) {
            change.fresh = fresh_slot(settings);
            // A plugin refused before and refused again under the same table is not part
            // of this change: it stays refused, and the rest applies.
            const bool refused_as_before =
                old && !old->active() && old->settings.makes_what(settings);
            if (!change.fresh.active() && !refused_as_before) {
                ReloadReport report;
                report.plugin = settings.name;
                report.change = old ? "reload" : "added";
                report.from_version = old && old->active() ? old->library->identity().version : "";
                report.error = change.fresh.error;
                refusals.push_back(std::move(report));
            }
        }
        changes.push_back(std::move(change));
    }
    const bool sinks_changed =
        next.sinks.security_log != config_.sinks.security_log ||
        next.sinks.report_threshold != config_.sinks.report_threshold ||
        next.host.server_id != config_.host.server_id ||
        next.aggregation.review_threshold != config_.aggregation.review_threshold;
    std::shared_ptr<SecurityEventLog> new_security_log;
    if (sinks_changed && !next.sinks.security_log.empty()) {
        // Opened before the old one is let go: a path that cannot be written refuses.
        try {
            new_security_log = std::make_shared<SecurityEventLog>(
                next.sinks.security_log, next.host.server_id, next.sinks.report_threshold,
                next.aggregation.review_threshold);
        } catch (const std::exception& error) {
            ReloadReport report;
            report.plugin = "(sinks)";
            report.change = "settings";
            report.error = error.what();
            refusals.push_back(std::move(report));
        }
    }
    auto release = [&](PluginSlot slot) {
        if (!slot.library) return;
        if (retired)
            retired->push_back(std::move(slot));
        else
            release_retired(std::move(slot));
    };
    auto refuse_whole = [&](std::vector<ReloadReport> reports) {
        for (Change& change : changes)
            release(std::move(change.fresh));
        for (ReloadReport& report : reports) {
            report.ok = false;
            report.error += kConfigNotAppliedNote;
            spdlog::error("{}", report.describe());
        }
        return reports;
    };
    if (!refusals.empty()) return refuse_whole(std::move(refusals));

    // Then the live reconfigurations, which the plugins may refuse: one refused puts those
    // already taken back to their old tables.
    std::vector<ReloadReport> reports;
    std::vector<std::pair<PluginSlot*, PluginSettings>> reconfigured;  // with the old settings
    for (Change& change : changes) {
        if (change.step != ConfigStep::reconfigure) continue;
        const PluginSettings& settings = *change.settings;
        PluginSlot& slot = *running(settings.name);
        ReloadReport report;
        report.plugin = settings.name;
        report.change = "reconfigured";
        report.to_version = slot.library->identity().version;
        try {
            auto result = slot.instance->configure(settings, read_plugin_baseline(settings));
            report.ok = result.ok();
            if (result.status == ARB_ERR_CONFIG)
                report.error = describe_config_refusal(settings, result.error);
            else if (!result.ok())
                report.error = fmt::format("{}: plugin '{}': configure failed with {}: {}",
                                           settings.position.str(), settings.name,
                                           status_name(result.status), result.error);
        } catch (const PluginError& error) {
            report.error = error.what();
        }
        if (!report.ok) {
            for (auto& [taken, old_settings] : reconfigured) {
                CallResult undone;
                try {
                    undone = taken->instance->configure(old_settings,
                                                        read_plugin_baseline(old_settings));
                } catch (const PluginError& error) {
                    undone.status = ARB_ERR_CONFIG;
                    undone.error = error.what();
                }
                if (!undone.ok())
                    spdlog::error(
                        "plugin '{}': could not take its old table back ({}: {}); it "
                        "runs with the new one",
                        old_settings.name, status_name(undone.status), undone.error);
                else
                    taken->settings = std::move(old_settings);
            }
            return refuse_whole({std::move(report)});
        }
        reconfigured.emplace_back(&slot, slot.settings);
        slot.settings = settings;
        slot.model_class = settings.model_class.value_or(slot.library->identity().declared_class);
        reports.push_back(std::move(report));
    }

    // Nothing can fail from here on.
    aggregator_.set_settings(next.aggregation);
    std::vector<PluginSlot> old_slots = dispatcher_.take_slots();
    std::vector<PluginSlot> slots;
    auto take_old = [&](const std::string& name) -> std::optional<PluginSlot> {
        auto it = std::find_if(old_slots.begin(), old_slots.end(),
                               [&](const PluginSlot& s) { return s.settings.name == name; });
        if (it == old_slots.end()) return std::nullopt;
        PluginSlot slot = std::move(*it);
        old_slots.erase(it);
        return slot;
    };
    for (Change& change : changes) {
        const PluginSettings& settings = *change.settings;
        ReloadReport report;
        report.plugin = settings.name;
        std::optional<PluginSlot> old = take_old(settings.name);
        if (!old) {
            report.change = "added";
            report.ok = change.fresh.active();
            report.error = change.fresh.error;
            if (change.fresh.active()) report.to_version = change.fresh.library->identity().version;
            slots.push_back(std::move(change.fresh));
            reports.push_back(report);
            continue;
        }
        PluginSlot slot = std::move(*old);
        if (change.step == ConfigStep::keep) {
            const bool changed = slot.settings.weight != settings.weight ||
                                 slot.settings.model_class != settings.model_class ||
                                 slot.settings.tripwires != settings.tripwires ||
                                 slot.settings.deadline_ms != settings.deadline_ms;
            slot.settings = settings;
            slot.model_class =
                settings.model_class.value_or(slot.library->identity().declared_class);
            if (changed) {
                report.change = "settings";
                report.ok = true;
                reports.push_back(report);
            }
        } else if (change.step == ConfigStep::load) {
            PluginSlot replaced;
            report = swap_in(slot, std::move(change.fresh), retired ? &replaced : nullptr);
            if (retired && replaced.library) retired->push_back(std::move(replaced));
            reports.push_back(report);
        }
        slots.push_back(std::move(slot));
    }
    for (PluginSlot& gone : old_slots) {
        ReloadReport report;
        report.plugin = gone.settings.name;
        report.change = "removed";
        report.ok = true;
        if (gone.active()) report.from_version = gone.library->identity().version;
        reports.push_back(report);
    }
    // The removed plugins' instances are destroyed and their libraries released: off the
    // event path when the caller asked, else now.
    for (PluginSlot& gone : old_slots)
        release(std::move(gone));
    old_slots.clear();
    dispatcher_.set_slots(std::move(slots));

    if (sinks_changed) {
        if (security_log_) {
            security_log_->flush();
            sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), security_log_), sinks_.end());
        }
        security_log_ = std::move(new_security_log);
        if (security_log_) add_sink(security_log_);
        ReloadReport report;
        report.plugin = "(sinks)";
        report.change = "settings";
        report.ok = true;
        reports.push_back(report);
    }
    config_ = std::move(next);
    for (const auto& report : reports)
        report.ok ? spdlog::info("{}", report.describe()) : spdlog::error("{}", report.describe());
    return reports;
}

}  // namespace arbiter::host
