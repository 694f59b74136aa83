// A reload in the middle of a match changes nothing: the old instance saves every
// player's allowance, measurements in progress, reports and the engine's counts; the new
// one restores them and goes on exactly as the old one would have. A blob that is not
// whole state of ours is refused and the state left as it was.
#include <cstring>

#include <gtest/gtest.h>

#include "run_match.hpp"

namespace {

using namespace luanti_test;

// Every check at work: a speeder, a hoverer, one through stone, an honest walker with the
// engine's reports, and a player granted fast half-way.
std::vector<std::vector<uint8_t>> busy_match() {
    std::vector<Player> players = {
        {.id = 1, .name = "speeder", .path = [](double t) { return walking(t, 12); }},
        {.id = 2,
         .name = "hoverer",
         .path =
             [](double t) {
                 Step s = walking(t, 2);
                 s.z = std::min(t, 4.0);
                 s.on_ground = false;
                 return s;
             }},
        {.id = 3,
         .name = "digger",
         .path =
             [](double t) {
                 Step s = walking(t, 4);
                 s.inside = std::fmod(t, 10.0) > 2.0;
                 return s;
             }},
        {.id = 4,
         .name = "walker",
         .path = [](double t) { return walking(t, 4); },
         .extras = {{3 * kSecond, "luanti.cheat", R"({"type":"moved_too_fast"})"},
                    {9 * kSecond, "luanti.cheat", R"({"type":"dug_too_fast"})"}}},
        {.id = 5,
         .name = "runner",
         .path = [](double t) { return walking(t, t < 20 ? 4 : 18); },
         .extras = {{20 * kSecond, "luanti.allowance", R"({"fast":true,"speed":1.1})"}}},
    };
    return luanti_match(players, 40 * kSecond);
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
    const auto batches = busy_match();
    auto uninterrupted = run(batches);
    for (uint32_t player : {1u, 2u, 3u})
        ASSERT_TRUE(uninterrupted->any_signal_for(player)) << player;

    for (size_t split :
         {size_t{1}, batches.size() / 7, batches.size() / 2, batches.size() * 5 / 6}) {
        Harness before;
        for (size_t i = 0; i < split; ++i)
            before.feed(batches[i]);
        const auto blob = before.save_state();
        ASSERT_TRUE(blob);
        Harness after;
        ASSERT_EQ(after.restore_state(*blob), ARB_OK) << after.error();
        for (size_t i = split; i < batches.size(); ++i)
            after.feed(batches[i]);
        std::vector<arbiter::testing::RecordedSignal> joined = before.signals();
        joined.insert(joined.end(), after.signals().begin(), after.signals().end());
        expect_same_signals(uninterrupted->signals(), joined);
        // The same state is the same bytes.
        EXPECT_EQ(*after.save_state(), *uninterrupted->save_state()) << split;
    }
}

TEST(Reload, ABlobThatIsNotOursIsRefusedAndTheStateKept) {
    const auto batches = busy_match();
    Harness harness;
    for (size_t i = 0; i < batches.size() / 2; ++i)
        harness.feed(batches[i]);
    const auto blob = *harness.save_state();

    auto damaged = blob;
    damaged[damaged.size() / 2] ^= 0x40;  // the seal's checksum no longer matches
    EXPECT_NE(harness.restore_state(damaged), ARB_OK);
    auto truncated = blob;
    truncated.resize(blob.size() - 3);
    EXPECT_NE(harness.restore_state(truncated), ARB_OK);
    const std::vector<uint8_t> nothing;
    EXPECT_NE(harness.restore_state(nothing), ARB_OK);
    // Another plugin's blob: refused by its tag.
    arbiter::StateWriter other("LGP1", 1);
    other.put<uint64_t>(0);
    EXPECT_NE(harness.restore_state(other.finish()), ARB_OK);
    EXPECT_NE(harness.error().find("LUA1"), std::string::npos) << harness.error();

    EXPECT_EQ(*harness.save_state(), blob);
}

TEST(Reload, AnEmptyStateRestoresToAFreshInstance) {
    Harness fresh;
    const auto blob = *fresh.save_state();
    Harness restored;
    ASSERT_EQ(restored.restore_state(blob), ARB_OK);
    EXPECT_EQ(*restored.save_state(), blob);
}

}  // namespace
