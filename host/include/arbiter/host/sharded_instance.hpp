// A plugin that declared ARB_CAP_SHARD_BY_MATCH, run as one instance per shard (`[host]
// threads`, docs/performance.md "Threads"): each instance owns the matches that hash to
// its shard, so shards run in parallel and never share a match.
//
// To everything but the parallel dispatch it is one instance: a call about a match goes
// to the shard that owns the match, a save or a restore covers every shard, a new config
// reaches every shard or none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/host/analyzer_instance.hpp"

namespace arbiter::host {

// The shard of a match among `count`: stable across runs and machines, so that a replay
// gives every plugin instance the same matches whatever the order of arrival.
uint32_t shard_of(std::string_view relay_id, uint64_t match_id, uint32_t count);

// How many shards `threads` workers spread matches over: 1 with one thread, else 32 a
// thread (at most 256, never fewer than the threads). More shards than threads keeps each
// shard a small part of the players, so that a reload that carries one shard at a time
// holds up only the matches of that part, for a short time (Host::begin_install); and
// many lanes balance the workers better than one each.
uint32_t shards_for_threads(uint32_t threads);

// What carrying a sharded plugin's state shard by shard did (carry_state_from).
struct ShardCarry {
    bool saved = true;       // false: a shard of the old generation could not save
    std::string save_error;  // then why, naming the shard
    CallResult restored;     // else the first refusal of a new shard, naming it
    size_t bytes = 0;        // of every shard's blob
    std::vector<double> shard_us;  // each shard's save and restore, wall time
    double save_us = 0;            // of them, the saves and the restores, summed
    double restore_us = 0;
    bool ok() const { return saved && restored.ok(); }
};

// What carrying one shard across in a staged reload did (carry_shard_into).
struct ShardStep {
    bool saved = false;  // false: the old shard could not save (save_error says why)
    std::string save_error;
    CallResult restored;  // when saved: what the new shard said to the state
    size_t bytes = 0;
    double us = 0;               // save, restore and exchange, wall time: what the shard's
                                 // matches waited
    double save_us = 0;          // of it, the save and the restore
    double restore_us = 0;
    // Of us, the time the step's thread was on a core (its CPU time, staged steps only):
    // the rest it was runnable or waiting, behind the other threads of a busy box.
    double cpu_us = 0;
    std::string remake_problem;  // a new shard left holding part of a refused state
    // The shard was forked (fork_shard_into): us is the fork and the exchange at the end,
    // with what its calls waited for room (SnapshotHandover::Result::waited_us); save_us
    // is the forked copy's, and these say the rest.
    bool forked = false;
    std::string fork_problem;  // the fork failed, or its copy did: the shard was carried
    double fork_us = 0;        // of us, the fork() itself (SnapshotHandover::Result::fork_us)
    double catch_up_us = 0;
    uint64_t calls_made_again = 0;
    size_t most_kept_bytes = 0;
    double throttled_us = 0;
    bool ok() const { return saved && restored.ok(); }
};

class ShardedInstance final : public AnalyzerInstance {
  public:
    // One instance per shard, shard k created with shard_index k of shards.size().
    explicit ShardedInstance(std::vector<std::unique_ptr<AnalyzerInstance>> shards);

    CallResult on_batch(const VerifiedBatch& batch) override;
    CallResult on_match_end(const std::string& relay_id, uint64_t match_id) override;
    // Every shard's blob in one envelope (see the .cpp); restore takes only an envelope of
    // as many shards, since a match's state must land in the shard that will own it.
    std::optional<std::vector<uint8_t>> save_state(std::string& error) override;
    CallResult restore_state(std::span<const uint8_t> blob) override;
    // Every shard takes the config, or (when one refuses) the ones that took it are set
    // back to the config they had, so that the shards never disagree.
    CallResult configure(const PluginSettings& settings,
                         std::span<const uint8_t> baseline) override;

