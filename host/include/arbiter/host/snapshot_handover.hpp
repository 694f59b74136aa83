// A reload that holds the stream only for a fork (docs/performance.md, "Hot reload under load").
//
// A whole reload (Host::swap_in) holds the stream while the old instance saves its state
// and the new one restores it: over half a second at 100,000 players in one instance.
// Here the host forks instead, between two calls. The child process is a still copy of
// the old instance as it was then: it saves the state, sends it down a pipe and exits.
// Meanwhile the old instance goes on answering every call in the host, and each call is
// kept. A thread of the handover restores the state into the new instance and makes the
// kept calls to it again, in order, quiet, their answers thrown away (the old instance
// gave them). Once nothing is left to make, the new instance stands where the old one
// does, and every later call goes to it: no event is lost, and none is answered twice.
//
// To the dispatcher it is one instance, the one the host calls; Host::begin_install puts
// it in the plugin's slot and Host::finished_install takes it apart once done().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arbiter/host/analyzer_instance.hpp"

namespace arbiter::host {

class SnapshotHandover final : public AnalyzerInstance {
  public:
    enum class Outcome {
        carried,          // the new instance took the state and caught up
        save_refused,     // the old instance could not save: the new one started fresh
        restore_refused,  // the new instance refused the state and started fresh
        snapshot_failed,  // the forked copy gave nothing (it died, or hung past the
                          // deadline): the old instance still answers, and the host
                          // reloads whole instead (Host::end_handover)
    };
    struct Result {
        Outcome outcome = Outcome::snapshot_failed;
        std::string error;    // what the refusal or the failure was
        CallResult restored;  // the new instance's answer to the state, when it got one
        size_t bytes = 0;     // of the state
        double fork_us = 0;   // the fork, on the calling thread: part of the pause
        double save_us = 0;   // the forked copy's save, as it measured it
        double restore_us = 0;
        double catch_up_us = 0;  // making the kept calls again
        uint64_t calls_made_again = 0;
        // The calling thread waited for room among the kept calls (kKeptBytes): part of
        // the pause too.
        double waited_us = 0;
        size_t most_kept_bytes = 0;  // the memory the kept batches took at their most
        // The catch-up outran its patience (kCatchUpPatience), and from then each call
        // waited for two kept calls to be made again: the stream went at half the new
        // instance's pace, never held longer than a call or two, so that the catch-up
        // ends even when the stream comes as fast as it can be answered. The time calls
        // spent so, summed, and the longest one call waited.
        bool throttled = false;
        double throttled_us = 0;
        double longest_throttle_us = 0;
    };

    // How much of the batches the calling thread keeps for the new instance to catch up
    // on before a call waits for it: a bound on memory, as the dispatch has one.
    // At 100,000 players in one instance, saturated, the save and the restore take a
    // second or two and the catch-up some seconds more (docs/performance.md, "Hot reload
    // under load").
    static constexpr size_t kKeptBytes = size_t{512} << 20;
    // How long the forked copy may take to save before it is killed and the reload made
    // whole. A plugin that waits on a thread of its own in its save hangs in the copy
    // (only the forking thread is copied); it ends up here.
    static constexpr std::chrono::seconds kSaveDeadline{30};
    // How long the catch-up may run before the stream is slowed for it. A stream that comes
    // as fast as the old instance answers comes as fast as the new one catches up: on a
    // lane, where the old instance's call is all the work a batch gives, the kept calls
    // would never run out. Past this, a call is kept only once the catch-up made two since
    // the last, so the kept calls shrink by at least half the catch-up's pace.
    static constexpr std::chrono::seconds kCatchUpPatience{1};

    // A fork copies the page tables of everything the host has mapped, and the heap keeps
    // pages it has freed (matches ended, an old generation destroyed): after 100,000
    // players had come and gone, a fork at 1,000 took 16.6 ms, and 0.68 ms once the free
    // pages went back to the kernel (docs/performance.md, "Forked"). That return (malloc_trim)
    // takes from 0.5 ms to tens of ms and locks each malloc arena in turn, so it is made off the
    // event path, on the thread that prepares the new generation (Host::prepare_plugin), not in
    // begin().
    static void make_the_next_fork_cheaper();

