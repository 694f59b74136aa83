#include "arbiter/host/reload_coordinator.hpp"

#include <utility>

namespace arbiter::host {

namespace {

const PluginSettings* settings_of(const Host& host, const std::string& plugin) {
    for (const PluginSlot& slot : host.plugins())
        if (slot.settings.name == plugin) return &slot.settings;
    return nullptr;
}

}  // namespace

ReloadCoordinator::ReloadCoordinator(Host& host, StartLoad start_load, Retire retire)
    : host_(host), start_load_(std::move(start_load)), retire_(std::move(retire)) {}

std::optional<ReloadReport> ReloadCoordinator::begin(const std::string& plugin) {
    const PluginSettings* settings = settings_of(host_, plugin);
    if (!settings) return refused_reload(plugin, "no plugin '" + plugin + "' is configured");
    start_load_(*settings);
    under_way_.insert(plugin);
    return std::nullopt;
}

std::vector<ReloadReport> ReloadCoordinator::loaded(PluginSlot prepared) {
    std::vector<ReloadReport> ended;
    PluginSlot replaced;
    const std::string plugin = prepared.settings.name;
    std::optional<ReloadReport> report;
    try {
        report = host_.begin_install(std::move(prepared), &replaced);
    } catch (...) {
        // The host is as it was (begin_install changes nothing before it can no longer
        // fail): the reload is over, and its owner says why.
        under_way_.erase(plugin);
        throw;
    }
    retire(std::move(replaced));
    if (report) settle(std::move(*report), ended);
    return ended;
}

std::vector<ReloadReport> ReloadCoordinator::collect() {
    std::vector<ReloadReport> ended;
    if (!host_.installing()) return ended;
    PluginSlot replaced;
    while (auto report = host_.finished_install(&replaced)) {
        retire(std::move(replaced));
        settle(std::move(*report), ended);
    }
    return ended;
}

void ReloadCoordinator::settle(ReloadReport report, std::vector<ReloadReport>& ended) {
    if (report.stale) {
        // (Each retry is a config change that landed mid-load: edits are not endless.)
        if (const PluginSettings* settings = settings_of(host_, report.plugin)) {
            start_load_(*settings);
            return;
        }
        report.stale = false;
        report.error = "no plugin '" + report.plugin + "' is configured any more";
    }
    under_way_.erase(report.plugin);
    ended.push_back(std::move(report));
}

void ReloadCoordinator::retire(PluginSlot slot) {
    if (!slot.library && !slot.instance) return;
    if (retire_)
        retire_(std::move(slot));
    else
        Host::release_retired(std::move(slot));
}

}  // namespace arbiter::host
