// The embedding C API (arbiter/arbiter_host.h) over the C++ Host. Every entry point
// catches everything: no exception may reach a caller in C, Rust or Go.
#include "arbiter/arbiter_host.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/host/host.hpp"
#include "arbiter/host/reload_coordinator.hpp"
#include "arbiter/host/sinks.hpp"
#include "embed/embed_log.hpp"

#include <spdlog/spdlog.h>

struct arbiter_host {
    std::unique_ptr<arbiter::host::Host> host;
    std::string last_error;
    std::string plugin_errors;
    // What arbiter_host_assessments hands out, kept until the next call.
    std::vector<arbiter::host::Assessment> assessments;
    std::vector<std::string> assessment_json;
    std::vector<arbiter_assessment> assessment_views;
    std::shared_ptr<arbiter::host::Sink> callback_sink;
    // Inside the action callback: the pipeline is mid-batch, so only the calls the header
    // allows from there are taken; the rest fail with a reason instead of re-entering it.
    bool in_callback = false;
    // The reload begun last by arbiter_host_begin_reload: loading (on a thread of its own,
    // as serve's loader), then going over, then ended; `reloading` runs its steps.
    struct Reload {
        std::string plugin;
        std::future<arbiter::host::PluginSlot> loading;  // valid while the load runs
        arbiter_status outcome = ARBITER_PENDING;
        std::string error;  // why it was refused
    };
    std::unique_ptr<Reload> reload;
    std::unique_ptr<arbiter::host::ReloadCoordinator> reloading;
};

