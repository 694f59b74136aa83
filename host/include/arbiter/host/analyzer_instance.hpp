// One created instance of a plugin as the host calls it, wherever it runs: in the host's
// own process (PluginInstance) or in a confined child process (IsolatedInstance,
// `isolation = "process"`). Dispatch, reload and reconfiguration see only this.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <arbiter/arbiter_plugin.h>
#include "arbiter/host/config.hpp"
#include "arbiter/host/ingest.hpp"

namespace arbiter::host {

// A signal as a plugin reported it, after the host's checks.
struct RawSignal {
    uint32_t player = 0;
    std::string code;
    double score = 0.0;
    double confidence = 0.0;
    bool tripwire = false;
    std::string evidence_json;
};

// The outcome of one call into a plugin.
struct CallResult {
    arb_status status = ARB_OK;
    std::string error;  // status != ARB_OK: the plugin's last error
    std::vector<RawSignal> signals;
    size_t dropped = 0;         // malformed signals the host refused, and those past a bound
    size_t evidence_bytes = 0;  // of the signals kept (PluginBounds::admit_signal)
    bool ok() const { return status == ARB_OK; }
};

// How an isolated plugin's child has fared, for `arbiter ctl status`; all zero in process.
struct IsolationStatus {
    bool isolated = false;
    int64_t pid = 0;             // the running child, 0 when none
    uint64_t restarts = 0;       // children started after a fault
    uint64_t checkpoints = 0;    // states saved to restart from
    uint64_t replayed = 0;       // calls fed again to a restarted child
    std::string last_fault;      // what stopped the last child that failed
    std::string quarantined;     // why the plugin gets no more calls; "" when it does
};

class AnalyzerInstance {
  public:
    virtual ~AnalyzerInstance() = default;

    // Begins a batch the next on_batch(batch) finishes: an instance that works elsewhere
    // (a child process) starts on it while the host calls the plugins before it; one in
    // the host's process does nothing here.
    virtual void start_batch(const VerifiedBatch&) {}
    virtual CallResult on_batch(const VerifiedBatch& batch) = 0;
    virtual CallResult on_match_end(const std::string& relay_id, uint64_t match_id) = 0;
    // State across reload; nullopt with `error` set when the plugin cannot save.
    virtual std::optional<std::vector<uint8_t>> save_state(std::string& error) = 0;
    virtual CallResult restore_state(std::span<const uint8_t> blob) = 0;
    // A new config without a reload (ARB_CAP_RECONFIGURE); all or nothing. Throws
    // PluginError, placed at the key, when the table breaks the plugin's config schema.
    virtual CallResult configure(const PluginSettings& settings,
                                 std::span<const uint8_t> baseline) = 0;
    // False once a plugin is quarantined (isolated plugins only): dispatch passes it by.
    virtual bool takes_calls() const { return true; }
    // The event schema minor the instance's library was built against: a batch of a newer
    // kind (input_lost) goes only to instances that know it. Asked of the instance, not its
    // slot, so that the shards of one plugin may be of two versions while a reload carries
    // them one at a time (Host::begin_install).
    virtual uint32_t schema_minor() const = 0;
    virtual IsolationStatus isolation() const { return {}; }
    // The instances a sharded plugin runs as (ShardedInstance); one, itself, otherwise.
    // The parallel dispatch calls shard k of a match's shard on that shard's lane.
    virtual uint32_t shard_count() const { return 1; }
    virtual AnalyzerInstance& shard(uint32_t) { return *this; }
    // The plugin runs in the host's own process, so that a fork of the host holds a copy
    // of its state (SnapshotHandover); false for an isolated plugin, whose state is in its
    // child.
    virtual bool in_process() const { return true; }
    // Quiet: what the plugin logs and the metrics it records are dropped, and so are the
    // host's warnings about its signals. For a new generation that makes again calls the
    // old one already made and answered (SnapshotHandover): said twice, they would count
    // twice.
    virtual void set_quiet(bool) {}
};

}  // namespace arbiter::host
