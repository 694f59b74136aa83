// A reload in the middle of a match changes nothing: the old instance saves its budgets,
// lag estimate and overdraw windows, the new one restores them and goes on exactly as
// the old one would have.
#include <gtest/gtest.h>

#include "run_match.hpp"

namespace {

using namespace lagpool_test;

Timeline busy_match() {
    Timeline timeline;
    add_match_frame(timeline, {1, 2, 3, 4}, 80 * kSecond, /*max_noise_us=*/200'000);
    add_runner(timeline, {.player = 1,
                          .to_us = 80 * kSecond,
                          .speed = [](double t) { return t >= 10.0 && t < 70.0 ? 30.0 : 10.0; },
                          .seed = 71});
    add_runner(timeline, {.player = 2,
                          .to_us = 80 * kSecond,
                          .speed = [](double) { return 19.0; },
                          .seed = 72,
                          .server_teleports = {30 * kSecond}});
    add_actor(timeline, {.player = 3,
                         .from_us = 5 * kSecond,
                         .to_us = 80 * kSecond,
                         .interval_us = 70'000,
                         .jitter_us = 10'000,
                         .seed = 73});
    add_actor(timeline, {.player = 4,
                         .from_us = 0,
                         .to_us = 80 * kSecond,
                         .interval_us = 200'000,
                         .jitter_us = 40'000,
                         .seed = 74});
    timeline.stall(25 * kSecond, 7 * kSecond);
    return timeline;
}

void expect_same_signals(const std::vector<arbiter::testing::RecordedSignal>& a,
                         const std::vector<arbiter::testing::RecordedSignal>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].player, b[i].player) << i;
        EXPECT_EQ(a[i].code, b[i].code) << i;
        EXPECT_EQ(a[i].score, b[i].score) << i;
        EXPECT_EQ(a[i].confidence, b[i].confidence) << i;
        EXPECT_EQ(a[i].evidence, b[i].evidence) << i;
        EXPECT_EQ(a[i].relay_time_us, b[i].relay_time_us) << i;
    }
}

TEST(Reload, AReloadInTheMiddleOfAMatchChangesNothing) {
    const auto batches = busy_match().batches(40);
    auto uninterrupted = std::make_unique<Harness>();
    for (const auto& batch : batches)
        uninterrupted->feed(batch);

    // Reload at several points, among them while the cheaters are overdrawing.
    for (size_t split : {batches.size() / 5, batches.size() / 2, batches.size() * 4 / 5}) {
        SCOPED_TRACE("reload after batch " + std::to_string(split));
        Harness old_instance;
        std::vector<arbiter::testing::RecordedSignal> signals;
        for (size_t i = 0; i < split; ++i)
            old_instance.feed(batches[i]);
        auto blob = old_instance.save_state();
        ASSERT_TRUE(blob) << old_instance.error();

        Harness new_instance;
        ASSERT_EQ(new_instance.restore_state(*blob), ARB_OK) << new_instance.error();
        for (size_t i = split; i < batches.size(); ++i)
            new_instance.feed(batches[i]);

        signals = old_instance.signals();
        signals.insert(signals.end(), new_instance.signals().begin(), new_instance.signals().end());
        expect_same_signals(signals, uninterrupted->signals());
    }
    // The match had something to carry across the reload.
    EXPECT_GE(weighted(*uninterrupted, 1, "movement.overdraw"), 0.7);
    EXPECT_GE(weighted(*uninterrupted, 3, "dig.overdraw"), 0.7);
}

TEST(Reload, TheSameStateMakesTheSameBlob) {
    const auto batches = busy_match().batches(40);
    Harness first;
    for (size_t i = 0; i < batches.size() / 2; ++i)
        first.feed(batches[i]);
    auto blob = first.save_state();
    ASSERT_TRUE(blob);
    Harness second;
    ASSERT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    auto again = second.save_state();
    ASSERT_TRUE(again);
    EXPECT_EQ(*blob, *again);
}

TEST(Reload, ADamagedBlobIsRefusedAndChangesNothing) {
    const auto batches = busy_match().batches(40);
    const size_t split = batches.size() / 2;
    Harness source;
    for (size_t i = 0; i < split; ++i)
        source.feed(batches[i]);
    auto blob = source.save_state();
    ASSERT_TRUE(blob);

    Harness target;
    for (size_t i = 0; i < split; ++i)
        target.feed(batches[i]);
    auto damaged = *blob;
    damaged[damaged.size() / 2] ^= 0x5a;
    EXPECT_EQ(target.restore_state(damaged), ARB_ERR_STATE);
    EXPECT_NE(target.error().find("checksum"), std::string::npos) << target.error();
    auto truncated = std::vector<uint8_t>(
        blob->begin(), blob->begin() + static_cast<std::ptrdiff_t>(blob->size() / 2));
    EXPECT_EQ(target.restore_state(truncated), ARB_ERR_STATE);
    // The refused blobs left the state as it was: the target goes on like the source.
    for (size_t i = split; i < batches.size(); ++i) {
        source.feed(batches[i]);
        target.feed(batches[i]);
    }
    expect_same_signals(target.signals(), source.signals());
}

// A blob lists each player's budget kinds once, in name order, as the plugin writes them.
// One that does not is no state of the plugin's: refused, and nothing changes. (A blob
// in the wrong order could otherwise make each of its kinds a shift of all the others.)
TEST(Reload, BudgetKindsOutOfOrderOrTwiceAreRefused) {
    auto blob_with_kinds = [](const std::vector<std::string>& names) {
        arbiter::StateWriter out("LGP1", 1);
        out.put<uint64_t>(1);  // matches
        out.put_string("relay");
        out.put<uint64_t>(1);
        out.put<double>(0.0);  // lag estimate and its time
        out.put<int64_t>(0);
        out.put<uint64_t>(1);  // players
        out.put<uint32_t>(7);
        out.put<uint8_t>(0);
        for (int i = 0; i < 3; ++i)
            out.put<double>(0.0);
        out.put<uint64_t>(names.size());
        for (const std::string& name : names) {
            out.put_string(name);
            out.put<double>(2.0);  // capacity, spent
            out.put<double>(0.0);
            out.put<int64_t>(0);  // updated, reset
            out.put<int64_t>(0);
            out.put<uint8_t>(0);
            out.put<double>(0.0);
            out.put<uint64_t>(0);  // overdraws
        }
        return out.finish();
    };
    Harness target;
    EXPECT_EQ(target.restore_state(blob_with_kinds({"dig", "movement"})), ARB_OK) << target.error();
    for (const auto& names :
         std::vector<std::vector<std::string>>{{"movement", "dig"}, {"dig", "dig"}}) {
        Harness refused;
        EXPECT_EQ(refused.restore_state(blob_with_kinds(names)), ARB_ERR_STATE);
        EXPECT_NE(refused.error().find("out of order"), std::string::npos) << refused.error();
    }
}

}  // namespace
