// The lifetime of what the analyzer remembers: a match's state goes with its end, a
// player's with their leaving, and nothing else goes with them. What a check held back
// (a rise smaller than the reporting step) is reported when the player leaves or the match
// ends, so that the host gets each check's true maximum.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence_reader.hpp"
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

// ---------------------------------------------------------------- held signals

// A sustained 32 m/s speed hack: its windowed score rises in steps of at least 0.05 while
// the window fills, and the last rise, smaller than a step, is held.
Mover hacker() {
    return Mover().run(5.0, 3.0).run(32.0, 6.0).run(5.0, 2.0);
}

// The highest weighted speed score of any window of these updates, computed apart from the
// analyzer: every window as movement.hpp measures it, positions as the relay carries them
// (floats), against the default limits.
double true_max_speed_score(const std::vector<test::Update>& updates) {
    const MovementLimits limits;
    Track track;
    double best = 0.0;
    for (const auto& u : updates) {
        track.samples.push_back(
            {u.received_us,
             {static_cast<float>(u.position.x), static_cast<float>(u.position.y),
              static_cast<float>(u.position.z)}});
        const auto m = measure_window(track, limits);
        if (!m) continue;
        const double confidence = std::min(
            1.0, static_cast<double>(m->samples) / static_cast<double>(limits.min_samples));
        best = std::max(best,
                        excess_score(m->speed, limits.max_speed * limits.tolerance) * confidence);
    }
    return best;
}

// The score a speed signal's evidence gives.
double score_from_evidence(const std::string& evidence) {
    return excess_score(test::evidence_number(evidence, "speed_mps").value_or(0),
                        test::evidence_number(evidence, "limit_mps").value_or(0));
}

TEST(HeldSignals, MatchEndReportsEachChecksTrueMaximum) {
    const test::Ended ended =
        test::run_match_to_end(MatchScript("relay", 9).add(kPlayer, hacker()));
    const Signals during = test::only(ended.during, kPlayer, "movement.speed");
    const Signals at_end = test::only(ended.at_end, kPlayer, "movement.speed");
    ASSERT_FALSE(during.empty());
    ASSERT_EQ(at_end.size(), 1u) << "the last rise was not held, or not flushed";

    const auto& flushed = at_end.front();
    EXPECT_DOUBLE_EQ(flushed.confidence, 1.0);
    const double truth = true_max_speed_score(hacker().updates());
    EXPECT_GT(truth, 0.89);  // 32 m/s over 22 m/s: 1 - exp(-5 x 10/22) = 0.897
    EXPECT_NEAR(flushed.score * flushed.confidence, truth, 1e-9);
    EXPECT_NEAR(flushed.score, score_from_evidence(flushed.evidence), 1e-9) << flushed.evidence;
    EXPECT_NEAR(test::evidence_number(flushed.evidence, "speed_mps").value_or(0), 32.0, 1e-3);
    // Above everything reported during the match, by less than a step.
    for (const auto& s : during) {
        EXPECT_LT(s.score * s.confidence, flushed.score * flushed.confidence);
        EXPECT_NEAR(s.score, score_from_evidence(s.evidence), 1e-9) << s.evidence;
    }
    EXPECT_LT(flushed.score - test::max_score(during), 0.05);
}

TEST(HeldSignals, PlayerLeaveReportsThem) {
    Harness harness;
    MatchScript script("relay", 9);
    script.add(kPlayer, hacker()).leave(kPlayer, 11.1);
    const Signals signals = test::feed_all(harness, script.batches());
    const Signals speed = test::only(signals, kPlayer, "movement.speed");
    ASSERT_FALSE(speed.empty());
    // The last one comes with the leave (the clock of its batch), and is the true maximum.
    const auto& last = speed.back();
    EXPECT_EQ(last.relay_time_us, test::us(11.1));
    EXPECT_NEAR(last.score * last.confidence, true_max_speed_score(hacker().updates()), 1e-9);
    EXPECT_EQ(last.score, test::max_score(speed));
    // Nothing of the player is left for the end of the match.
    EXPECT_TRUE(harness.end_match("relay", 9).empty());
}