    // Forks, on the thread that calls `old` and between two of its calls. Takes both
    // instances on success. On failure (the fork or the pipe refused) returns nullptr with
    // `error` set, and leaves both where they were.
    static std::unique_ptr<SnapshotHandover> begin(
        std::unique_ptr<AnalyzerInstance>& old, std::unique_ptr<AnalyzerInstance>& fresh,
        std::string& error, size_t kept_bytes = kKeptBytes,
        std::chrono::milliseconds save_deadline = kSaveDeadline,
        std::chrono::milliseconds catch_up_patience = kCatchUpPatience);
    // Stops the thread; a forked copy still running is killed.
    ~SnapshotHandover() override;
    SnapshotHandover(const SnapshotHandover&) = delete;
    SnapshotHandover& operator=(const SnapshotHandover&) = delete;

    // To the old instance, kept for the new one; once done, to whichever answers now.
    CallResult on_batch(const VerifiedBatch& batch) override;
    CallResult on_match_end(const std::string& relay_id, uint64_t match_id) override;
    // The state of the instance that answers now.
    std::optional<std::vector<uint8_t>> save_state(std::string& error) override;
    // The host ends a handover (Host::settle_install) before it restores or configures a
    // plugin; either here would leave the two generations apart, so both throw
    // std::logic_error.
    CallResult restore_state(std::span<const uint8_t> blob) override;
    CallResult configure(const PluginSettings& settings,
                         std::span<const uint8_t> baseline) override;
    uint32_t schema_minor() const override { return old_->schema_minor(); }

    // The thread is done: the new instance answers (carried, refused), or the forked copy
    // failed and the old one still does. Then result() is final.
    bool done() const;
    void wait_done();
    Result result() const;
    Outcome outcome() const;  // result()'s, without copying its texts
    // Once done: the two instances, for the host to put in place and to retire.
    std::unique_ptr<AnalyzerInstance> take_old() { return std::move(old_); }
    std::unique_ptr<AnalyzerInstance> take_fresh() { return std::move(fresh_); }

  private:
    // A call made to the old instance, to be made again to the new one.
    struct Kept {
        std::optional<VerifiedBatch> batch;  // else a match end
        std::string relay_id;
        uint64_t match_id = 0;
    };

    SnapshotHandover(pid_t child, int from_child, size_t kept_bytes,
                     std::chrono::milliseconds save_deadline,
                     std::chrono::milliseconds catch_up_patience);
    // The thread: the state from the child, the restore, the catch-up.
    void run();
    // What the copy sends first (the .cpp).
    struct ChildAnswer;
    // The forked copy: saves `old`, answers down `to_parent`, and leaves.
    [[noreturn]] static void save_in_forked_copy(AnalyzerInstance& old, int to_parent);
    // Reads the child's answer into `state` (or `error`), and reaps it; false when the
    // copy failed (it is killed then).
    bool read_from_child(std::optional<std::vector<uint8_t>>& state, std::string& error);
    // The reading alone: the header into `answer`, then the body; false, with `error`,
    // on a failure, the deadline or stop_.
    bool receive(ChildAnswer& answer, std::vector<uint8_t>& body, std::string& error);
    // Ends the handover (under the lock): from now on the calls go to the answering one.
    void finish(Outcome outcome, std::unique_lock<std::mutex>& lock);
    // Where a call goes once done (under the lock: done_ set).
    AnalyzerInstance& answering() {
        return result_.outcome == Outcome::snapshot_failed ? *old_ : *fresh_;
    }
    // Keeps a call, waiting for room first (and, throttled, for the catch-up); false when
    // the handover ended meanwhile (the call then goes to answering()).
    bool keep(Kept call, size_t bytes, std::unique_lock<std::mutex>& lock);

    std::unique_ptr<AnalyzerInstance> old_;
    std::unique_ptr<AnalyzerInstance> fresh_;
    pid_t child_;
    int from_child_;
    const size_t kept_limit_;
    const std::chrono::milliseconds save_deadline_;
    const std::chrono::milliseconds catch_up_patience_;

    mutable std::mutex mutex_;
    std::condition_variable room_or_done_;  // a kept call made again, or done_
    std::deque<Kept> kept_;
    size_t kept_bytes_ = 0;
    uint64_t made_since_throttle_ = 0;  // kept calls made again, once throttled
    uint64_t kept_since_throttle_ = 0;  // calls kept, once throttled
    bool done_ = false;
    bool stop_ = false;
    Result result_;
    std::thread thread_;
};

}  // namespace arbiter::host