namespace {

using arbiter::host::Assessment;

arbiter_assessment view_of(const Assessment& assessment, const std::string& json) {
    arbiter_assessment view{};
    view.struct_size = sizeof view;
    view.relay_id = assessment.player.relay_id.c_str();
    view.match_id = assessment.player.match_id;
    view.player = assessment.player.player;
    view.action = static_cast<uint32_t>(assessment.action);
    view.combined_score = assessment.combined_score;
    view.account_id = assessment.account_id.c_str();
    view.json = json.c_str();
    return view;
}

class CallbackSink : public arbiter::host::Sink {
public:
    CallbackSink(arbiter_host* host, arbiter_action_callback callback, void* user_data)
        : host_(host), callback_(callback), user_data_(user_data) {}
    void on_action(const Assessment& assessment) override {
        std::string json = arbiter::host::assessment_json(assessment);
        arbiter_assessment view = view_of(assessment, json);
        const bool outer = !host_->in_callback;
        host_->in_callback = true;
        callback_(user_data_, &view);
        if (outer) host_->in_callback = false;
    }

private:
    arbiter_host* host_;
    arbiter_action_callback callback_;
    void* user_data_;
};

enum class FromCallback { refused, allowed };

// Runs body; turns every exception into a status and the host's last error.
template <class Body>
arbiter_status guarded(arbiter_host* host, Body&& body, FromCallback from_callback = FromCallback::refused) noexcept {
    if (!host) return ARBITER_ERR_INVALID_ARGUMENT;
    if (host->in_callback && from_callback == FromCallback::refused) {
        host->last_error = "called from inside the action callback, where only "
                           "arbiter_host_set_action_callback, arbiter_host_set_log_callback, "
                           "arbiter_host_last_error, arbiter_host_plugin_errors and "
                           "arbiter_host_api_version may be called";
        return ARBITER_ERR_INVALID_ARGUMENT;
    }
    try {
        host->last_error.clear();
        return body();
    } catch (const arbiter::host::ConfigError& error) {
        host->last_error = error.what();
        return ARBITER_ERR_CONFIG;
    } catch (const std::bad_alloc&) {
        host->last_error = "out of memory";
        return ARBITER_ERR_INTERNAL;
    } catch (const std::exception& error) {
        host->last_error = error.what();
        return ARBITER_ERR_INTERNAL;
    } catch (...) {
        host->last_error = "unknown exception";
        return ARBITER_ERR_INTERNAL;
    }
}

// An argument the caller got wrong, said in last_error like every other failure.
arbiter_status invalid(arbiter_host* host, const char* why) {
    host->last_error = why;
    return ARBITER_ERR_INVALID_ARGUMENT;
}

void refresh_plugin_errors(arbiter_host* host) {
    host->plugin_errors.clear();
    for (const auto& error : host->host->plugin_errors()) host->plugin_errors += error + "\n";
}

// A host missing plugins would report every player Clear as if all were well, so it
// starts only when the operator said that is acceptable.
arbiter_status check_plugins_loaded(arbiter_host* host) {
    const auto& config = host->host->config();
    if (config.host.partial_start) return ARBITER_OK;
    if (!host->plugin_errors.empty()) {
        host->last_error = "a configured plugin was refused (arbiter_host_plugin_errors says why); set "
                           "[host] partial_start = true to run with the others:\n" +
                           host->plugin_errors.substr(0, host->plugin_errors.size() - 1);
        return ARBITER_ERR_PLUGIN_REFUSED;
    }
    bool any_enabled = false;
    for (const auto& plugin : config.plugins) any_enabled = any_enabled || plugin.enabled;
    if (!any_enabled) {
        host->last_error = config.file.string() +
                           ": no plugin is enabled, so every player would be Clear; add a "
                           "[plugins.NAME] table (or set [host] partial_start = true)";
        return ARBITER_ERR_PLUGIN_REFUSED;
    }
    return ARBITER_OK;
}

// Ends the reload with its report.
void end_reload(arbiter_host* host, const arbiter::host::ReloadReport& report) {
    auto& reload = *host->reload;
    if (!report.ok) reload.error = report.describe();
    reload.outcome = report.ok ? ARBITER_OK : ARBITER_ERR_REFUSED;
    try {
        refresh_plugin_errors(host);
    } catch (...) {
        // Refreshed again by the next call that changes the plugins.
    }
}

// Moves the reload under way on: once loaded, its state starts over (between two pushes,
// here); once over, its report ends it. With `wait`, waits for the load rather than
// leaving it for a later call.
//
// What it throws (out of memory, say) never fails the call that moved it on: a push that
// went through says so. A throw before the install began (the host is then as it was)
// ends the reload, refused; one while ending it leaves it under way, to be ended again by
// the next call (Host::finished_install is made to be called again after a failure).
void advance_reload(arbiter_host* host, bool wait = false) noexcept {
    auto* reload = host->reload.get();
    if (!reload || reload->outcome != ARBITER_PENDING) return;
    std::vector<arbiter::host::ReloadReport> ended;
    try {
        if (reload->loading.valid()) {
            if (!wait &&
                reload->loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                return;
            ended = host->reloading->loaded(reload->loading.get());
        }
    } catch (const std::exception& error) {
        reload->outcome = ARBITER_ERR_REFUSED;
        try {
            reload->error = "the reload of plugin '" + reload->plugin +
                            "' failed before its install began (" + error.what() +
                            "); the old version runs on";
        } catch (...) {
        }
        return;
    } catch (...) {
        reload->outcome = ARBITER_ERR_REFUSED;
        try {
            reload->error = "the reload of plugin '" + reload->plugin +
                            "' failed before its install began; the old version runs on";
        } catch (...) {
        }
        return;
    }
    try {
        // (A stale slot is loading again: nothing to collect until it is back.)
        if (ended.empty() && !reload->loading.valid()) ended = host->reloading->collect();
    } catch (...) {
        // Left under way: the next call ends it again; unless nothing is left to end it
        // (a stale report whose load again could not start).
        if (!reload->loading.valid() && !host->host->installing())
            reload->outcome = ARBITER_ERR_REFUSED;
        return;
    }
    for (const auto& report : ended) end_reload(host, report);
}

// Loads the plugin's new version off the caller's thread, as serve's loader does.
void load_in_background(arbiter_host* host, const arbiter::host::PluginSettings& settings) {
    host->reload->loading =
        std::async(std::launch::async, [&core = *host->host, settings] { return core.prepare_plugin(settings); });
}

arbiter_status create(arbiter_host** out_host, const std::function<arbiter::host::ServerConfig()>& load) {
    if (!out_host) return ARBITER_ERR_INVALID_ARGUMENT;
    *out_host = nullptr;
    auto* host = new (std::nothrow) arbiter_host();
    if (!host) return ARBITER_ERR_INTERNAL;
    *out_host = host;
    arbiter_status status = guarded(host, [&] {
        arbiter::host::embed::install_logger();
        arbiter::host::ServerConfig config = load();
        arbiter::host::embed::set_log_level(config.host.log_level);
        // One thread unless the config asks for more: the callbacks' promise (the caller's
        // thread, inside the call) holds for plugins' log lines only then.
        if (!config.host.threads) config.host.threads = 1;
        host->host = std::make_unique<arbiter::host::Host>(std::move(config));
        host->reloading = std::make_unique<arbiter::host::ReloadCoordinator>(
            *host->host, [host](const arbiter::host::PluginSettings& settings) { load_in_background(host, settings); });
        refresh_plugin_errors(host);
        return check_plugins_loaded(host);
    });
    return status;
}

}  // namespace

extern "C" {

uint32_t arbiter_host_api_version(void) { return ARBITER_HOST_API_VERSION; }

arbiter_status arbiter_host_set_log_callback(arbiter_log_callback callback, void* user_data) {
    try {
        arbiter::host::embed::set_log_callback(callback, user_data);
        return ARBITER_OK;
    } catch (...) {
        return ARBITER_ERR_INTERNAL;
    }
}

arbiter_status arbiter_host_create(const char* config_path, arbiter_host** out_host) {
    if (out_host) *out_host = nullptr;
    if (!config_path) return ARBITER_ERR_INVALID_ARGUMENT;
    return create(out_host, [&] { return arbiter::host::load_config(config_path); });
}

arbiter_status arbiter_host_create_from_text(const char* config_text, uint64_t config_size, const char* base_dir,
                                             arbiter_host** out_host) {
    if (out_host) *out_host = nullptr;
    if (!config_text && config_size) return ARBITER_ERR_INVALID_ARGUMENT;
    return create(out_host, [&] {
        std::filesystem::path base = base_dir ? std::filesystem::path(base_dir) : std::filesystem::current_path();
        return arbiter::host::parse_config(std::string_view(config_text ? config_text : "", config_size),
                                           "(embedded config)", base);
    });
}

void arbiter_host_destroy(arbiter_host* host) {
    if (!host) return;
    if (host->in_callback) {
        // The pipeline that called the callback still runs on this host.
        spdlog::error("arbiter_host_destroy called from inside the action callback: ignored; "
                      "destroy the host after the call that raised the action returns");
        return;
    }
    try {
        // The load uses the host: it ends first, and what it made is dropped.
        if (host->reload && host->reload->loading.valid()) host->reload->loading.wait();
        host->reload.reset();
        host->reloading.reset();
        host->host.reset();  // closes: ends open matches, flushes the sinks
    } catch (...) {
        // Nothing may unwind into the caller; the host's own destructor already logs.
    }
    delete host;
}

const char* arbiter_host_last_error(arbiter_host* host) { return host ? host->last_error.c_str() : "no host"; }

const char* arbiter_host_plugin_errors(arbiter_host* host) { return host ? host->plugin_errors.c_str() : ""; }

arbiter_status arbiter_host_push(arbiter_host* host, const uint8_t* batch, uint64_t size) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!batch && size) return invalid(host, "batch is NULL with a size above 0");
        auto refused = host->host->push({batch, static_cast<size_t>(size)});
        advance_reload(host);
        if (refused) {
            host->last_error = *refused;
            return ARBITER_ERR_REFUSED;
        }
        return ARBITER_OK;
    });
}