TEST(HeldSignals, WithoutALeaveOrAnEndTheyWait) {
    // The counterpart of the two tests above: the same match, neither left nor ended.
    Harness harness;
    const Signals speed = test::only(
        test::feed_all(harness, MatchScript("relay", 9).add(kPlayer, hacker()).batches()), kPlayer,
        "movement.speed");
    ASSERT_FALSE(speed.empty());
    EXPECT_LT(test::max_score(speed) + 0.01, true_max_speed_score(hacker().updates()));
}

TEST(HeldSignals, OnlyRisesAreHeld) {
    // 40 m/s from the start, then 32 m/s: the first window is the strongest, every later
    // one weaker, so nothing is held and the end of the match reports nothing more.
    const test::Ended ended = test::run_match_to_end(
        MatchScript("relay", 9).add(kPlayer, Mover().run(40.0, 1.0).run(32.0, 4.0)));
    const Signals speed = test::only(ended.during, kPlayer, "movement.speed");
    ASSERT_EQ(speed.size(), 1u);
    EXPECT_NEAR(test::evidence_number(speed.front().evidence, "speed_mps").value_or(0), 40.0, 1e-3);
    EXPECT_TRUE(ended.at_end.empty()) << ended.at_end.front().evidence;
}

TEST(HeldSignals, ARiseOfExactlyOneStepIsReportedAtOnce) {
    // A 60 m jump is a window teleport (1.0 x confidence 0.9), a 250 m one a single-update
    // teleport (1.0 x 0.95): a rise of exactly 0.05, which 0.9 + 0.05 > 0.95 in floating
    // point must not turn into a held one.
    const Mover jumper =
        Mover().run(5.0, 3.0).jump({0, 60, 0}).run(5.0, 3.0).jump({250, 0, 0}).run(5.0, 2.0);
    const test::Ended ended = test::run_match_to_end(MatchScript("relay", 9).add(kPlayer, jumper));
    const Signals teleport = test::only(ended.during, kPlayer, "movement.teleport");
    ASSERT_EQ(teleport.size(), 2u);
    EXPECT_EQ(test::evidence_string(teleport[0].evidence, "kind"), "window");
    EXPECT_DOUBLE_EQ(teleport[0].score * teleport[0].confidence, 0.9);
    EXPECT_EQ(test::evidence_string(teleport[1].evidence, "kind"), "single_update");
    EXPECT_DOUBLE_EQ(teleport[1].score * teleport[1].confidence, 0.95);
    EXPECT_LT(teleport[1].relay_time_us, test::us(6.5));  // with the jump, not at the end
    // The window teleports after it are weaker than 0.95: not held.
    EXPECT_TRUE(test::only(ended.at_end, kPlayer, "movement.teleport").empty());
}

TEST(HeldSignals, AreReportedInPlayerOrder) {
    MatchScript script("relay", 9);
    const std::vector<uint32_t> ids = {9, 2, 14, 5, 11};
    for (uint32_t id : ids)
        script.add(id, Mover({0, 10.0 * id, 0}).run(5.0, 3.0).run(32.0, 6.0));
    const Signals at_end = test::run_match_to_end(script).at_end;
    // Each holds a rise of its speed and of its sustained speed, in the order of the codes.
    std::vector<uint32_t> players;
    for (const auto& s : at_end)
        players.push_back(s.player);
    EXPECT_EQ(players, (std::vector<uint32_t>{2, 2, 5, 5, 9, 9, 11, 11, 14, 14}));
    for (size_t i = 0; i + 1 < at_end.size(); i += 2) {
        EXPECT_EQ(at_end[i].code, "movement.speed");
        EXPECT_EQ(at_end[i + 1].code, "movement.sustained_speed");
    }
}

}  // namespace
}  // namespace arbiter::reference
