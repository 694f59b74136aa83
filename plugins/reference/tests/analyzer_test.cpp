// The analyzer through the harness, one cheating or honest profile per test: honest players
// (lag included) raise nothing, cheaters raise the check that fits, with readable evidence.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence_reader.hpp"
#include "match_script.hpp"

namespace arbiter::reference {
namespace {

using test::MatchScript;
using test::Mover;
using test::Signals;

constexpr uint32_t kPlayer = 7;

Signals run_one(const Mover& mover) {
    return test::run_match(MatchScript().add(kPlayer, mover));
}

std::string describe(const Signals& signals) {
    std::string out;
    for (const auto& s : signals)
        out += s.code + " " + std::to_string(s.score) + " " + s.evidence + "\n";
    return out;
}

// ---------------------------------------------------------------- honest players

TEST(HonestPlayers, WalkerAtFiveMetresASecond) {
    const Signals signals = run_one(Mover().run(5.0, 20.0));
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, RunnerJustUnderTheLimit) {
    // Under max_speed 20, and under the 22 m/s (20 x tolerance 1.1) it is checked against.
    const Signals signals = run_one(Mover().run(19.5, 20.0));
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, RunnerWithReceiveJitter) {
    const auto updates = test::jitter(Mover().run(19.5, 20.0).updates(), 20'000);
    const Signals signals = test::run_match(MatchScript().add(kPlayer, updates));
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, RunnerThroughALagSpikeAndItsBurst) {
    // 0.8 s of silence after 4.0 s, then the 16 updates sent meanwhile (true positions)
    // within 5 ms, then the relay's measure of the spike.
    const auto updates = test::lag_spike(Mover().run(19.5, 12.0).updates(), 4.0, 0.8);
    int burst = 0;
    for (const auto& u : updates)
        if (u.received_us >= test::us(4.8) && u.received_us < test::us(4.805)) ++burst;
    ASSERT_EQ(burst, 16) << "the match does not have the shape of a lag spike";

    MatchScript script;
    script.add(kPlayer, updates).latencies(kPlayer, 0.5, 12.0, 60'000);
    script.latency(kPlayer, 4.85, 850'000);
    const Signals signals = test::run_match(script);
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

struct SpikeCase {
    std::string name;
    double speed_mps;
    double silence_s;
    int64_t spacing_us;  // between the updates of the burst
};

void PrintTo(const SpikeCase& c, std::ostream* os) {
    *os << c.name;
}

class RunnerThroughALongLagSpike : public ::testing::TestWithParam<SpikeCase> {};

TEST_P(RunnerThroughALongLagSpike, RaisesNothing) {
    // Longer silences than the 2 s allowance cap: nothing heard after 4.0 s, then every
    // update sent meanwhile (true positions) in one burst, and the relay's measure of the
    // spike. The window starts from the burst's last update, not from its old positions.
    const SpikeCase& c = GetParam();
    const auto updates =
        test::lag_spike(Mover().run(c.speed_mps, 14.0).updates(), 4.0, c.silence_s, c.spacing_us);
    // Every update sent in the silence arrives within 25 ms of its end.
    const int64_t until = test::us(4.0 + c.silence_s);
    long held_back = 0;
    for (const auto& u : updates) {
        if (u.received_us == u.sent_us) continue;
        ++held_back;
        ASSERT_TRUE(u.received_us >= until && u.received_us < until + test::us(0.025));
    }
    ASSERT_EQ(held_back, std::lround(c.silence_s / 0.05))
        << "the match does not have the shape of a lag spike";

    MatchScript script;
    script.add(kPlayer, updates).latencies(kPlayer, 0.5, 14.0, 60'000);
    script.latency(kPlayer, 4.0 + c.silence_s + 0.05,
                   static_cast<uint32_t>(test::us(c.silence_s + 0.1)));
    const Signals signals = test::run_match_to_end(script).all();
    EXPECT_TRUE(test::only(signals, kPlayer, "movement.speed").empty()) << describe(signals);
    EXPECT_TRUE(test::only(signals, kPlayer, "movement.teleport").empty()) << describe(signals);
}

INSTANTIATE_TEST_SUITE_P(
    Spikes, RunnerThroughALongLagSpike,
    ::testing::Values(SpikeCase{"SeventeenThrough2500ms", 17.0, 2.5, 50},
                      SpikeCase{"SeventeenThrough3s", 17.0, 3.0, 50},
                      SpikeCase{"SeventeenThrough4s", 17.0, 4.0, 50},
                      SpikeCase{"NineteenAndAHalfThrough2500ms", 19.5, 2.5, 50},
                      SpikeCase{"NineteenAndAHalfThrough3s", 19.5, 3.0, 50},
                      SpikeCase{"NineteenAndAHalfThrough4s", 19.5, 4.0, 50},
                      // The same bursts spread over 15 to 24 ms.
                      SpikeCase{"SeventeenThrough4sSlowerBurst", 17.0, 4.0, 300},
                      SpikeCase{"NineteenAndAHalfThrough2500msSlowerBurst", 19.5, 2.5, 300},
                      SpikeCase{"NineteenAndAHalfThrough4sSlowerBurst", 19.5, 4.0, 300}),
    [](const auto& row) { return row.param.name; });

// Two honest players that an earlier burst rule (a quarter of the median gap, with no
// bound on how far the start moved) made look fast. docs/detection.md, "Lag is not cheating".

TEST(HonestPlayers, RunnerThroughALagSpikeWhoseBurstDrainsOverMilliseconds) {
    // The held-back updates of a 3 or 4 s spike drain 1.5 ms apart (90 or 120 ms in all).
    // They are most of the track's gaps, so the typical interval becomes 1.5 ms, the burst
    // spacing max(1 ms, 1.5 ms / 4) = 1 ms, and 1.5 ms apart is no longer a burst: windows
    // start at the old positions of its first updates (19.5 m/s through 4 s: 32.2 m/s, 0.90).
    for (const double silence_s : {3.0, 4.0}) {
        const auto updates =
            test::lag_spike(Mover().run(19.5, 14.0).updates(), 4.0, silence_s, 1'500);
        const Signals signals = test::run_match_to_end(MatchScript().add(kPlayer, updates)).all();
        EXPECT_TRUE(signals.empty()) << silence_s << " s of silence\n" << describe(signals);
    }
}

TEST(HonestPlayers, RunnerWhoseUpdateRateRises) {
    // 12 s at 2 updates a second, then 20 Hz with 20 ms of receive jitter, and the longest
    // lag allowance the config accepts (10 s, which keeps 14 s of track). The 500 ms gaps
    // stay the median, so every 50 ms gap counts as a burst and the start moves up to the
    // update before the end: a one-update window (38 ms, 25.7 m/s, score 0.57).
    std::vector<test::Update> updates;
    for (int i = 0; i <= 24; ++i)
        updates.push_back({test::us(0.5 * i), test::us(0.5 * i), {1.0 * i, 0, 0}, false});
    const auto run = test::jitter(Mover({24, 0, 0}, 12.0).run(19.5, 4.0).updates(), 20'000);
    updates.insert(updates.end(), run.begin() + 1, run.end());
    const Signals signals =
        test::run_match_to_end(MatchScript().add(kPlayer, updates),
                               test::movement_config({{"max_lag_allowance_s", 10.0}}))
            .all();
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, RunnerThroughPacketLoss) {
    // 15 % of the updates between 2 and 18 s never arrive, two in a row now and then.
    const auto all = Mover().run(19.5, 20.0).updates();
    const auto updates = test::lose(all, 2.0, 18.0, 15);
    const double lost = static_cast<double>(all.size() - updates.size()) / 320.0;
    ASSERT_TRUE(lost >= 0.10 && lost <= 0.20) << lost;
    const Signals signals = test::run_match(MatchScript().add(kPlayer, updates));
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, RespawnedFarAwayByTheServer) {
    const Signals signals =
        run_one(Mover().run(5.0, 5.0).server_teleport({500, 0, 0}).run(5.0, 5.0));
    EXPECT_TRUE(signals.empty()) << describe(signals);
}

TEST(HonestPlayers, OnlyTheServerFlagExemptsThatRespawn) {
    // The same move without the flag: what makes the test above pass is the exemption.
    const Signals signals = run_one(Mover().run(5.0, 5.0).jump({500, 0, 0}).run(5.0, 5.0));
    EXPECT_FALSE(test::only(signals, kPlayer, "movement.teleport").empty());
}

// ---------------------------------------------------------------- speed

TEST(SpeedHack, SustainedThirtyTwoMetresASecondIsReported) {
    const Signals signals = run_one(Mover().run(5.0, 3.0).run(32.0, 6.0).run(5.0, 2.0));
    const Signals speed = test::only(signals, kPlayer, "movement.speed");
    ASSERT_FALSE(speed.empty());
    EXPECT_GE(test::max_score(speed), 0.7);
    // The highest score reported: it rises in steps of at least 0.05, so it may stop short
    // of the score of the sustained speed itself.
    const auto best = std::max_element(
        speed.begin(), speed.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
    const std::string& evidence = best->evidence;
    const auto measured = test::evidence_number(evidence, "speed_mps");
    const auto limit = test::evidence_number(evidence, "limit_mps");
    ASSERT_TRUE(measured && limit) << evidence;
    EXPECT_NEAR(*limit, 22.0, 1e-9);
    EXPECT_GT(*measured, 28.0);
    EXPECT_LE(*measured, 32.0);
    // 32 m/s is within a window's teleport reach (twice max_speed): a speed hack only.
    EXPECT_TRUE(test::only(signals, kPlayer, "movement.teleport").empty()) << describe(signals);
}

struct SpeedCase {
    std::string name;
    double speed_mps;
    double min_score;  // exclusive, except for 0
    double max_score;
};

void PrintTo(const SpeedCase& c, std::ostream* os) {
    *os << c.name;
}

class SpeedAroundTheLimit : public ::testing::TestWithParam<SpeedCase> {};

TEST_P(SpeedAroundTheLimit, ScoresWithTheExcess) {
    // Steady 20 Hz updates are no lag: the speed is measured against the limit of 22 m/s
    // as it is. With the end of the match, the highest score is the true one.
    const SpeedCase& c = GetParam();
    const Signals speed =
        test::only(test::run_match_to_end(
                       MatchScript().add(kPlayer, Mover().run(5.0, 2.0).run(c.speed_mps, 8.0)))
                       .all(),
                   kPlayer, "movement.speed");
    const double score = test::max_score(speed);
    if (c.max_score == 0.0) {
        EXPECT_TRUE(speed.empty()) << describe(speed);
    } else {
        EXPECT_GT(score, c.min_score);
        EXPECT_LT(score, c.max_score);
        // Positions travel as floats: a few micrometres off.
        EXPECT_NEAR(score, excess_score(c.speed_mps, 22.0), 1e-3);
    }
}

INSTANTIATE_TEST_SUITE_P(Speeds, SpeedAroundTheLimit,
                         ::testing::Values(SpeedCase{"JustUnder", 21.5, 0.0, 0.0},
                                           SpeedCase{"AHairUnder", 21.9, 0.0, 0.0},
                                           SpeedCase{"AHairOver", 22.1, 0.0, 0.05},
                                           SpeedCase{"JustOver", 22.5, 0.05, 0.15},
                                           SpeedCase{"ALittleOver", 26.0, 0.5, 0.7},
                                           SpeedCase{"FarOver", 40.0, 0.9, 1.0 + 1e-12}),
                         [](const auto& row) { return row.param.name; });

// ---------------------------------------------------------------- steady 20 Hz

struct SteadyCase {
    std::string name;
    Mover mover;
    double speed_mps;       // of the strongest window over the limit; 0 if none is
    int64_t first_from_us;  // where the first window over the limit starts
};

void PrintTo(const SteadyCase& c, std::ostream* os) {
    *os << c.name;
}

class SteadyTwentyHertz : public ::testing::TestWithParam<SteadyCase> {};

TEST_P(SteadyTwentyHertz, AllowsNoLagInAnyWindow) {
    // The 50 ms between updates is not lag: the first window of a track and every later
    // one are measured alike, with no allowance, so a run just over the limit is reported
    // wherever it starts.
    const SteadyCase& c = GetParam();
    const Signals speed =
        test::only(test::run_match_to_end(MatchScript().add(kPlayer, c.mover)).all(), kPlayer,
                   "movement.speed");
    if (c.speed_mps == 0.0) {
        EXPECT_TRUE(speed.empty()) << describe(speed);
        return;
    }
    ASSERT_FALSE(speed.empty());
    const std::string& first = speed.front().evidence;
    EXPECT_NE(first.find("\"from\":{\"t_us\":" + std::to_string(c.first_from_us) + ","),
              std::string::npos)
        << first;
    const auto best = std::max_element(
        speed.begin(), speed.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
    EXPECT_NEAR(test::evidence_number(best->evidence, "speed_mps").value_or(0), c.speed_mps, 1e-3)
        << best->evidence;
    for (const auto& s : speed)
        EXPECT_EQ(test::evidence_number(s.evidence, "lag_allowance_s"), 0.0) << s.evidence;
}

INSTANTIATE_TEST_SUITE_P(
    Runs, SteadyTwentyHertz,
    ::testing::Values(
        // In the first window, which has no sample before it...
        SteadyCase{"TwentyTwoAndAHalfFromTheStart", Mover().run(22.5, 10.0), 22.5, 0},
        // ...and in later ones: the first over 22 m/s after a walk is the first entirely at
        // 22.5 m/s (3 to 4 s), after a run at 19.5 m/s the one from 2.85 s (22.05 m/s).
        SteadyCase{"TwentyTwoAndAHalfAfterAWalk", Mover().run(5.0, 3.0).run(22.5, 8.0), 22.5,
                   3'000'000},
        SteadyCase{"TwentyTwoAndAHalfAfterARun", Mover().run(19.5, 3.0).run(22.5, 8.0), 22.5,
                   2'850'000},
        SteadyCase{"TwentyOneAndAHalfFromTheStart", Mover().run(21.5, 10.0), 0.0, 0},
        SteadyCase{"TwentyOneAndAHalfAfterAWalk", Mover().run(5.0, 3.0).run(21.5, 8.0), 0.0, 0}),
    [](const auto& row) { return row.param.name; });

// ---------------------------------------------------------------- round trips

struct RttCase {
    std::string name;
    double speed_mps;
    uint32_t rtt_us;
};

void PrintTo(const RttCase& c, std::ostream* os) {
    *os << c.name;
}

class InflatedRoundTrips : public ::testing::TestWithParam<RttCase> {};

TEST_P(InflatedRoundTrips, DoNotHideASpeedHack) {
    // A cheater controls his replies to pings: a round trip of 1 or 2 s, reported all match
    // long, used to widen every window by as much (32 m/s over 3 s is 10.7 m/s).
    const RttCase& c = GetParam();
    MatchScript script;
    script.add(kPlayer, Mover().run(5.0, 2.0).run(c.speed_mps, 8.0));
    script.latencies(kPlayer, 0.0, 10.0, c.rtt_us);
    const Signals speed =
        test::only(test::run_match_to_end(script).all(), kPlayer, "movement.speed");
    ASSERT_FALSE(speed.empty());
    const double expected = excess_score(c.speed_mps, 22.0);  // 0.897 at 32 m/s, 0.9998 at 60
    EXPECT_GE(test::max_score(speed), 0.7);
    EXPECT_NEAR(test::max_score(speed), expected, 1e-3);
    for (const auto& s : speed)
        EXPECT_EQ(test::evidence_number(s.evidence, "lag_allowance_s"), 0.0) << s.evidence;
}

INSTANTIATE_TEST_SUITE_P(Hackers, InflatedRoundTrips,
                         ::testing::Values(RttCase{"ThirtyTwoWithTwoSeconds", 32.0, 2'000'000},
                                           RttCase{"ThirtyTwoWithOneSecond", 32.0, 1'000'000},
                                           RttCase{"SixtyWithTwoSeconds", 60.0, 2'000'000},
                                           RttCase{"SixtyWithOneSecond", 60.0, 1'000'000}),
                         [](const auto& row) { return row.param.name; });

TEST(SpeedHack, SustainedCheatDoesNotFlood) {
    // 20 s at 32 m/s is 400 windows over the limit; the plugin reports only rises.
    const Signals speed =
        test::only(run_one(Mover().run(5.0, 2.0).run(32.0, 20.0)), kPlayer, "movement.speed");
    ASSERT_FALSE(speed.empty());
    EXPECT_LE(speed.size(), 20u);
    for (size_t i = 1; i < speed.size(); ++i)
        EXPECT_GE(speed[i].score * speed[i].confidence,
                  speed[i - 1].score * speed[i - 1].confidence + 0.05 - 1e-12)
            << "signal " << i << " repeats the one before it";
    // Once the window is all cheat, the score stops rising: silence.
    EXPECT_LE(speed.back().relay_time_us, test::us(2.0 + 1.5));
}

// ---------------------------------------------------------------- teleport

TEST(Teleport, TwoHundredFiftyMetresInOneUpdate) {
    const Signals teleport =
        test::only(run_one(Mover().run(5.0, 3.0).jump({250, 0, 0}).run(5.0, 3.0)), kPlayer,
                   "movement.teleport");
    ASSERT_FALSE(teleport.empty());
    const auto& first = teleport.front();
    EXPECT_DOUBLE_EQ(first.score, 1.0);
    EXPECT_EQ(test::evidence_string(first.evidence, "kind"), "single_update");
    EXPECT_NEAR(test::evidence_number(first.evidence, "distance_m").value_or(0), 250.0, 1e-3);
    EXPECT_NEAR(test::evidence_number(first.evidence, "limit_m").value_or(0), 100.0, 1e-9);
    EXPECT_NE(first.evidence.find("\"to\":{\"t_us\":3050000,"), std::string::npos)
        << first.evidence;
}

TEST(Teleport, SixtyMetresInOneUpdateIsBeyondAWindowsReach) {
    // Under the 100 m an update may carry, over the 2 x 20 m/s x (1 s + lag) of a window.
    const Signals teleport =
        test::only(run_one(Mover().run(5.0, 3.0).jump({0, 60, 0}).run(5.0, 3.0)), kPlayer,
                   "movement.teleport");
    ASSERT_FALSE(teleport.empty());
    for (const auto& s : teleport) {
        EXPECT_EQ(test::evidence_string(s.evidence, "kind"), "window") << s.evidence;
        EXPECT_DOUBLE_EQ(s.score, 1.0);
    }
    const auto distance = test::evidence_number(teleport.front().evidence, "distance_m");
    const auto limit = test::evidence_number(teleport.front().evidence, "limit_m");
    ASSERT_TRUE(distance && limit) << teleport.front().evidence;
    EXPECT_GT(*distance, *limit);
    EXPECT_GE(*distance, 60.0);
}

// ---------------------------------------------------------------- evidence and players

TEST(Evidence, IsAJsonObjectWithTheMeasureAndTheLimit) {
    MatchScript script;
    script.add(1, Mover().run(5.0, 2.0).run(32.0, 4.0));
    script.add(2, Mover().run(5.0, 2.0).jump({250, 0, 0}).run(5.0, 2.0));
    script.add(3, Mover().run(5.0, 2.0).jump({0, 60, 0}).run(5.0, 2.0));
    const Signals signals = test::run_match(script);
    ASSERT_FALSE(test::only(signals, 1, "movement.speed").empty());
    ASSERT_FALSE(test::only(signals, 2, "movement.teleport").empty());
    ASSERT_FALSE(test::only(signals, 3, "movement.teleport").empty());
    for (const auto& s : signals) {
        SCOPED_TRACE(s.code + " " + s.evidence);
        EXPECT_TRUE(test::is_json_object(s.evidence));
        // The measure and the limit each check reports (a jump of 250 m in one update is also
        // an impossible change of windowed speed).
        const bool speed = s.code == "movement.speed";
        const bool accel = s.code == "movement.acceleration";
        const bool sustained = s.code == "movement.sustained_speed";
        const auto value = test::evidence_number(
            s.evidence, speed ? "speed_mps"
                              : (accel ? "acceleration_mps2"
                                       : (sustained ? "lowest_speed_mps" : "distance_m")));
        const auto limit = test::evidence_number(
            s.evidence,
            speed ? "limit_mps" : (accel ? "limit_mps2" : (sustained ? "limit_mps" : "limit_m")));
        ASSERT_TRUE(value && limit);
        EXPECT_GT(*value, *limit);
        // The positions a reviewer can check the measure against.
        EXPECT_NE(s.evidence.find("\"from\":{\"t_us\":"), std::string::npos);
        EXPECT_NE(s.evidence.find("\"to\":{\"t_us\":"), std::string::npos);
    }
}

TEST(Evidence, GrammarCheckRefusesWhatIsNotAnObject) {
    // The checker above must be able to say no.
    for (const char* bad : {"", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":nan}", "[1]", "{} {}",
                            "{\"a\":01}", "{\"a\":\"\x01\"}", "{a:1}"})
        EXPECT_FALSE(test::is_json_object(bad)) << bad;
    EXPECT_TRUE(test::is_json_object("{\"a\":-1.5e3,\"b\":[true,null],\"c\":{\"d\":\"\\\"\"}}"));
}

TEST(Players, AreCheckedApart) {
    // An honest walker next to a speed hacker: only the hacker is reported.
    MatchScript script;
    script.add(1, Mover().run(5.0, 10.0));
    script.add(2, Mover({0, 1, 0}).run(32.0, 10.0));
    const Signals signals = test::run_match(script);
    EXPECT_FALSE(test::only(signals, 2, "movement.speed").empty());
    for (const auto& s : signals)
        EXPECT_EQ(s.player, 2u) << describe({s});
}

}  // namespace
}  // namespace arbiter::reference
