#include "arbiter/host/isolated_instance.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/config.hpp"
#include "arbiter/host/file_trust.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "isolation/channel.hpp"
#include "isolation/child.hpp"
#include "isolation/messages.hpp"
#include "isolation/reply_intake.hpp"
#include "isolation/syscall_names.hpp"

namespace arbiter::host {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// Calls since the last checkpoint are kept to feed a restarted child; past this many bytes
// a checkpoint is taken at once.
constexpr uint64_t kMaxJournalBytes = 256ull << 20;

bool worth_logging(uint64_t n) {
    return n <= 5 || (n & (n - 1)) == 0;
}

}  // namespace

// ---- lifecycle ----------------------------------------------------------------------

IsolatedInstance::IsolatedInstance(std::shared_ptr<PluginLibrary> library,
                                   const PluginSettings& settings,
                                   std::span<const uint8_t> baseline,
                                   const std::filesystem::path& runner, Metrics* metrics,
                                   std::shared_ptr<PluginBounds> bounds)
    : library_(std::move(library)),
      label_(library_->label()),
      runner_(runner),
      settings_(settings),
      baseline_(baseline.begin(), baseline.end()),
      metrics_(metrics),
      bounds_(bounds ? std::move(bounds)
                     : std::make_shared<PluginBounds>(label_, settings.limits, metrics)),
      last_checkpoint_(Clock::now()) {
    try {
        start_child();
    } catch (const Fault& fault) {
        throw PluginError(fmt::format("{}: plugin '{}' ({}): isolated: {}", settings.position.str(),
                                      label_, settings.library.string(), fault.what));
    }
}

IsolatedInstance::~IsolatedInstance() = default;

IsolationStatus IsolatedInstance::isolation() const {
    IsolationStatus status;
    status.isolated = true;
    status.pid = child_ ? child_->pid : 0;
    status.restarts = restarts_;
    status.checkpoints = checkpoints_;
    status.replayed = replayed_;
    status.last_fault = last_fault_;
    status.quarantined = quarantined_;
    return status;
}

// ---- replies ------------------------------------------------------------------------

CallResult IsolatedInstance::accept(iso::RunnerReply&& reply) {
    return iso::take_in_reply(std::move(reply), label_, *bounds_, metrics_);
}

CallResult IsolatedInstance::recovered_from(const Fault& fault) {
    recover(fault.what);
    CallResult result;
    result.status = ARB_ERR_INTERNAL;
    result.error = "isolated: " + fault.what;
    return result;
}

CallResult IsolatedInstance::quarantined_result() const {
    CallResult result;
    result.status = ARB_ERR_INTERNAL;
    result.error = "quarantined: " + quarantined_;
    return result;
}

// ---- the stream ---------------------------------------------------------------------

CallResult IsolatedInstance::stream_call(Request request, const char* what) {
    if (!quarantined_.empty()) return quarantined_result();
    if (!request.sent && !child_)
        recover(last_fault_.empty() ? "no process was running" : last_fault_);
    if (!quarantined_.empty()) return quarantined_result();
    const milliseconds deadline(settings_.deadline_ms);
    std::string fault;
    try {
        if (request.send_fault) throw Fault{*request.send_fault};
        if (!request.sent) {
            request.until = Clock::now() + deadline;
            send_request(request.op, request.payload, request.until, deadline);
        }
        iso::RunnerReply reply = receive_reply(request.op, request.until, deadline);
        // A heap that is full stays full: a fresh child from the checkpoint is the cure.
        if (reply.call.status == ARB_ERR_OUT_OF_MEMORY) {
            accept(std::move(reply));
            throw fault_from_child(fmt::format("ran out of memory in {} (memory_mb = {}) and was "
                                               "killed",
                                               what, settings_.isolation.memory_mb),
                                   true);
        }
        CallResult result = accept(std::move(reply));
        if (library_->has(ARB_CAP_STATE)) {
            journal_bytes_ += request.payload.size();
            journal_.push_back({request.op, std::move(request.payload)});
        }
        checkpoint_if_due();
        return result;
    } catch (const Fault& failed) {
        fault = failed.what;
    }
    recover(fault);
    CallResult result;
    result.status = ARB_ERR_INTERNAL;
    result.error = fmt::format("isolated: {}; the plugin did not see this {} ({})", fault, what,
                               quarantined_.empty() ? "restarted" : "now quarantined");
    return result;
}

