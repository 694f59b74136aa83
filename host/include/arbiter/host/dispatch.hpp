// Dispatch: the same verified batch to every loaded plugin, in the order of the config,
// and their signals back, each put in context (plugin, class, weight, match).
//
// A plugin that fails (an error status, an exception the SDK turned into one, a
// malformed signal) is logged and counted; the batch still reaches every other plugin,
// and the failing one gets the next batch as usual.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/plugin_library.hpp"

namespace arbiter::host {

// How a plugin has been doing, for `arbiter ctl status`; carried across reloads.
struct PluginCallStats {
    uint64_t calls = 0;
    uint64_t errors = 0;
    uint64_t busy_ns = 0;  // wall time inside the plugin's on_batch and on_match_end
    uint64_t slowest_ns = 0;     // the longest of those calls
    uint64_t over_deadline = 0;  // calls longer than the plugin's deadline_ms
};

// One configured plugin: what the operator asked for and what the host made of it.
struct PluginSlot {
    PluginCallStats stats;
    PluginSettings settings;
    std::shared_ptr<PluginLibrary> library;  // null when the plugin was refused
    std::unique_ptr<AnalyzerInstance> instance;
    std::string error;                                // why it was refused
    ModelClass model_class = ModelClass::validation;  // the operator's, else the plugin's
    std::shared_ptr<PluginBounds> bounds;             // what it has been refused, for status

    bool active() const { return instance != nullptr; }
};

// The baseline file a plugin's settings name, or nothing; throws PluginError.
std::vector<uint8_t> read_plugin_baseline(const PluginSettings& settings);

// Loads a configured plugin, creating its instance (in a child process started with
// `plugin_runner`, "" for the default, when it is isolated); a refusal fills slot.error.
// With `shards` > 1, a plugin in the host's process that declared ARB_CAP_SHARD_BY_MATCH
// gets one instance per shard (ShardedInstance); any other plugin gets one instance.
PluginSlot load_plugin_slot(const PluginSettings& settings, PluginCopies& copies, Metrics& metrics,
                            const std::filesystem::path& plugin_runner = {}, uint32_t shards = 1);

// What one plugin answered to one call, timed, before the host puts it in context. The
// parallel dispatch makes these on its lanes and the host gathers them in config order.
struct PluginCall {
    bool made = false;  // false: the plugin was passed by (inactive, or too old a schema)
    CallResult result;
    uint64_t ns = 0;
};

class Dispatcher {
  public:
    explicit Dispatcher(Metrics& metrics) : metrics_(metrics) {}

    void add(PluginSlot slot) { slots_.push_back(std::move(slot)); }
    const std::vector<PluginSlot>& slots() const { return slots_; }
    // The slot of a plugin by its key in the config, or null.
    PluginSlot* find(const std::string& name);
    // Hands every slot over (to rebuild them for a new config) and takes them back.
    std::vector<PluginSlot> take_slots() { return std::move(slots_); }
    void set_slots(std::vector<PluginSlot> slots) { slots_ = std::move(slots); }

    // Every active plugin's signals for one batch; only plugins built against schema
    // minor `min_schema_minor` or later get it (a batch the host wrote, of an event kind
    // an older plugin does not know: arbiter_plugin.h, "Versions").
    std::vector<SignalRecord> dispatch(const VerifiedBatch& batch, uint32_t min_schema_minor = 0);
    // Every active plugin's final signals for a match that ended.
    std::vector<SignalRecord> end_match(const std::string& relay_id, uint64_t match_id,
                                        int64_t relay_time_us);

    // Whether slot `index` takes a batch of schema minor `min_schema_minor`.
    bool takes(size_t index, uint32_t min_schema_minor = 0) const;
    // Calls made elsewhere (one per slot, in slot order) turned into signals in context,
    // with each plugin's time and failures counted as dispatch() counts them. `call` is
    // "on_batch" or "on_match_end".
    std::vector<SignalRecord> gather(std::vector<PluginCall>& calls, const std::string& relay_id,
                                     uint64_t match_id, int64_t relay_time_us, const char* call);

  private:
    void collect(PluginSlot& slot, CallResult&& result, const std::string& relay_id,
                 uint64_t match_id, int64_t relay_time_us, const char* call,
                 std::vector<SignalRecord>& out);

    Metrics& metrics_;
    std::vector<PluginSlot> slots_;
};

}  // namespace arbiter::host