arbiter_status arbiter_host_end_match(arbiter_host* host, const char* relay_id, uint64_t match_id) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!relay_id) return invalid(host, "relay_id is NULL");
        host->host->end_match(relay_id, match_id);
        return ARBITER_OK;
    });
}

arbiter_status arbiter_host_set_action_callback(arbiter_host* host, arbiter_action_callback callback,
                                                void* user_data) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        host->host->remove_sink(host->callback_sink);
        host->callback_sink.reset();
        if (callback) {
            host->callback_sink = std::make_shared<CallbackSink>(host, callback, user_data);
            host->host->add_sink(host->callback_sink);
        }
        return ARBITER_OK;
    }, FromCallback::allowed);
}

arbiter_status arbiter_host_assessments(arbiter_host* host, const arbiter_assessment** out_assessments,
                                        uint64_t* out_count) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!out_assessments || !out_count) return invalid(host, "out_assessments or out_count is NULL");
        host->assessments = host->host->assessments();
        host->assessment_json.clear();
        host->assessment_views.clear();
        for (const auto& assessment : host->assessments)
            host->assessment_json.push_back(arbiter::host::assessment_json(assessment));
        for (size_t i = 0; i < host->assessments.size(); ++i)
            host->assessment_views.push_back(view_of(host->assessments[i], host->assessment_json[i]));
        *out_assessments = host->assessment_views.data();
        *out_count = host->assessment_views.size();
        return ARBITER_OK;
    });
}