IsolatedInstance::Request IsolatedInstance::batch_request(const VerifiedBatch& batch) {
    iso::MessageWriter writer;
    writer.i64(batch.last_relay_time_us).bytes(batch.bytes);
    Request request;
    request.op = iso::Op::batch;
    request.payload = std::move(writer.data());
    request.relay_id = batch.relay_id;
    request.match_id = batch.match_id;
    request.sequence = batch.sequence;
    return request;
}

void IsolatedInstance::start_batch(const VerifiedBatch& batch) {
    if (!quarantined_.empty() || !child_) return;
    try {
        drop_started();
    } catch (const Fault& fault) {
        last_fault_ = fault.what;  // on_batch starts a new child and reports it
        return;
    }
    Request request = batch_request(batch);
    const milliseconds deadline(settings_.deadline_ms);
    request.until = Clock::now() + deadline;
    request.sent = true;
    try {
        send_request(request.op, request.payload, request.until, deadline);
    } catch (const Fault& fault) {
        request.send_fault = fault.what;  // reported by on_batch, in the plugin's turn
    }
    started_ = std::move(request);
}

CallResult IsolatedInstance::on_batch(const VerifiedBatch& batch) {
    std::optional<Request> started = std::exchange(started_, std::nullopt);
    // The batch start_batch sent is this one: dispatch starts and collects each in turn.
    if (started && started->relay_id == batch.relay_id && started->match_id == batch.match_id &&
        started->sequence == batch.sequence)
        return stream_call(std::move(*started), "batch");
    if (started) {
        // Never the case in dispatch; were it, the child answers the earlier one first.
        (void)stream_call(std::move(*started), "batch");
    }
    return stream_call(batch_request(batch), "batch");
}

CallResult IsolatedInstance::on_match_end(const std::string& relay_id, uint64_t match_id) {
    if (!library_->has(ARB_CAP_MATCH_END)) return {};
    iso::MessageWriter writer;
    writer.text(relay_id).u64(match_id);
    Request request;
    request.op = iso::Op::match_end;
    request.payload = std::move(writer.data());
    return stream_call(std::move(request), "match end");
}

// ---- faults, restarts, checkpoints --------------------------------------------------

void IsolatedInstance::recover(std::string fault) {
    last_fault_ = fault;
    stop_child();
    for (;;) {
        const auto now = Clock::now();
        recent_faults_.push_back(now);
        const auto window = std::chrono::seconds(settings_.isolation.restart_window_s);
        while (!recent_faults_.empty() && now - recent_faults_.front() > window)
            recent_faults_.pop_front();
        if (recent_faults_.size() > settings_.isolation.max_restarts) {
            quarantined_ = fmt::format("{} fault(s) within {} s (max_restarts = {}), the last: {}",
                                       recent_faults_.size(), settings_.isolation.restart_window_s,
                                       settings_.isolation.max_restarts, fault);
            spdlog::error(
                "plugin '{}': quarantined after {}; it gets no more batches until it "
                "is reloaded (`arbiter ctl reload {}`, or a change of its file or table)",
                label_, quarantined_, label_);
            if (metrics_) metrics_->set("host.plugin_quarantined." + label_, 1);
            journal_.clear();
            journal_bytes_ = 0;
            return;
        }
        spdlog::error(
            "plugin '{}': isolated: {}; starting a new process ({} of {} restarts "
            "within {} s)",
            label_, fault, recent_faults_.size(), settings_.isolation.max_restarts,
            settings_.isolation.restart_window_s);
        if (metrics_) metrics_->add("host.plugin_restarts." + label_, 1);
        try {
            start_child();
            ++restarts_;
            std::string state =
                "started empty (the plugin cannot save state: no ARB_CAP_STATE; "
                "its history of the matches in play is lost)";
            if (checkpoint_) {
                iso::MessageWriter request;
                request.bytes(*checkpoint_);
                iso::RunnerReply restored =
                    exchange(iso::Op::restore_state, request.data(), slow_deadline(settings_));
                if (restored.call.status != ARB_OK) {
                    state = fmt::format("started empty (it refused its checkpoint with {}: {})",
                                        status_name(restored.call.status),
                                        escape_for_message(restored.call.error, 400));
                    journal_.clear();
                    journal_bytes_ = 0;
                } else {
                    state =
                        fmt::format("restored from its checkpoint ({} bytes)", checkpoint_->size());
                }
            } else if (library_->has(ARB_CAP_STATE)) {
                state = "started empty, as it was created";
            }
            // Fed again what it saw since: its signals, logs and metrics went out the first time.
            for (const JournalEntry& entry : journal_) {
                exchange(entry.op, entry.payload, milliseconds(settings_.deadline_ms));
                ++replayed_;
            }
            spdlog::warn(
                "plugin '{}': running again in process {}: {}, then fed again the {} "
                "call(s) since",
                label_, child_->pid, state, journal_.size());
            return;
        } catch (const Fault& again) {
            fault = again.what;
            last_fault_ = fault;
            stop_child();
        } catch (const PluginError& refused) {
            // Refused now what it took before (its file is the private copy: unlikely).
            fault = refused.what();
            last_fault_ = fault;
            stop_child();
        }
    }
}

