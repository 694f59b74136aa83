// ShardedInstance: a match's calls go to the shard that owns it, a save covers every shard
// in one envelope that only as many shards take back, and a config reaches all or none.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/host/parallel_dispatch.hpp"
#include "arbiter/host/sharded_instance.hpp"

namespace arbiter::host {
namespace {

// A shard that remembers what reached it, so the test can see where calls went. The
// plugins behind real shards are tested elsewhere (integration Threads.*); this is the
// routing and the envelope, which are the host's alone.
class ShardProbe final : public AnalyzerInstance {
  public:
    explicit ShardProbe(std::string name) : name_(std::move(name)) {}
    uint32_t schema_minor() const override { return 1; }
    CallResult on_batch(const VerifiedBatch& batch) override {
        matches.push_back(batch.match_id);
        if (batches_seen) ++*batches_seen;
        return {};
    }
    CallResult on_match_end(const std::string&, uint64_t match_id) override {
        ended.push_back(match_id);
        return {};
    }
    std::optional<std::vector<uint8_t>> save_state(std::string& error) override {
        if (refuse_save) {
            error = "cannot save";
            return std::nullopt;
        }
        return std::vector<uint8_t>(name_.begin(), name_.end());
    }
    CallResult restore_state(std::span<const uint8_t> blob) override {
        if (throw_on_restore) throw std::bad_alloc();
        if (meet_at_restore) {
            // Waits (up to 10 s) until every shard meeting here has arrived: only shards
            // restored at the same time all get past it.
            ++*meet_at_restore;
            for (int i = 0; i < 10'000 && *meet_at_restore < meet_count; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            met = *meet_at_restore >= meet_count;
        }
        if (refuse_restore || fail_restore) {
            CallResult result;
            result.status = refuse_restore ? ARB_ERR_STATE : ARB_ERR_INTERNAL;
            result.error = "not mine";
            return result;
        }
        restored.assign(blob.begin(), blob.end());
        return {};
    }
    CallResult configure(const PluginSettings& settings, std::span<const uint8_t>) override {
        CallResult result;
        if (settings.weight > 5 && refuse_heavy) {
            result.status = ARB_ERR_CONFIG;
            result.error = "too heavy";
            return result;
        }
        weight = settings.weight;
        return result;
    }

    std::vector<uint64_t> matches, ended;
    std::string restored;
    double weight = 1.0;
    bool refuse_save = false;
    bool refuse_restore = false;
    bool refuse_heavy = false;
    bool throw_on_restore = false;
    bool fail_restore = false;  // with ARB_ERR_INTERNAL: the shard may hold part of the state
    std::atomic<int>* meet_at_restore = nullptr;
    int meet_count = 0;
    bool met = false;
    std::atomic<int>* batches_seen = nullptr;  // counted as well, for another thread to read

  private:
    std::string name_;
};

struct Shards {
    explicit Shards(size_t count, const std::string& name = "shard-") {
        std::vector<std::unique_ptr<AnalyzerInstance>> made;
        for (size_t k = 0; k < count; ++k) {
            auto probe = std::make_unique<ShardProbe>(name + std::to_string(k));
            probes.push_back(probe.get());
            made.push_back(std::move(probe));
        }
        instance = std::make_unique<ShardedInstance>(std::move(made));
    }
    std::vector<ShardProbe*> probes;
    std::unique_ptr<ShardedInstance> instance;
};

VerifiedBatch batch_of(uint64_t match) {
    VerifiedBatch batch;
    batch.relay_id = "relay";
    batch.match_id = match;
    return batch;
}

TEST(ShardOf, SpreadsConsecutiveMatchesAndIsStable) {
    std::vector<int> per_shard(4, 0);
    for (uint64_t match = 1; match <= 4000; ++match) {
        const uint32_t shard = shard_of("relay", match, 4);
        ASSERT_LT(shard, 4u);
        ASSERT_EQ(shard, shard_of("relay", match, 4));
        ++per_shard[shard];
    }
    for (int count : per_shard)
        EXPECT_GT(count, 800) << "a shard got too few of 4,000 matches";
    EXPECT_EQ(shard_of("relay", 12345, 1), 0u);
    EXPECT_EQ(shard_of("relay", 12345, 0), 0u);
}

TEST(ShardedInstance, EachMatchGoesToTheShardThatOwnsIt) {
    Shards shards(3);
    for (uint64_t match = 1; match <= 30; ++match) {
        shards.instance->on_batch(batch_of(match));
        shards.instance->on_match_end("relay", match);
    }
    for (uint32_t k = 0; k < 3; ++k) {
        EXPECT_FALSE(shards.probes[k]->matches.empty());
        EXPECT_EQ(shards.probes[k]->matches, shards.probes[k]->ended);
        for (uint64_t match : shards.probes[k]->matches)
            EXPECT_EQ(shard_of("relay", match, 3), k);
        EXPECT_EQ(&shards.instance->shard(k), shards.probes[k]);
    }
}

TEST(ShardedInstance, StateGoesBackShardByShard) {
    Shards old_shards(3);
    std::string error;
    auto blob = old_shards.instance->save_state(error);
    ASSERT_TRUE(blob) << error;
    Shards fresh(3);
    ASSERT_TRUE(fresh.instance->restore_state(*blob).ok());
    for (size_t k = 0; k < 3; ++k)
        EXPECT_EQ(fresh.probes[k]->restored, "shard-" + std::to_string(k));
}

TEST(ShardedInstance, RefusesStateItCannotPlaceAndRestoresNothingThen) {
    Shards three(3);
    std::string error;
    const auto blob = *three.instance->save_state(error);
    auto refused = [](Shards& shards, std::span<const uint8_t> bytes) {
        const CallResult result = shards.instance->restore_state(bytes);
        for (auto* probe : shards.probes)
            EXPECT_TRUE(probe->restored.empty());
        return result.status == ARB_ERR_STATE ? result.error : std::string("(accepted)");
    };
    Shards two(2);
    EXPECT_NE(refused(two, blob).find("holds 3 shards, this instance runs 2"), std::string::npos);
    Shards other(3);
    const std::string plain = "a plugin's own blob";
    EXPECT_NE(
        refused(other, std::span(reinterpret_cast<const uint8_t*>(plain.data()), plain.size()))
            .find("ran unsharded"),
        std::string::npos);
    EXPECT_NE(refused(other, std::span(blob).first(blob.size() - 1)).find("cut short"),
              std::string::npos);
    std::vector<uint8_t> longer = blob;
    longer.push_back(0);
    EXPECT_NE(refused(other, longer).find("bytes after its last shard"), std::string::npos);
    std::vector<uint8_t> huge = blob;
    huge[16] = 0xff, huge[23] = 0x7f;  // shard 0's length: far past the end
    EXPECT_NE(refused(other, huge).find("cut short"), std::string::npos);
}

TEST(ShardedInstance, AShardThatRefusesItsStateLeavesEveryShardFresh) {
    Shards old_shards(3);
    std::string error;
    const auto blob = *old_shards.instance->save_state(error);
    Shards fresh(3);
    fresh.probes[2]->refuse_restore = true;
    std::vector<ShardProbe*> remade;
    fresh.instance->set_remake([&](uint32_t shard) {
        auto probe = std::make_unique<ShardProbe>("remade-" + std::to_string(shard));
        remade.push_back(probe.get());
        return probe;
    });
    const CallResult result = fresh.instance->restore_state(blob);
    EXPECT_EQ(result.status, ARB_ERR_STATE);
    EXPECT_EQ(result.error, "shard 2 of 3: not mine");
    ASSERT_EQ(remade.size(), 2u);  // shards 0 and 1 had taken theirs
    for (uint32_t k = 0; k < 2; ++k) {
        EXPECT_EQ(&fresh.instance->shard(k), remade[k]);
        EXPECT_TRUE(remade[k]->restored.empty());
    }
}

// Only ARB_ERR_STATE promises a shard is as it was made: one that failed otherwise is
// remade with the shards that took their state, by the envelope and by the carry alike.
TEST(ShardedInstance, AShardThatFailsItsRestoreOtherwiseIsRemadeToo) {
    Shards old_shards(3);
    std::string error;
    const auto blob = *old_shards.instance->save_state(error);
    for (bool carry : {false, true}) {
        Shards fresh(3);
        fresh.probes[1]->fail_restore = true;
        std::vector<uint32_t> remade;
        fresh.instance->set_remake([&](uint32_t shard) {
            remade.push_back(shard);
            return std::make_unique<ShardProbe>("remade");
        });
        if (carry)
            EXPECT_FALSE(fresh.instance->carry_state_from(*old_shards.instance, 2).ok());
        else
            EXPECT_EQ(fresh.instance->restore_state(blob).status, ARB_ERR_INTERNAL);
        // The envelope stops at shard 1; the carry has restored shard 2 as well.
        EXPECT_EQ(remade, carry ? (std::vector<uint32_t>{0, 1, 2}) : (std::vector<uint32_t>{0, 1}))
            << (carry ? "carry" : "envelope");
    }
}

TEST(ShardedInstance, ASaveFailsWhenAnyShardCannotSave) {
    Shards shards(2);
    shards.probes[1]->refuse_save = true;
    std::string error;
    EXPECT_FALSE(shards.instance->save_state(error));
    EXPECT_EQ(error, "shard 1 of 2: cannot save");
}

// A reload between two sharded generations: each shard's state straight across, no envelope.
TEST(ShardedInstance, CarriesEachShardsStateStraightAcross) {
    for (uint32_t parallel : {1u, 2u, 3u, 9u}) {
        Shards old_shards(4);
        Shards fresh(4);
        const ShardCarry carry = fresh.instance->carry_state_from(*old_shards.instance, parallel);
        ASSERT_TRUE(carry.ok()) << carry.save_error << carry.restored.error;
        EXPECT_EQ(carry.bytes, 4u * std::string("shard-0").size());
        EXPECT_EQ(carry.shard_us.size(), 4u);
        for (size_t k = 0; k < 4; ++k)
            EXPECT_EQ(fresh.probes[k]->restored, "shard-" + std::to_string(k)) << parallel;
    }
}

TEST(ShardedInstance, ACarryRunsShardsAtOnce) {
    Shards old_shards(2);
    Shards fresh(2);
    std::atomic<int> arrived{0};
    for (auto* probe : fresh.probes) {
        probe->meet_at_restore = &arrived;
        probe->meet_count = 2;
    }
    ASSERT_TRUE(fresh.instance->carry_state_from(*old_shards.instance, 2).ok());
    EXPECT_TRUE(fresh.probes[0]->met && fresh.probes[1]->met)
        << "the two shards were not restored at the same time";
}

TEST(ShardedInstance, ACarryOneShardRefusesLeavesEveryShardFresh) {
    Shards old_shards(4);
    Shards fresh(4);
    fresh.probes[1]->refuse_restore = true;
    std::vector<uint32_t> remade;
    fresh.instance->set_remake([&](uint32_t shard) {
        remade.push_back(shard);
        return std::make_unique<ShardProbe>("remade");
    });
    const ShardCarry carry = fresh.instance->carry_state_from(*old_shards.instance, 2);
    EXPECT_TRUE(carry.saved);
    EXPECT_EQ(carry.restored.status, ARB_ERR_STATE);
    EXPECT_EQ(carry.restored.error, "shard 1 of 4: not mine");
    EXPECT_EQ(remade, (std::vector<uint32_t>{0, 2, 3}));  // those that had taken theirs
    for (uint32_t k : {0u, 2u, 3u})
        EXPECT_TRUE(static_cast<ShardProbe&>(fresh.instance->shard(k)).restored.empty());
}

TEST(ShardedInstance, ACarryWhoseOldShardCannotSaveLeavesEveryShardFresh) {
    Shards old_shards(3);
    old_shards.probes[2]->refuse_save = true;
    Shards fresh(3);
    std::vector<uint32_t> remade;
    fresh.instance->set_remake([&](uint32_t shard) {
        remade.push_back(shard);
        return std::make_unique<ShardProbe>("remade");
    });
    const ShardCarry carry = fresh.instance->carry_state_from(*old_shards.instance, 3);
    EXPECT_FALSE(carry.saved);
    EXPECT_EQ(carry.save_error, "shard 2 of 3: cannot save");
    EXPECT_EQ(remade, (std::vector<uint32_t>{0, 1}));
}

// A shard that throws on a helper thread is an error for that shard, never a terminate;
// with no way to make shards again, the report says which keep what they restored.
TEST(ShardedInstance, ACarryThatThrowsIsAnErrorAndSaysWhatItCouldNotUndo) {
    Shards old_shards(2);
    Shards fresh(2);
    fresh.probes[1]->throw_on_restore = true;
    const ShardCarry carry = fresh.instance->carry_state_from(*old_shards.instance, 2);
    EXPECT_TRUE(carry.saved);
    EXPECT_FALSE(carry.restored.ok());
    EXPECT_NE(carry.restored.error.find("shard 1 of 2: std::bad_alloc"), std::string::npos)
        << carry.restored.error;
    // Shard 0 took its state; shard 1 may have taken part of it before it threw (only a
    // refusal with ARB_ERR_STATE promises otherwise): neither can be made fresh here.
    EXPECT_NE(carry.restored.error.find("shard 0 could not be made fresh again"), std::string::npos)
        << carry.restored.error;
    EXPECT_NE(carry.restored.error.find("shard 1 could not be made fresh again"), std::string::npos)
        << carry.restored.error;
    Shards three(3);
    EXPECT_THROW(three.instance->carry_state_from(*old_shards.instance, 2), std::logic_error);
}

TEST(ShardedInstance, AConfigOneShardRefusesLeavesEveryShardAsItWas) {
    Shards shards(3);
    PluginSettings before;
    before.weight = 2;
    shards.instance->remember_config(before, {});
    PluginSettings heavy;
    heavy.weight = 9;
    shards.probes[2]->refuse_heavy = true;
    const CallResult result = shards.instance->configure(heavy, {});
    EXPECT_EQ(result.status, ARB_ERR_CONFIG);
    EXPECT_EQ(result.error, "shard 2 of 3: too heavy");
    for (auto* probe : shards.probes)
        EXPECT_NE(probe->weight, 9.0);
    EXPECT_EQ(shards.probes[0]->weight, 2.0);
    PluginSettings light;
    light.weight = 3;
    EXPECT_TRUE(shards.instance->configure(light, {}).ok());
    for (auto* probe : shards.probes)
        EXPECT_EQ(probe->weight, 3.0);
}

// A staged reload's step: shard k's state goes from the live instance to the new one's
// shard k, and the two shards change places; a shard that cannot carry its state goes over
// fresh (remade when the refusal may have left part of it), and the others are not touched.
TEST(ShardedInstance, AStagedStepCarriesOneShardAndSwapsItIn) {
    Shards live(4, "old-");
    Shards next(4, "new-");
    next.probes[1]->fail_restore = true;    // may hold part of it: remade
    next.probes[2]->refuse_restore = true;  // ARB_ERR_STATE: left as it was made
    live.probes[3]->refuse_save = true;
    std::vector<uint32_t> remade;
    next.instance->set_remake([&](uint32_t shard) {
        remade.push_back(shard);
        return std::make_unique<ShardProbe>("remade");
    });
    std::vector<ShardStep> steps;
    for (uint32_t k = 0; k < 4; ++k) {
        steps.push_back(next.instance->carry_shard_into(k, *live.instance));
        // From its next batch on, the live instance runs the new shard k; the others wait.
        for (uint32_t j = k + 1; j < 4; ++j)
            EXPECT_EQ(&live.instance->shard(j), live.probes[j]);
        EXPECT_EQ(&next.instance->shard(k), live.probes[k]) << "the old shard, to destroy";
    }
    EXPECT_TRUE(steps[0].ok());
    EXPECT_EQ(steps[0].bytes, std::string("old-0").size());
    EXPECT_EQ(&live.instance->shard(0), next.probes[0]);
    EXPECT_EQ(next.probes[0]->restored, "old-0");

    EXPECT_TRUE(steps[1].saved);
    EXPECT_EQ(steps[1].restored.status, ARB_ERR_INTERNAL);
    EXPECT_EQ(remade, std::vector<uint32_t>{1});
    EXPECT_NE(&live.instance->shard(1), next.probes[1]) << "the remade shard went over";

    EXPECT_EQ(steps[2].restored.status, ARB_ERR_STATE);
    EXPECT_EQ(&live.instance->shard(2), next.probes[2]);

    EXPECT_FALSE(steps[3].saved);
    EXPECT_EQ(steps[3].save_error, "cannot save");
    EXPECT_EQ(&live.instance->shard(3), next.probes[3]);
    for (const ShardStep& step : steps)
        EXPECT_GE(step.us, 0.0);
}

// The lanes' steps (run_in_turn): one at a time, each behind the batches its lane was given
// before it, while the other lanes go on.
TEST(ParallelDispatchSteps, RunOneAtATimeBehindTheirLanesBatchesWhileTheOthersGoOn) {
    Metrics metrics;
    Dispatcher dispatcher(metrics);
    Shards shards(4);
    std::atomic<int> seen_by[4] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < 4; ++k)
        shards.probes[k]->batches_seen = &seen_by[k];
    PluginSlot slot;
    slot.settings.name = "probe";
    slot.instance = std::move(shards.instance);
    dispatcher.add(std::move(slot));
    ParallelDispatch lanes(dispatcher, 4, 2);

