// The asynchronous reload of one plugin, written once for every host that keeps the stream
// flowing while a new version loads (serve's event thread, the C API's begin_reload):
//
//   begin(plugin)     the plugin's settings as they are now go to `start_load`, which runs
//                     Host::prepare_plugin off the pushing thread;
//   loaded(slot)      the slot it made, back on the pushing thread: Host::begin_install;
//   collect()         between two pushes: the staged installs that went over since;
//
// and a report ends each reload. A slot made from settings the config changed meanwhile
// (a stale report) is loaded again from the settings as they are then, and no report is
// given for it: the reload goes on. What owns the threads (a loader thread and a queue, a
// future) stays with the owner; what a reload is, is here.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arbiter/host/host.hpp"

namespace arbiter::host {

class ReloadCoordinator {
  public:
    // Runs Host::prepare_plugin(settings) away from the pushing thread and hands the slot
    // to loaded(), on the pushing thread. May be called from inside begin(), loaded() and
    // collect().
    using StartLoad = std::function<void(const PluginSettings& settings)>;
    // Takes a generation no longer wanted (the one replaced, or a new one never
    // installed), to destroy off the event path (Host::release_retired). Null: destroyed
    // here.
    using Retire = std::function<void(PluginSlot retired)>;

    ReloadCoordinator(Host& host, StartLoad start_load, Retire retire = {});

    // Begins a reload of `plugin` from its settings as they are now. The report at once,
    // refused, when no such plugin is configured; nullopt when the load has started.
    std::optional<ReloadReport> begin(const std::string& plugin);
    // A load started by this coordinator has made its slot: installs it. The reports of
    // the reloads that ended (none while a staged install goes over, or when the slot was
    // stale and is loading again). What begin_install throws ends the reload and is
    // passed on.
    std::vector<ReloadReport> loaded(PluginSlot prepared);
    // The staged installs that ended since the last call. Cheap when none is under way.
    std::vector<ReloadReport> collect();
    // Whether a reload of `plugin` begun here has not ended yet (loading or going over).
    bool under_way(const std::string& plugin) const { return under_way_.count(plugin) > 0; }

  private:
    // A report ends its reload, unless it is stale: then the load starts again.
    void settle(ReloadReport report, std::vector<ReloadReport>& ended);
    void retire(PluginSlot slot);

    Host& host_;
    StartLoad start_load_;
    Retire retire_;
    std::set<std::string> under_way_;
};

}  // namespace arbiter::host