void IsolatedInstance::checkpoint_if_due() {
    if (!library_->has(ARB_CAP_STATE) || !child_) return;
    const bool due =
        journal_.size() >= settings_.isolation.checkpoint_batches + checkpoint_backoff_ ||
        Clock::now() - last_checkpoint_ >=
            std::chrono::seconds(settings_.isolation.checkpoint_seconds) ||
        journal_bytes_ >= kMaxJournalBytes;
    if (due) take_checkpoint();
}

bool IsolatedInstance::take_checkpoint() {
    last_checkpoint_ = Clock::now();
    try {
        iso::RunnerReply reply = exchange(iso::Op::save_state, {}, slow_deadline(settings_));
        std::optional<std::vector<uint8_t>> blob = std::move(reply.blob);
        const std::string error = reply.call.error;
        accept(std::move(reply));
        if (!blob) {
            // Tried again after as many calls again, not on every call.
            checkpoint_backoff_ = journal_.size();
            if (worth_logging(++checkpoints_failed_))
                spdlog::warn("plugin '{}': no checkpoint ({}); a restart goes back to the last one",
                             label_, escape_for_message(error, 400));
            if (journal_bytes_ >= kMaxJournalBytes) {
                spdlog::warn(
                    "plugin '{}': {} MiB of calls since its last checkpoint: no longer "
                    "kept; a restart would start it empty",
                    label_, journal_bytes_ >> 20);
                checkpoint_.reset();
                journal_.clear();
                journal_bytes_ = 0;
            }
            return false;
        }
        checkpoint_ = std::move(blob);
        journal_.clear();
        journal_bytes_ = 0;
        checkpoint_backoff_ = 0;
        ++checkpoints_;
        return true;
    } catch (const Fault& fault) {
        recover(fault.what);
        return false;
    }
}

// ---- state and config, through the boundary -----------------------------------------

std::optional<std::vector<uint8_t>> IsolatedInstance::save_state(std::string& error) {
    if (!quarantined_.empty()) {
        error = "quarantined: " + quarantined_;
        return std::nullopt;
    }
    if (!library_->has(ARB_CAP_STATE)) {
        error = "the plugin keeps no state across reloads (no ARB_CAP_STATE)";
        return std::nullopt;
    }
    if (!take_checkpoint()) {
        error = last_fault_.empty() ? "the plugin could not save its state" : last_fault_;
        // The last good checkpoint is still the plugin's state as of some calls ago.
        return std::nullopt;
    }
    return checkpoint_;
}

CallResult IsolatedInstance::restore_state(std::span<const uint8_t> blob) {
    if (!quarantined_.empty()) return quarantined_result();
    iso::MessageWriter request;
    request.bytes(blob);
    try {
        CallResult result =
            accept(exchange(iso::Op::restore_state, request.data(), slow_deadline(settings_)));
        if (result.ok()) {
            checkpoint_.emplace(blob.begin(), blob.end());
            journal_.clear();
            journal_bytes_ = 0;
            last_checkpoint_ = Clock::now();
        }
        return result;
    } catch (const Fault& fault) {
        return recovered_from(fault);
    }
}

CallResult IsolatedInstance::configure(const PluginSettings& settings,
                                       std::span<const uint8_t> baseline) {
    if (!quarantined_.empty()) return quarantined_result();
    if (!library_->has(ARB_CAP_RECONFIGURE)) return reconfigure_unsupported();
    if (std::string problem = check_config_schema(*library_, settings); !problem.empty())
        throw PluginError(problem);
    iso::MessageWriter request;
    request.bytes(settings.config).bytes(baseline);
    try {
        CallResult result =
            accept(exchange(iso::Op::configure, request.data(), slow_deadline(settings_)));
        if (result.ok()) {
            // A restart creates the child with the new table, from a state saved under it.
            settings_.config = settings.config;
            settings_.config_positions = settings.config_positions;
            baseline_.assign(baseline.begin(), baseline.end());
            take_checkpoint();
        }
        return result;
    } catch (const Fault& fault) {
        return recovered_from(fault);
    }
}

}  // namespace arbiter::host