    // A reload between two sharded generations of as many shards: shard k's state goes
    // straight from `from`'s shard k to this instance's shard k, with no envelope, and up
    // to `parallel` shards at once (a shard's instances are independent of the others', as
    // ARB_CAP_SHARD_BY_MATCH promises), so the stream waits for the largest shard, not for
    // them all. Every shard carries its state, or (when one cannot) every shard of this
    // instance starts fresh. Call it only with no batch in flight on either instance.
    ShardCarry carry_state_from(ShardedInstance& from, uint32_t parallel);

    // One shard of a staged reload (Host::begin_install), run on that shard's lane between
    // two of its batches while the other shards run: shard k of `live` (the generation the
    // host calls) saves its state, this instance's shard k (the new generation's) restores
    // it, and the two change places, so that `live` runs the new shard from its next batch
    // and this instance keeps the old one to be destroyed. A shard that cannot carry its
    // state starts fresh (made again when the refusal may have left part of it) and goes
    // over all the same, as a whole reload would. Never throws.
    ShardStep carry_shard_into(uint32_t k, ShardedInstance& live) noexcept;
    // The same step for a shard that holds many players, where a carry would hold its
    // matches too long: shard k of `live` is forked (SnapshotHandover) and the handover
    // stands in its place, answering with the old shard while the new one restores and
    // catches up. When the fork cannot be made, the shard is carried as above. Never
    // throws; `step.forked` says which.
    ShardStep fork_shard_into(uint32_t k, ShardedInstance& live) noexcept;
    // Whether shard k is a handover (fork_shard_into) not done yet; wait_for_handover
    // waits until it is. On the thread that posts the steps, with none running.
    bool handover_running(uint32_t k) const;
    void wait_for_handover(uint32_t k);
    // The end of a forked shard, on its lane once its handover is done: the new shard takes
    // its place in `live` and this instance keeps the old. A handover whose copy gave
    // nothing leaves the old shard answering, and the shard is carried then (holding its
    // matches, as a carry does). Adds to `step`. Never throws.
    void end_shard_handover(uint32_t k, ShardedInstance& live, ShardStep& step) noexcept;
    // Once every shard has gone over: what shards are made from (settings, baseline, how to
    // remake one) changes places too, so that `live` is the new generation whole and this
    // instance the old one. On the thread that owns the host's slots.
    void exchange_making(ShardedInstance& other) noexcept;

    uint32_t shard_count() const override { return static_cast<uint32_t>(shards_.size()); }
    uint32_t schema_minor() const override {
        return shards_.empty() ? 0 : shards_.front()->schema_minor();
    }
    AnalyzerInstance& shard(uint32_t index) override { return *shards_.at(index); }
    bool in_process() const override {
        return std::all_of(shards_.begin(), shards_.end(),
                           [](const auto& shard) { return shard->in_process(); });
    }
    void set_quiet(bool quiet) override {
        for (auto& shard : shards_)
            shard->set_quiet(quiet);
    }

    // Sets what configure falls back to: the settings and baseline the shards were made with.
    void remember_config(const PluginSettings& settings, std::vector<uint8_t> baseline);
    // How to make shard k afresh: a restore refused by one shard makes the shards already
    // restored fresh again, so that "started fresh" is true of every shard.
    using MakeShard = std::function<std::unique_ptr<AnalyzerInstance>(uint32_t shard)>;
    void set_remake(MakeShard make) { remake_ = std::move(make); }

  private:
    // Makes shards [0, count) for which `took` holds fresh again; says which could not be.
    std::string remake_shards(const std::vector<char>& took);
    // After a step's restore into shard k was refused in a way that may have left part of
    // the state there: makes that shard fresh again (the step says if it could not).
    void remake_if_refused(uint32_t k, ShardStep& step) noexcept;

    std::vector<std::unique_ptr<AnalyzerInstance>> shards_;
    MakeShard remake_;
    PluginSettings settings_;
    std::vector<uint8_t> baseline_;
};

}  // namespace arbiter::host
