#include "arbiter/host/parallel_dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>

#include "arbiter/host/input_lost.hpp"
#include "arbiter/host/sharded_instance.hpp"

namespace arbiter::host {

namespace {

// One call on a lane, timed. Whatever the host's side of it throws (out of memory, say)
// becomes the call's error: a worker thread has no caller to throw to, and the batch must
// still finish so that the ones behind it can.
template <typename Call>
PluginCall timed_call(Call&& call) {
    PluginCall made;
    made.made = true;
    const auto start = std::chrono::steady_clock::now();
    try {
        made.result = call();
    } catch (const std::exception& error) {
        made.result = {};
        made.result.status = ARB_ERR_INTERNAL;
        made.result.error = std::string("the host failed around the call: ") + error.what();
    } catch (...) {
        made.result = {};
        made.result.status = ARB_ERR_INTERNAL;
        made.result.error = "the host failed around the call";
    }
    made.ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - start)
                                        .count());
    return made;
}

// Whether a lane calls `instance` with a batch of schema minor `min_schema_minor`. Asked of
// the instance, never of its slot: the host thread may change a slot's library while the
// lanes run (the end of a staged reload), and the shards of one plugin may then be of two
// versions.
bool takes(const AnalyzerInstance& instance, uint32_t min_schema_minor = 0) {
    return instance.takes_calls() && instance.schema_minor() >= min_schema_minor;
}

}  // namespace

ParallelDispatch::ParallelDispatch(Dispatcher& dispatcher, uint32_t shards, uint32_t workers)
    : dispatcher_(dispatcher), shards_(shards < 1 ? 1 : shards) {
    for (uint32_t k = 0; k < shards_; ++k)
        lanes_.push_back(std::make_unique<Lane>());
    for (uint32_t t = 0; t < std::max(workers, 1u); ++t)
        workers_.emplace_back([this] { work(); });
}

ParallelDispatch::~ParallelDispatch() {
    {
        std::unique_lock lock(mutex_);
        // Batches nobody will take still finish: their plugins are being called.
        batch_done_.wait(lock, [&] { return unfinished_ == 0 && !step_posted_; });
        stopping_ = true;
    }
    work_ready_.notify_all();
    for (auto& worker : workers_)
        worker.join();
}

void ParallelDispatch::post(size_t lane_index, Task&& task) {
    Lane& lane = *lanes_[lane_index];
    lane.tasks.push_back(std::move(task));
    if (lane.scheduled) return;
    try {
        ready_.push_back(&lane);
    } catch (...) {
        // Nothing posted after all: the task goes back to the caller.
        task = std::move(lane.tasks.back());
        lane.tasks.pop_back();
        throw;
    }
    lane.scheduled = true;
    work_ready_.notify_one();
}

void ParallelDispatch::run_in_turn(std::vector<Step> steps) {
    for (const Step& step : steps)
        if (step.shard >= shards_) throw std::out_of_range("a step for a shard that is not there");
    // All or nothing: the steps are made into a list here, and spliced in (which cannot
    // fail) under the lock, so a failure leaves no step of them queued.
    std::list<Step> added(std::make_move_iterator(steps.begin()),
                          std::make_move_iterator(steps.end()));
    std::lock_guard lock(mutex_);
    steps_.splice(steps_.end(), added);
    if (!step_posted_) post_next_step();
}

void ParallelDispatch::post_next_step() {
    if (steps_.empty()) {
        step_posted_ = false;
        batch_done_.notify_all();
        return;
    }
    // Popped only once posted: a post that fails (out of memory) leaves the step queued.
    Step& step = steps_.front();
    Task task{nullptr, std::move(step.run)};
    try {
        post(step.shard, std::move(task));  // on a throw, `task` is as it was
    } catch (...) {
        step.run = std::move(task.run);
        throw;
    }
    steps_.pop_front();
    step_posted_ = true;
}

bool ParallelDispatch::steps_pending() const {
    std::lock_guard lock(mutex_);
    return step_posted_ || !steps_.empty();
}

void ParallelDispatch::wait_for_steps() {
    std::unique_lock lock(mutex_);
    batch_done_.wait(lock, [&] { return !step_posted_ && steps_.empty(); });
}

void ParallelDispatch::run_slot(size_t index, AnalyzerInstance& instance, FinishedBatch& work) {
    // On a lane there is nothing to overlap an isolated plugin's start with: it is the
    // other lanes that run meanwhile.
    if (work.lost && takes(instance, kInputLostSchemaMinor))
        work.lost_calls[index] = timed_call([&] {
            instance.start_batch(*work.lost);
            return instance.on_batch(*work.lost);
        });
    if (!takes(instance)) return;
    work.batch_calls[index] = timed_call([&] {
        instance.start_batch(work.batch);
        return instance.on_batch(work.batch);
    });
    // The end of the match right behind its last batch, as the host would call it.
    if (work.batch.ends_match && takes(instance))
        work.end_calls[index] = timed_call(
            [&] { return instance.on_match_end(work.batch.relay_id, work.batch.match_id); });
}

