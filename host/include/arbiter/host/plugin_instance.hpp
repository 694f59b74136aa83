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

#include "arbiter/host/analyzer_instance.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/plugin_bounds.hpp"
#include "arbiter/host/plugin_library.hpp"

namespace arbiter::host {

// create gave no instance: the status and the plugin's own words, beside the message the
// operator reads (what()), so that an isolated plugin's runner can pass them to the host.
class CreateError : public PluginError {
  public:
    CreateError(const std::string& message, arb_status status, std::string detail)
        : PluginError(message), status_(status), detail_(std::move(detail)) {}
    arb_status status() const { return status_; }
    const std::string& detail() const { return detail_; }

  private:
    arb_status status_;
    std::string detail_;
};

class PluginInstance final : public AnalyzerInstance {
  public:
    // Creates an instance; throws PluginError with the plugin's own reason, and, for a
    // config error, the file, line and column of the key it names. `bounds`: what the
    // plugin may take of the host, shared by every shard of it; null makes bounds of this
    // instance's own from settings.limits.
    PluginInstance(std::shared_ptr<PluginLibrary> library, const PluginSettings& settings,
                   std::span<const uint8_t> baseline, uint32_t shard_index, uint32_t shard_count,
                   Metrics* metrics, std::shared_ptr<PluginBounds> bounds = nullptr);
    ~PluginInstance() override;
    PluginInstance(const PluginInstance&) = delete;
    PluginInstance& operator=(const PluginInstance&) = delete;

    CallResult on_batch(const VerifiedBatch& batch) override;
    // The same for a batch the host verified elsewhere (an isolated plugin's runner hands
    // the plugin the bytes where they lie, in the memory it shares with the host).
    CallResult on_batch_bytes(std::span<const uint8_t> bytes, int64_t last_relay_time_us);
    CallResult on_match_end(const std::string& relay_id, uint64_t match_id) override;
    std::optional<std::vector<uint8_t>> save_state(std::string& error) override;
    CallResult restore_state(std::span<const uint8_t> blob) override;
    CallResult configure(const PluginSettings& settings, std::span<const uint8_t> baseline) override;
    // Population baselines (ARB_CAP_BASELINE, `arbiter baseline`): switch a fresh instance
    // to collecting, then take the blob; nullopt with `error` set when the plugin cannot.
    CallResult baseline_begin();
    std::optional<std::vector<uint8_t>> baseline_end(std::string& error);

    uint32_t schema_minor() const override { return library_->identity().schema_minor; }
    void set_quiet(bool quiet) override { context_->quiet.store(quiet, std::memory_order_relaxed); }
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

// Why create gave no instance, as the operator should read it (a config refusal placed at
// its key); status ARB_OK means it said OK and gave none.
std::string describe_create_failure(const PluginSettings& settings, arb_status status,
                                    const std::string& detail);

// The first way the table breaks the JSON Schema the plugin describes (ABI 1.1's
// describe_config), placed like a refusal; "" when it matches or there is no schema.
std::string check_config_schema(const PluginLibrary& library, const PluginSettings& settings);

// What configure answers for a plugin without ARB_CAP_RECONFIGURE, in or out of process.
CallResult reconfigure_unsupported();

// Whether a signal keeps the contract of arb_signal is arbiter_signal_rules.hpp's
// signal_rules::signal_problem, shared with the SDK's test harness.

}  // namespace arbiter::host
