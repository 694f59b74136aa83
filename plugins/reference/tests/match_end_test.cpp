// The lifetime of what the analyzer remembers: a match's state goes with its end, a
// player's with their leaving, and nothing else goes with them.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "match_script.hpp"

namespace arbiter::reference {
namespace {

using test::Harness;
using test::MatchScript;
using test::Mover;
using test::Signals;

constexpr uint32_t kPlayer = 1;

// Walks to x = 25 over 5 s, then, in the next match under the same key, spawns at x = 500.
MatchScript first_match() {
    return MatchScript("relay", 9).add(kPlayer, Mover().run(5.0, 5.0));
}
MatchScript next_match() {
    return MatchScript("relay", 9).add(kPlayer, Mover({500, 0, 0}, 5.05).run(5.0, 5.0));
}

TEST(MatchEnd, NextMatchStartsFresh) {
    Harness harness;
    test::feed_all(harness, first_match().batches());
    EXPECT_TRUE(harness.end_match("relay", 9).empty());
    ASSERT_EQ(harness.last_status(), ARB_OK) << harness.error();
    const Signals signals = test::feed_all(harness, next_match().batches());
    EXPECT_TRUE(signals.empty()) << signals.front().code << " " << signals.front().evidence;
}

TEST(MatchEnd, WithoutItTheWindowWouldSpanBothMatches) {
    // The counterpart of the test above: the same events with no end in between.
    Harness harness;
    test::feed_all(harness, first_match().batches());
    test::feed_all(harness, next_match().batches());
    EXPECT_TRUE(harness.max_score(kPlayer, "movement.teleport").has_value());
}

TEST(MatchEnd, FreesEverythingTheMatchHeld) {
    Harness fresh;
    const auto empty = fresh.save_state();
    ASSERT_TRUE(empty.has_value()) << fresh.error();

    Harness harness;
    test::feed_all(harness, first_match().batches());
    EXPECT_NE(harness.save_state(), empty);
    harness.end_match("relay", 9);
    EXPECT_EQ(harness.save_state(), empty);
}

TEST(MatchEnd, OtherMatchesKeepTheirState) {
    Harness harness;
    test::feed_all(harness, MatchScript("relay", 1).add(kPlayer, Mover().run(5.0, 3.0)).batches());
    test::feed_all(harness, MatchScript("relay", 2).add(kPlayer, Mover().run(5.0, 3.0)).batches());
    harness.end_match("relay", 1);
    // Match 2 goes on: a 250 m jump can only be seen against its last position.
    const Signals signals = test::feed_all(
        harness,
        MatchScript("relay", 2).add(kPlayer, Mover({265, 0, 0}, 3.05).run(5.0, 0.5)).batches());
    const Signals teleport = test::only(signals, kPlayer, "movement.teleport");
    ASSERT_FALSE(teleport.empty());
    EXPECT_NE(teleport.front().evidence.find("\"kind\":\"single_update\""), std::string::npos);
}

TEST(Memory, ALongMatchKeepsOnlyRecentHistory) {
    // The state of a player after 20 s and after 60 s of play is the same size: old
    // updates and round trips are let go once no window or allowance can reach them.
    auto state_after = [](double seconds) {
        MatchScript script;
        script.add(kPlayer, Mover().run(5.0, seconds)).latencies(kPlayer, 0.5, seconds, 60'000);
        Harness harness;
        test::feed_all(harness, script.batches());
        return harness.save_state().value_or(std::vector<uint8_t>{}).size();
    };
    const size_t short_match = state_after(20.0);
    ASSERT_GT(short_match, 0u);
    EXPECT_EQ(state_after(60.0), short_match);
}

TEST(PlayerLeave, ARejoiningPlayerStartsFresh) {
    MatchScript script;
    script.add(kPlayer, Mover().run(5.0, 5.0)).leave(kPlayer, 5.01);
    script.add(kPlayer, Mover({500, 0, 0}, 8.0).run(5.0, 5.0));
    EXPECT_TRUE(test::run_match(script).empty());

    // Without the leave, the window from before it reaches the rejoin 500 m away.
    MatchScript stayed;
    stayed.add(kPlayer, Mover().run(5.0, 5.0));
    stayed.add(kPlayer, Mover({500, 0, 0}, 8.0).run(5.0, 5.0));
    EXPECT_FALSE(test::only(test::run_match(stayed), kPlayer, "movement.teleport").empty());
}

}  // namespace
}  // namespace arbiter::reference