void ParallelDispatch::submit(VerifiedBatch batch, std::optional<VerifiedBatch> lost,
                              std::optional<std::vector<LostStretch>> lost_after) {
    const std::vector<PluginSlot>& slots = dispatcher_.slots();
    auto entry = std::make_unique<InFlight>();
    FinishedBatch& work = entry->work;
    work.batch = std::move(batch);
    work.lost = std::move(lost);
    work.lost_after = std::move(lost_after);
    work.lost_calls.resize(slots.size());
    work.batch_calls.resize(slots.size());
    work.end_calls.resize(slots.size());
    const uint32_t shard = shard_of(work.batch.relay_id, work.batch.match_id, shards_);

    std::vector<size_t> sharded;
    std::vector<size_t> alone;
    for (size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i].active()) continue;
        (shards_ > 1 && slots[i].instance->shard_count() == shards_ ? sharded : alone).push_back(i);
    }
    InFlight* raw = entry.get();
    // Every allocation before the batch counts as in flight: if one fails, nothing waits
    // for lanes that will never run it.
    std::vector<std::pair<size_t, Task>> tasks;
    tasks.reserve(1 + alone.size());
    if (!sharded.empty())
        tasks.emplace_back(shard, Task{raw, [this, raw, shard, sharded = std::move(sharded)] {
                                           for (size_t i : sharded)
                                               run_slot(
                                                   i, dispatcher_.slots()[i].instance->shard(shard),
                                                   raw->work);
                                       }});
    for (size_t i : alone)
        tasks.emplace_back(shards_ + i, Task{raw, [this, raw, i] {
                                                 run_slot(i, *dispatcher_.slots()[i].instance,
                                                          raw->work);
                                             }});
    entry->bytes = work.batch.bytes.size() + (work.lost ? work.lost->bytes.size() : 0);
    in_flight_.push_back(std::move(entry));
    bytes_in_flight_ += raw->bytes;

    std::lock_guard lock(mutex_);
    while (lanes_.size() < shards_ + slots.size())
        lanes_.push_back(std::make_unique<Lane>());
    if (tasks.empty()) return;  // no active plugin: finished as it stands
    ++unfinished_;
    raw->lanes_left = static_cast<uint32_t>(tasks.size());
    for (auto& [lane, task] : tasks)
        post(lane, std::move(task));
}

bool ParallelDispatch::full() const {
    return in_flight_.size() >= kMaxBatches || bytes_in_flight_ >= kMaxBytes;
}

std::vector<FinishedBatch> ParallelDispatch::take_finished(Wait wait) {
    std::vector<FinishedBatch> finished;
    if (in_flight_.empty()) return finished;
    finished.reserve(in_flight_.size());  // moving them out below must not fail halfway
    std::unique_lock lock(mutex_);
    if (wait == Wait::room) {
        // The workers never look at in_flight_ (this thread adds to it without the lock):
        // the batches waited for are marked instead, and counted down as they finish.
        const size_t count = std::min(in_flight_.size(), kRoomBatches);
        for (size_t i = 0; i < count; ++i) {
            if (in_flight_[i]->lanes_left == 0) continue;
            in_flight_[i]->awaited = true;
            ++awaited_left_;
        }
        batch_done_.wait(lock, [&] { return awaited_left_ == 0; });
    } else if (wait == Wait::all) {
        batch_done_.wait(lock, [&] { return unfinished_ == 0; });
    }
    while (!in_flight_.empty() && in_flight_.front()->lanes_left == 0) {
        bytes_in_flight_ -= in_flight_.front()->bytes;
        finished.push_back(std::move(in_flight_.front()->work));
        in_flight_.pop_front();
    }
    return finished;
}

void ParallelDispatch::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        work_ready_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
        if (ready_.empty()) return;  // stopping, and nothing left to run
        Lane* lane = ready_.front();
        ready_.pop_front();
        Task task = std::move(lane->tasks.front());
        lane->tasks.pop_front();
        lock.unlock();
        task.run();  // never throws: run_slot's calls catch, and steps must not throw
        lock.lock();
        if (!task.batch) {
            post_next_step();
        } else if (--task.batch->lanes_left == 0) {
            --unfinished_;
            // Only when a waiter may go on: a wake-up that finds its wait not over yet
            // costs the pushing thread a futex call and a context switch for nothing.
            const bool last_awaited = task.batch->awaited && --awaited_left_ == 0;
            if (unfinished_ == 0 || last_awaited) batch_done_.notify_all();
        }
        // Other lanes get a turn before this one's next batch.
        if (lane->tasks.empty()) {
            lane->scheduled = false;
        } else {
            ready_.push_back(lane);
            work_ready_.notify_one();
        }
    }
}

}  // namespace arbiter::host