    auto match_in = [](uint32_t shard) {
        for (uint64_t match = 1;; ++match)
            if (shard_of("relay", match, 4) == shard) return match;
    };
    const uint64_t in_0 = match_in(0);
    const uint64_t in_1 = match_in(1);

    lanes.submit(batch_of(in_0));
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<int> order{0};
    int step_0_began = -1, step_0_ended = -1, step_1_began = -1;
    int batches_before_step_0 = -1;
    std::vector<ParallelDispatch::Step> steps;
    steps.push_back({0, [&] {
                         batches_before_step_0 = seen_by[0];
                         step_0_began = order++;
                         released.wait_for(std::chrono::seconds(20));
                         step_0_ended = order++;
                     }});
    steps.push_back({1, [&] { step_1_began = order++; }});
    lanes.run_in_turn(std::move(steps));
    lanes.submit(batch_of(in_0));  // behind step 0 on its lane
    for (int i = 0; i < 3; ++i)
        lanes.submit(batch_of(in_1));

    // Step 0 holds lane 0 only: lane 1 takes its three batches meanwhile (its step is not
    // queued until step 0 ends).
    for (int i = 0; i < 20'000 && seen_by[1] < 3; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(seen_by[1], 3);
    EXPECT_EQ(seen_by[0], 1) << "the batch behind the step waits for it";
    EXPECT_TRUE(lanes.steps_pending());
    release.set_value();
    lanes.wait_for_steps();
    EXPECT_FALSE(lanes.steps_pending());
    EXPECT_EQ(batches_before_step_0, 1) << "the batch given before the step ran before it";
    EXPECT_EQ(step_0_began, 0);
    EXPECT_EQ(step_0_ended, 1);
    EXPECT_EQ(step_1_began, 2) << "one step at a time";
    const auto finished = lanes.take_finished(ParallelDispatch::Wait::all);
    ASSERT_EQ(finished.size(), 5u);
    EXPECT_EQ(seen_by[0], 2);
    EXPECT_THROW(lanes.run_in_turn({{4, [] {}}}), std::out_of_range);
}

}  // namespace
}  // namespace arbiter::host
