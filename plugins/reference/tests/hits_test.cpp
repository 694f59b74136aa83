// Hits: each check at and around its limits, then honest and cheating players through the
// analyzer, lag included (a late claim within the window, a burst of claims after a
// silence), with the evidence a reviewer reads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "event_script.hpp"
#include "evidence_reader.hpp"
#include "hits.hpp"

namespace arbiter::reference {
namespace {

using test::EventScript;
using test::Signals;

// ---------------------------------------------------------------- pure checks

struct LimitCase {
    std::string name;
    double value;
    bool flagged;
};
void PrintTo(const LimitCase& c, std::ostream* os) {
    *os << c.name;
}

class RangeLimit : public ::testing::TestWithParam<LimitCase> {};
TEST_P(RangeLimit, FlagsOnlyPastTheWeaponsRange) {
    const WeaponLimits rifle{.range_m = 80.0};
    const auto result = check_range(GetParam().value, rifle, HitLimits{});
    EXPECT_EQ(result.has_value(), GetParam().flagged);
    if (result) {
        EXPECT_NEAR(result->score, excess_score(GetParam().value, 80.0), 1e-9);
    }
}
INSTANTIATE_TEST_SUITE_P(Hits, RangeLimit,
                         ::testing::Values(LimitCase{"Close", 10.0, false},
                                           LimitCase{"JustUnder", 79.9, false},
                                           // A float at the limit is not past it.
                                           LimitCase{"AtAsFloat", double(80.0f), false},
                                           LimitCase{"JustOver", 80.5, true},
                                           LimitCase{"TwiceTheRange", 160.0, true}),
                         [](const auto& row) { return row.param.name; });

class DamageLimit : public ::testing::TestWithParam<LimitCase> {};
TEST_P(DamageLimit, FlagsOnlyPastTheWeaponsMaximum) {
    const WeaponLimits pistol{.range_m = 40, .fire_interval_s = 0.25, .max_damage = 33.4};
    EXPECT_EQ(check_damage(GetParam().value, pistol).has_value(), GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(Hits, DamageLimit,
                         ::testing::Values(LimitCase{"Under", 20.0, false},
                                           LimitCase{"AtAsFloat", double(33.4f), false},
                                           LimitCase{"JustOver", 33.5, true},
                                           LimitCase{"Triple", 100.0, true}),
                         [](const auto& row) { return row.param.name; });

TEST(DamageLimit, UncheckedWithoutAMaximum) {
    EXPECT_FALSE(check_damage(1e6, WeaponLimits{}).has_value());
}

struct TimingCase {
    std::string name;
    int64_t offset_ticks;  // claimed - relay
    double allowance_s;
    bool flagged;
};
void PrintTo(const TimingCase& c, std::ostream* os) {
    *os << c.name;
}
class TimingWindow : public ::testing::TestWithParam<TimingCase> {};
TEST_P(TimingWindow, AllowsTheWindowAndLateClaimsTheLagExcuses) {
    const TimingCase& c = GetParam();
    const uint64_t relay = 1000;
    const auto claimed = static_cast<uint64_t>(static_cast<int64_t>(relay) + c.offset_ticks);
    const auto result = check_timing(relay, claimed, 0.05, c.allowance_s, HitLimits{});
    EXPECT_EQ(result.has_value(), c.flagged);
}
INSTANTIATE_TEST_SUITE_P(
    Hits, TimingWindow,
    ::testing::Values(TimingCase{"OnTheTick", 0, 0.0, false},
                      TimingCase{"LateAtTheWindow", -10, 0.0, false},
                      TimingCase{"LateOneTickPast", -11, 0.0, true},
                      TimingCase{"AheadAtTheWindow", 10, 0.0, false},
                      TimingCase{"AheadOneTickPast", 11, 0.0, true},
                      // A silence before the claim excuses lateness, never earliness.
                      TimingCase{"LateExcusedByASilence", -25, 0.8, false},
                      TimingCase{"LatePastTheSilence", -27, 0.8, true},
                      TimingCase{"AheadNotExcusedByASilence", 11, 0.8, true}),
    [](const auto& row) { return row.param.name; });

std::deque<int64_t> shots_every(double interval_s, int count, int64_t from_us = 0) {
    std::deque<int64_t> out;
    for (int i = 0; i < count; ++i)
        out.push_back(from_us + std::llround(i * interval_s * 1e6));
    return out;
}

struct RateCase {
    std::string name;
    std::deque<int64_t> shots;
    double allowance_s;
    bool flagged;
};
void PrintTo(const RateCase& c, std::ostream* os) {
    *os << c.name;
}
class FireRate : public ::testing::TestWithParam<RateCase> {};
TEST_P(FireRate, CountsShotsAgainstTheWeaponOverTheWindow) {
    const WeaponLimits rifle{.range_m = 80, .fire_interval_s = 0.1, .max_damage = 12};
    const auto result =
        check_fire_rate(GetParam().shots, rifle, GetParam().allowance_s, HitLimits{});
    EXPECT_EQ(result.has_value(), GetParam().flagged);
}
std::deque<int64_t> burst_after_silence() {
    // 10 shots a second, then 0.8 s of silence whose 8 shots arrive within 4 ms, then 10 a
    // second again: the window ending 2 s after the burst holds it and 20 more shots.
    auto shots = shots_every(0.1, 10);
    for (int i = 0; i < 8; ++i)
        shots.push_back(1'700'000 + i * 500);
    for (int i = 1; i <= 20; ++i)
        shots.push_back(1'700'000 + i * 100'000);
    return shots;
}
INSTANTIATE_TEST_SUITE_P(
    Hits, FireRate,
    ::testing::Values(RateCase{"AtTheRate", shots_every(0.1, 40), 0.0, false},
                      RateCase{"JustUnderTenPercentFaster", shots_every(0.091, 40), 0.0, false},
                      RateCase{"TwentyPercentFaster", shots_every(0.0833, 40), 0.0, true},
                      RateCase{"ThreeTimesFaster", shots_every(0.033, 60), 0.0, true},
                      RateCase{"BurstExcusedByItsSilence", burst_after_silence(), 0.8, false},
                      RateCase{"BurstWithoutSilence", burst_after_silence(), 0.0, true}),
    [](const auto& row) { return row.param.name; });

TEST(FireRate, UncheckedWithoutAnInterval) {
    EXPECT_FALSE(check_fire_rate(shots_every(0.001, 100), WeaponLimits{}, 0.0, HitLimits{}));
}

TEST(CountConfidence, GrowsToOneAtTheConfidentCount) {
    EXPECT_NEAR(count_confidence(1, 3), 1.0 / 3.0, 1e-9);
    EXPECT_NEAR(count_confidence(3, 3), 1.0, 1e-9);
    EXPECT_NEAR(count_confidence(9, 3), 1.0, 1e-9);
}

// ---------------------------------------------------------------- through the analyzer

constexpr uint32_t kShooter = 3;
constexpr uint32_t kTarget = 4;

ConfigValue hits_config() {
    return test::area_config("hits", {{"weapons", ConfigValue::table(test::weapons_table())}});
}

build::Hit rifle_hit(double range_m, std::optional<uint64_t> claimed = std::nullopt) {
    return build::Hit{.target_player = kTarget,
                      .weapon = "rifle",
                      .attacker_position = {0, 0, 0},
                      .target_position = {static_cast<float>(range_m), 0, 0},
                      .range_m = static_cast<float>(range_m),
                      .damage = 10.0f,
                      .claimed_tick = claimed};
}

// Positions at 20 Hz so that the relay hears the shooter as a connected client does.
void walk(EventScript& script, uint32_t player, double from_s, double to_s) {
    for (double t = from_s; t < to_s; t += 0.05)
        script.at(t, player, build::Position{.position = {0, 0, 0}});
}

TEST(HitsAnalyzer, HonestRiflemanRaisesNothing) {
    // Eight shots a second at 20 to 80 m, claims a tick or two late, for 20 s.
    EventScript script;
    walk(script, kShooter, 0.0, 20.0);
    for (int i = 0; i < 160; ++i) {
        const double t = 0.5 + i * 0.125;
        const auto tick = static_cast<uint64_t>(t / 0.05);
        script.at(t, kShooter, rifle_hit(20.0 + (i % 61), tick - 2));
    }
    const Signals signals = test::run_events(script, hits_config());
    EXPECT_TRUE(signals.empty()) << test::codes(signals);
}

TEST(HitsAnalyzer, LateClaimWithinTheWindowAndABurstAfterASilenceRaiseNothing) {
    // Firing at the rifle's full rate; 0.8 s of silence from 5 s, then everything sent
    // meanwhile (positions and eight shots, each claiming the tick it was fired on) arrives
    // within a few milliseconds; later one claim arrives 0.45 s late.
    EventScript script;
    const int64_t silence_from = test::us(5.0), silence_to = test::us(5.8);
    int64_t burst = silence_to;
    auto received = [&](double sent_s) {
        const int64_t sent = test::us(sent_s);
        if (sent > silence_from && sent <= silence_to)
            return static_cast<double>(burst += 300) / 1e6;
        return sent_s;
    };
    for (double t = 0.0; t < 12.0; t += 0.05)
        script.at(received(t), kShooter, build::Position{.position = {0, 0, 0}});
    for (int i = 0; i < 100; ++i) {
        const double sent = 1.0 + i * 0.1;
        const auto claimed = static_cast<uint64_t>(std::llround(sent / 0.05));
        script.at(received(sent) + 0.0001, kShooter, rifle_hit(50.0, claimed));
    }
    script.at(11.5, kShooter, rifle_hit(50.0, static_cast<uint64_t>(std::llround(11.05 / 0.05))));
    const Signals signals = test::run_events(script, hits_config());
    EXPECT_TRUE(signals.empty()) << test::codes(signals);
}

TEST(HitsAnalyzer, WhatTheServerSendsDuringASilenceDoesNotShortenIt) {
    // A 1 s lag spike from 5 s; meanwhile the relay sends the player stimuli and the
    // server changes its stats (neither is the player being heard). The claims held back
    // arrive at its end, the last fired 1 s before it: the whole silence excuses it.
    EventScript script;
    walk(script, kShooter, 0.0, 5.0);
    walk(script, kShooter, 6.0, 8.0);
    for (int i = 0; i < 5; ++i) {
        script.at(5.1 + i * 0.2, kShooter,
                  build::Stimulus{.stimulus_id = uint64_t(i + 1), .kind = "enemy"});
        script.at(5.15 + i * 0.2, kShooter,
                  build::Stat{.stat = "health", .delta = -1.0, .value_after = 100.0 - i});
    }
    for (int i = 0; i < 9; ++i)
        script.at(6.0 + i * 0.0003, kShooter,
                  rifle_hit(50.0, static_cast<uint64_t>(std::llround((5.0 + i * 0.1) / 0.05))));
    const Signals signals = test::run_events(script, hits_config());
    EXPECT_TRUE(signals.empty()) << test::codes(signals);
}

// A steady link with a long round trip: the relay hears the player all along (no silence),
// and a hit fired 0.8 s before the relay received it is excused by the 1.28 s round trip
// the relay measured; the same late hit with an ordinary round trip is not.
TEST(HitsAnalyzer, ALateHitIsExcusedByTheRoundTripTheRelayMeasured) {
    auto on_a_long_link = [](uint32_t rtt_us) {
        EventScript script;
        walk(script, kShooter, 0.0, 8.0);
        script.at(5.6145, kShooter, build::Latency{.rtt_us = rtt_us});
        script.at(5.6156, kShooter,
                  rifle_hit(40.0, static_cast<uint64_t>(std::llround(4.8 / 0.05))));
        return test::only(test::run_events(script, hits_config()), kShooter, "hits.timing");
    };
    EXPECT_TRUE(on_a_long_link(1'282'000).empty());
    const Signals unexcused = on_a_long_link(90'000);
    ASSERT_EQ(unexcused.size(), 1u);
    EXPECT_EQ(test::evidence_number(unexcused[0].evidence, "measured_rtt_s"), 0.09);
    EXPECT_EQ(test::evidence_number(unexcused[0].evidence, "silence_s"), 0.0);
}

// Issue 14, seeds 3 and 11: a player joins in the middle of a lag spike. The join is the
// client's handshake reaching the relay, so the silence the spike leaves starts there; the
// burst at its end brings a hit fired 0.8 s before it, excused by that silence even with an
// ordinary round trip. Joined just before the hit, there is no silence and no excuse.
TEST(HitsAnalyzer, AJoinStartsTheSilenceALateHitIsExcusedBy) {
    auto joined_at = [](double join_s) {
        EventScript script;
        script.at(join_s, kShooter, test::player_join("shooter"));
        script.at(5.6145, kShooter, build::Latency{.rtt_us = 90'000});
        script.at(5.6156, kShooter,
                  rifle_hit(40.0, static_cast<uint64_t>(std::llround(4.8 / 0.05))));
        walk(script, kShooter, 5.62, 8.0);
        return test::only(test::run_events(script, hits_config()), kShooter, "hits.timing");
    };
    EXPECT_TRUE(joined_at(4.7).empty());
    const Signals unexcused = joined_at(5.6);
    ASSERT_EQ(unexcused.size(), 1u);
    EXPECT_EQ(test::evidence_number(unexcused[0].evidence, "silence_s"), 0.0);
}

// A respawn's teleport is the server's, not the client's: it does not end the silence a
// lag spike leaves. Dead at 1 s and respawned at 4 s while the spike held everything the
// client sent from 1 s to 7.5 s, the hit fired at 1 s arrives 6.5 s late in the burst,
// excused by the whole silence.
TEST(HitsAnalyzer, ARespawnDuringASpikeDoesNotShortenItsSilence) {
    EventScript script;
    walk(script, kShooter, 0.0, 1.0);
    script.at(4.0, kShooter,
              build::Position{.position = fb::Vec3(0, 0, 0), .on_ground = true,
                              .server_teleport = true});
    script.at(7.5, kShooter, rifle_hit(40.0, static_cast<uint64_t>(std::llround(1.0 / 0.05))));
    walk(script, kShooter, 7.55, 9.0);
    EXPECT_TRUE(
        test::only(test::run_events(script, hits_config()), kShooter, "hits.timing").empty());
}

struct CheatCase {
    std::string name;
    std::function<void(EventScript&)> cheat;
    std::string code;
    std::string evidence_key;
};
void PrintTo(const CheatCase& c, std::ostream* os) {
    *os << c.name;
}
class HitCheats : public ::testing::TestWithParam<CheatCase> {};
TEST_P(HitCheats, RaiseTheirCheckWithEvidence) {
    EventScript script;
    walk(script, kShooter, 0.0, 10.0);
    GetParam().cheat(script);
    const Signals signals =
        test::only(test::run_events(script, hits_config()), kShooter, GetParam().code);
    ASSERT_FALSE(signals.empty()) << GetParam().code;
    const auto& top =
        *std::max_element(signals.begin(), signals.end(), [](const auto& a, const auto& b) {
            return a.score * a.confidence < b.score * b.confidence;
        });
    EXPECT_GE(top.score * top.confidence, 0.7) << top.evidence;
    EXPECT_NE(top.evidence.find("\"" + GetParam().evidence_key + "\""), std::string::npos)
        << top.evidence;
}
INSTANTIATE_TEST_SUITE_P(
    Hits, HitCheats,
    ::testing::Values(
        CheatCase{"BeyondRange", [](EventScript& s) { s.at(2.0, kShooter, rifle_hit(200.0)); },
                  "hits.range", "limit_m"},
        CheatCase{"ThroughWalls",
                  [](EventScript& s) {
                      for (int i = 0; i < 3; ++i) {
                          auto hit = rifle_hit(30.0);
                          hit.line_of_sight = false;
                          s.at(2.0 + i, kShooter, hit);
                      }
                  },
                  "hits.line_of_sight", "hits_without_line_of_sight"},
        CheatCase{"DeadTargets",
                  [](EventScript& s) {
                      for (int i = 0; i < 3; ++i) {
                          auto hit = rifle_hit(30.0);
                          hit.target_alive = false;
                          s.at(2.0 + i, kShooter, hit);
                      }
                  },
                  "hits.target_state", "target_alive"},
        CheatCase{"TooMuchDamage",
                  [](EventScript& s) {
                      auto hit = rifle_hit(30.0);
                      hit.damage = 40.0f;
                      s.at(2.0, kShooter, hit);
                  },
                  "hits.damage", "limit"},
        CheatCase{"ClaimFromTheFuture",
                  [](EventScript& s) { s.at(2.0, kShooter, rifle_hit(30.0, 40 + 30)); },
                  "hits.timing", "claimed_tick"},
        CheatCase{"RapidFire",
                  [](EventScript& s) {
                      for (int i = 0; i < 100; ++i)
                          s.at(2.0 + i * 0.03, kShooter, rifle_hit(30.0));
                  },
                  "hits.fire_rate", "allowed"},
        CheatCase{"RapidKills",
                  [](EventScript& s) {
                      for (int i = 0; i < 60; ++i)
                          s.at(2.0 + i * 0.03, kShooter,
                               build::Kill{
                                   .target_player = kTarget, .weapon = "rifle", .range_m = 20.0f});
                  },
                  "hits.fire_rate", "kills"}),
    [](const auto& row) { return row.param.name; });

TEST(HitsAnalyzer, OneThroughWallHitIsOnlyWorthWatching) {
    EventScript script;
    auto hit = rifle_hit(30.0);
    hit.line_of_sight = false;
    script.at(1.0, kShooter, hit);
    const Signals signals =
        test::only(test::run_events(script, hits_config()), kShooter, "hits.line_of_sight");
    ASSERT_EQ(signals.size(), 1u);
    EXPECT_LT(signals[0].score * signals[0].confidence, 0.5);
}

TEST(HitsAnalyzer, AnUnknownWeaponHasTheDefaultRange) {
    EventScript script;
    auto hit = rifle_hit(99.0);
    hit.weapon = "slingshot";
    script.at(1.0, kShooter, hit);
    hit.range_m = 101.0f;
    script.at(2.0, kShooter, hit);
    const Signals signals = test::only(test::run_events(script), kShooter, "hits.range");
    ASSERT_EQ(signals.size(), 1u);
    EXPECT_EQ(test::evidence_number(signals[0].evidence, "limit_m"), 100.0);
}

}  // namespace
}  // namespace arbiter::reference
