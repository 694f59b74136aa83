// One created instance of a plugin, and the calls the host makes into it. Every reply
// is checked here: status codes become messages with the plugin's last error, and
// malformed signals are dropped, counted and logged before anything else sees them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/plugin_library.hpp"

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
    size_t dropped = 0;  // malformed signals the host refused
    bool ok() const { return status == ARB_OK; }
};

class PluginInstance {
  public:
    // Creates an instance; throws PluginError with the plugin's own reason, and, for a
    // config error, the file, line and column of the key it names.
    PluginInstance(std::shared_ptr<PluginLibrary> library, const PluginSettings& settings,
                   std::span<const uint8_t> baseline, uint32_t shard_index, uint32_t shard_count,
                   Metrics* metrics);
    ~PluginInstance();
    PluginInstance(const PluginInstance&) = delete;
    PluginInstance& operator=(const PluginInstance&) = delete;

    CallResult on_batch(const VerifiedBatch& batch);
    CallResult on_match_end(const std::string& relay_id, uint64_t match_id);
    // State across reload; nullopt with `error` set when the plugin cannot save.
    std::optional<std::vector<uint8_t>> save_state(std::string& error);
    CallResult restore_state(std::span<const uint8_t> blob);
    // A new config without a reload (ARB_CAP_RECONFIGURE); all or nothing. Throws
    // PluginError, placed at the key, when the table breaks the plugin's config schema.
    CallResult configure(const PluginSettings& settings, std::span<const uint8_t> baseline);
    // Population baselines (ARB_CAP_BASELINE, `arbiter baseline`): switch a fresh instance
    // to collecting, then take the blob; nullopt with `error` set when the plugin cannot.
    CallResult baseline_begin();
    std::optional<std::vector<uint8_t>> baseline_end(std::string& error);

    const PluginLibrary& library() const { return *library_; }
    const std::string& label() const { return library_->label(); }

  private:
    std::string last_error();
    // Calls a slot that hands back a plugin-owned blob (save_state, baseline_end) and
    // copies it; nullopt with `error` set when the slot is missing or fails.
    std::optional<std::vector<uint8_t>> take_blob(arb_status (*slot)(arb_instance*, arb_bytes*),
                                                  const char* slot_name, const char* missing,
                                                  std::string& error);
    // Keeps a well-formed signal; drops, counts and logs any other. True when kept.
    bool check_signal_and_keep(const arb_signal* signal, CallResult& result);

    std::shared_ptr<PluginLibrary> library_;
    std::unique_ptr<ServiceContext> context_;
    arb_instance* handle_ = nullptr;
    Metrics* metrics_;
    // Kept for configure: a new config never moves an instance to another shard.
    uint32_t shard_index_ = 0;
    uint32_t shard_count_ = 1;

    friend struct SinkAdapter;
};

// A plugin's refusal of its config, as the operator should read it: the SDK's "key.path:
// problem" becomes "file:line:column: plugins.NAME.config.key.path: problem".
std::string describe_config_refusal(const PluginSettings& settings, const std::string& detail);

// The first way the table breaks the JSON Schema the plugin describes (ABI 1.1's
// describe_config), placed like a refusal; "" when it matches or there is no schema.
std::string check_config_schema(const PluginLibrary& library, const PluginSettings& settings);

// Checks a signal against the contract of arb_signal; returns the problem, or "".
std::string signal_problem(const arb_signal* signal);

}  // namespace arbiter::host