arbiter_status arbiter_host_reload_plugin(arbiter_host* host, const char* plugin_name) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!plugin_name) return invalid(host, "plugin_name is NULL");
        advance_reload(host, true);  // a reload begun first goes over first
        auto report = host->host->reload_plugin(plugin_name);
        advance_reload(host);
        refresh_plugin_errors(host);
        if (!report.ok) {
            host->last_error = report.describe();
            return ARBITER_ERR_REFUSED;
        }
        return ARBITER_OK;
    });
}

arbiter_status arbiter_host_begin_reload(arbiter_host* host, const char* plugin_name) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!plugin_name) return invalid(host, "plugin_name is NULL");
        advance_reload(host);
        if (host->reload && host->reload->outcome == ARBITER_PENDING)
            return invalid(host, ("the reload of '" + host->reload->plugin +
                                  "' begun before is still under way (arbiter_host_reload_outcome)")
                                     .c_str());
        // The reload before stays the one reload_outcome tells of, unless this one begins.
        auto before = std::exchange(host->reload, std::make_unique<arbiter_host::Reload>());
        host->reload->plugin = plugin_name;
        std::optional<arbiter::host::ReloadReport> refused;
        try {
            refused = host->reloading->begin(plugin_name);
        } catch (...) {
            host->reload = std::move(before);  // no load started
            throw;
        }
        if (refused) {
            host->reload = std::move(before);
            host->last_error = refused->error;
            return ARBITER_ERR_REFUSED;
        }
        return ARBITER_OK;
    });
}

arbiter_status arbiter_host_reload_outcome(arbiter_host* host) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!host->reload) return invalid(host, "no reload was begun (arbiter_host_begin_reload)");
        advance_reload(host);
        if (host->reload->outcome == ARBITER_ERR_REFUSED) host->last_error = host->reload->error;
        return host->reload->outcome;
    });
}

arbiter_status arbiter_host_apply_config(arbiter_host* host, const char* config_path) {
    return guarded(host, [&] {
        if (!host->host) throw std::logic_error("the host was not created successfully");
        if (!config_path) return invalid(host, "config_path is NULL");
        auto config = arbiter::host::load_config(config_path);
        arbiter::host::embed::set_log_level(config.host.log_level);
        advance_reload(host, true);  // a reload begun first goes over first
        auto reports = host->host->apply_config(std::move(config));
        advance_reload(host);
        refresh_plugin_errors(host);
        for (const auto& report : reports) {
            if (report.ok) continue;
            if (!host->last_error.empty()) host->last_error += '\n';
            host->last_error += report.describe();
        }
        return host->last_error.empty() ? ARBITER_OK : ARBITER_ERR_REFUSED;
    });
}

}  // extern "C"
