// Parallel dispatch (`[host] threads` > 1): batches of different matches run on worker
// threads at once, and come back to the host in the order they were pushed.
//
// Work runs on lanes, each a queue that one worker at a time drains in order:
//   - one lane per shard, where every plugin that declared ARB_CAP_SHARD_BY_MATCH runs
//     its instance for that shard (ShardedInstance) on the matches the shard owns; there
//     are more shards than workers (shards_for_threads), so that a shard is a small part
//     of the players, and a reload can carry one while the others run (run_in_turn);
//   - one lane per other plugin (no capability, or isolated in a child process), where
//     its single instance gets every batch in the order pushed.
// A batch is done when each lane it went to has run it. The host takes finished batches
// strictly in push order (take_finished) and aggregates them then, so the signals, the
// sinks' calls and the assessments are those of one thread, whatever the thread count.
//
// Memory stays bounded: at most max_batches batches (and max_bytes of them) are in
// flight; the host waits for the oldest before pushing more (full()).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/dispatch.hpp"
#include "arbiter/host/ingest.hpp"

namespace arbiter::host {

// A batch through every plugin: what the lanes did with it.
struct FinishedBatch {
    VerifiedBatch batch;
    // The batch the host wrote for a gap before it (input_lost_batch), and the answers of
    // the plugins new enough to get it (kInputLostSchemaMinor).
    std::optional<VerifiedBatch> lost;
    std::vector<PluginCall> lost_calls;
    std::vector<PluginCall> batch_calls;
    std::vector<PluginCall> end_calls;  // when the batch ends its match: on_match_end
    // The match's lost stretches as the ledger saw them once this batch was admitted, when
    // that changed them (a gap, a reused id, an end): what assessments say from this batch
    // on, not from the moment a later batch is pushed.
    std::optional<std::vector<LostStretch>> lost_after;
};

class ParallelDispatch {
  public:
    // Starts `workers` threads over `shards` shard lanes; `dispatcher`'s slots are read on
    // them while batches are in flight, so the host changes its slots only when idle()
    // (after take_finished(all)) and no step is pending (wait_for_steps).
    ParallelDispatch(Dispatcher& dispatcher, uint32_t shards, uint32_t workers);
    ~ParallelDispatch();  // waits for the batches in flight, then stops the workers
    ParallelDispatch(const ParallelDispatch&) = delete;
    ParallelDispatch& operator=(const ParallelDispatch&) = delete;

    uint32_t shards() const { return shards_; }
    // Hands a batch (and the gap batch before it, if any) to the lanes; returns at once.
    void submit(VerifiedBatch batch, std::optional<VerifiedBatch> lost = std::nullopt,
                std::optional<std::vector<LostStretch>> lost_after = std::nullopt);
    // Too much in flight: take_finished(Wait::oldest) before the next submit.
    bool full() const;
    bool idle() const { return in_flight_.empty(); }
    size_t in_flight() const { return in_flight_.size(); }

    // Steps that must each run on one shard's lane, between two of its batches, one step at
    // a time while the other lanes go on (a staged reload carries shard k's state in step
    // k). Each is queued behind the batches already submitted to its lane; the next is
    // queued when one ends. A step must not throw. Appends to steps still running.
    struct Step {
        uint32_t shard = 0;
        std::function<void()> run;
    };
    void run_in_turn(std::vector<Step> steps);
    // Whether steps are left to run; wait_for_steps() returns once none is.
    bool steps_pending() const;
    void wait_for_steps();

    enum class Wait { none, room, all };
    // The finished batches at the front, in push order: those already done (none), at
    // least the oldest kRoomBatches or every batch when fewer are in flight (room), or
    // every batch in flight (all).
    std::vector<FinishedBatch> take_finished(Wait wait);

    static constexpr size_t kMaxBatches = 256;
    // What a full dispatch waits to be freed before the pushing thread goes on (Host::push
    // waits for room): a quarter of the limit, so that the pushing thread, faster than the
    // workers, sleeps and wakes once per 64 batches and not at every batch finished (each
    // wake a futex call and a context switch, on cores the workers need).
    static constexpr size_t kRoomBatches = kMaxBatches / 4;
    static constexpr size_t kMaxBytes = 64u * 1024u * 1024u;

  private:
    struct InFlight {
        FinishedBatch work;
        size_t bytes = 0;         // of the batch and its gap batch, counted in bytes_in_flight_
        uint32_t lanes_left = 0;  // guarded by mutex_
        bool awaited = false;     // guarded by mutex_: take_finished waits for it
    };
    struct Task {
        InFlight* batch;  // null for a step (run_in_turn)
        std::function<void()> run;
    };
    struct Lane {
        std::deque<Task> tasks;
        bool scheduled = false;  // in ready_ or being run: one worker at a time
    };

    // With mutex_ held. Posts the task, or throws and leaves it as it was.
    void post(size_t lane, Task&& task);
    void post_next_step();              // with mutex_ held
    void work();
    // The calls of slot `index` on `instance` for one batch in flight (on a lane).
    void run_slot(size_t index, AnalyzerInstance& instance, FinishedBatch& work);

    Dispatcher& dispatcher_;
    const uint32_t shards_;
    std::deque<std::unique_ptr<InFlight>> in_flight_;  // the host's thread only
    size_t bytes_in_flight_ = 0;

    mutable std::mutex mutex_;
    std::condition_variable work_ready_;
    std::condition_variable batch_done_;
    std::vector<std::unique_ptr<Lane>> lanes_;  // shards, then one per slot
    std::deque<Lane*> ready_;
    size_t unfinished_ = 0;  // batches with a lane still to run them
    // The batches take_finished waits for (marked `awaited`) that are not finished yet: a
    // worker wakes it when the last of them finishes, or when none is left unfinished.
    size_t awaited_left_ = 0;
    std::list<Step> steps_;  // run_in_turn's, not yet posted
    bool step_posted_ = false;  // one step is on its lane
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace arbiter::host
