// The analyzer through the harness, one cheating or honest profile per test: honest players
// (lag included) raise nothing, cheaters raise the check that fits, with readable evidence.
#include <algorithm>
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
    const SpeedCase& c = GetParam();
    const Signals speed =
        test::only(run_one(Mover().run(5.0, 2.0).run(c.speed_mps, 8.0)), kPlayer, "movement.speed");
    const double score = test::max_score(speed);
    if (c.max_score == 0.0) {
        EXPECT_TRUE(speed.empty()) << describe(speed);
    } else {
        EXPECT_GT(score, c.min_score);
        EXPECT_LT(score, c.max_score);
    }
}

INSTANTIATE_TEST_SUITE_P(Speeds, SpeedAroundTheLimit,
                         ::testing::Values(SpeedCase{"JustUnder", 21.5, 0.0, 0.0},
                                           SpeedCase{"ALittleOver", 26.0, 0.0, 0.7},
                                           SpeedCase{"FarOver", 40.0, 0.9, 1.0 + 1e-12}),
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
        const bool speed = s.code == "movement.speed";
        const auto value = test::evidence_number(s.evidence, speed ? "speed_mps" : "distance_m");
        const auto limit = test::evidence_number(s.evidence, speed ? "limit_mps" : "limit_m");
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
