// A plugin the operator does not trust (`isolation = "process"`): its unchanged library
// runs in a child process, arbiter-plugin-runner, confined by seccomp and resource limits,
// and the host calls it through shared memory (host/src/isolation/channel.hpp). The child
// can crash, hang, run out of memory or try what the filter forbids; the host goes on:
//
//  - every call has the plugin's deadline_ms; past it the child is killed;
//  - a child that fails is reported (the signal, the forbidden call, the deadline) and a
//    new one is started, restored from the last checkpoint (the plugin's saved state,
//    taken every checkpoint_batches calls or checkpoint_seconds), and fed again the calls
//    since then, so that the players' history survives. The call it failed on is not
//    tried again (it may be what kills it): that call is reported failed and the plugin
//    never sees it. Signals of the calls fed again were reported the first time and are
//    not repeated, nor are their log lines and metrics. A plugin without ARB_CAP_STATE
//    starts empty: its history of the matches in play is lost, and the log says so;
//  - after more than max_restarts faults within restart_window_s the plugin is
//    quarantined: it gets no more calls until it is reloaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arbiter/host/analyzer_instance.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/plugin_bounds.hpp"
#include "arbiter/host/plugin_library.hpp"

namespace arbiter::host {

namespace isolation {
struct RunnerReply;
class ChannelError;
enum class Op : uint32_t;
}  // namespace isolation

// The runner beside the bundled plugins' folder: <prefix>/lib/arbiter/arbiter-plugin-runner.
std::filesystem::path default_plugin_runner();

class IsolatedInstance final : public AnalyzerInstance {
  public:
    // Starts a child with `runner`, loads the library's private copy there (`library`,
    // from PluginLibrary::copy_for_isolation, whose identity is filled in from the
    // child's negotiation) and creates the instance. Throws PluginError, worded as for a
    // plugin in the host's process, with what went wrong in the child.
    IsolatedInstance(std::shared_ptr<PluginLibrary> library, const PluginSettings& settings,
                     std::span<const uint8_t> baseline, const std::filesystem::path& runner,
                     Metrics* metrics, std::shared_ptr<PluginBounds> bounds = nullptr);
    ~IsolatedInstance() override;
    IsolatedInstance(const IsolatedInstance&) = delete;
    IsolatedInstance& operator=(const IsolatedInstance&) = delete;

    // Sends the batch and returns at once, so that the child works while the host calls
    // the plugins before it in the config; on_batch(batch) then collects the answer.
    void start_batch(const VerifiedBatch& batch) override;
    CallResult on_batch(const VerifiedBatch& batch) override;
    CallResult on_match_end(const std::string& relay_id, uint64_t match_id) override;
    std::optional<std::vector<uint8_t>> save_state(std::string& error) override;
    CallResult restore_state(std::span<const uint8_t> blob) override;
    CallResult configure(const PluginSettings& settings, std::span<const uint8_t> baseline) override;
    bool takes_calls() const override { return quarantined_.empty(); }
    uint32_t schema_minor() const override { return library_->identity().schema_minor; }
    IsolationStatus isolation() const override;
    bool in_process() const override { return false; }

  private:
    struct Child;
    // A call the child did not answer as it should: what happened, for the log.
    struct Fault {
        std::string what;
    };
    // One call since the last checkpoint, to feed a restarted child again.
    struct JournalEntry {
        isolation::Op op;
        std::vector<uint8_t> payload;
    };
    // A call of the stream, sent (by start_batch) or still to send.
    struct Request {
        isolation::Op op{};
        std::vector<uint8_t> payload;
        bool sent = false;
        std::chrono::steady_clock::time_point until;  // its deadline, once sent
        std::optional<std::string> send_fault;       // sending it failed
        std::string relay_id;                        // which batch it is
        uint64_t match_id = 0, sequence = 0;
    };

    void start_child();  // spawn, load, create; throws Fault, or PluginError on a refusal
    void stop_child();
    // One request and its reply; throws Fault (the child is then stopped).
    isolation::RunnerReply exchange(isolation::Op op, std::span<const uint8_t> payload,
                                    std::chrono::milliseconds deadline);
    void send_request(isolation::Op op, std::span<const uint8_t> payload,
                      std::chrono::steady_clock::time_point until,
                      std::chrono::milliseconds deadline);
    isolation::RunnerReply receive_reply(isolation::Op op,
                                         std::chrono::steady_clock::time_point until,
                                         std::chrono::milliseconds deadline);
    void drop_started();
    Fault fault_from_child(const std::string& what, bool kill);
    Fault fault_from_link(const isolation::ChannelError& error, std::chrono::milliseconds deadline);
    // A call of the stream (batch, match end): answered, journaled and checkpointed; or,
    // when the child fails, recovered and reported failed.
    CallResult stream_call(Request request, const char* what);
    static Request batch_request(const VerifiedBatch& batch);
    // Logs, metrics and checked signals of a reply, as an in-process call would give them.
    CallResult accept(isolation::RunnerReply&& reply);
    void recover(std::string fault);
    void checkpoint_if_due();
    bool take_checkpoint();
    CallResult quarantined_result() const;
    // A call outside the stream (restore, configure) that the child failed: it is started
    // again, and the call reported failed.
    CallResult recovered_from(const Fault& fault);

    std::shared_ptr<PluginLibrary> library_;
    std::string label_;
    std::filesystem::path runner_;
    PluginSettings settings_;  // what the child is created with (config follows configure)
    std::vector<uint8_t> baseline_;
    Metrics* metrics_;
    std::shared_ptr<PluginBounds> bounds_;  // held on this side: the runner is the plugin's
    std::unique_ptr<Child> child_;
    std::optional<Request> started_;  // sent by start_batch, not yet collected

    std::optional<std::vector<uint8_t>> checkpoint_;
    std::vector<JournalEntry> journal_;
    uint64_t journal_bytes_ = 0;
    std::chrono::steady_clock::time_point last_checkpoint_;
    std::deque<std::chrono::steady_clock::time_point> recent_faults_;

    uint64_t restarts_ = 0, checkpoints_ = 0, checkpoints_failed_ = 0, replayed_ = 0;
    size_t checkpoint_backoff_ = 0;  // calls more to wait after a checkpoint failed
    bool identity_adopted_ = false;
    std::string last_fault_;
    std::string quarantined_;
};

}  // namespace arbiter::host
