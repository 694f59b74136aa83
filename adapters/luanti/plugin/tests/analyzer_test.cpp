// The analyzer as the host runs it: what restarts a measurement (a silence, lost input, a
// server teleport, a change of allowance), what is not measured (an attached player, one
// whose allowance is unknown, a privilege), the engine's reports, and bad extensions.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_match.hpp"

namespace {

using namespace luanti_test;

constexpr double kReview = 0.7;  // the host's default review threshold

// Runs along x at `speed` m/s.
Step running(double t_s, double speed) {
    Step s;
    s.x = speed * t_s;
    return s;
}

TEST(Analyzer, APlayerWhoseAllowanceIsUnknownIsNotJudged) {
    Player p{.id = 1, .allowance = "", .path = [](double t) { return running(t, 12); }};
    auto harness = run(luanti_match({p}, 30 * kSecond));
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_GT(metric(*harness, "positions_without_allowance"), 300);
    // The same player with an allowance is.
    p.allowance = "{}";
    EXPECT_GE(weighted(*run(luanti_match({p}, 30 * kSecond)), 1, "luanti.speed"), kReview);
}

// Walks at 4 m/s along x, except in three stretches of 2.5 s (from 10, 13 and 16 s), in
// each of which the player ends up 30 m further on: a respawn whose line never came, or
// anything else the plugin did not hear. What happened in them is unknown.
constexpr double kHiddenFrom[] = {10.0, 13.0, 16.0};
constexpr double kHiddenLength = 2.5;

bool hidden(double t) {
    for (double from : kHiddenFrom)
        if (t >= from && t < from + kHiddenLength) return true;
    return false;
}

Step with_hidden_moves(double t) {
    Step s = running(t, 4);
    for (double from : kHiddenFrom)
        if (t >= from + kHiddenLength) s.x += 30;
    s.silent = hidden(t);
    return s;
}

TEST(Analyzer, ASilenceRestartsTheMeasurementsRatherThanReadingAsSpeed) {
    const Player p{.id = 1, .path = with_hidden_moves};
    auto harness = run(luanti_match({p}, 30 * kSecond));
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "gaps"), 3);
    // With a max_gap_s longer than the silences, windows span them, each over the limit:
    // the same match would be flagged.
    auto spanning =
        run(luanti_match({p}, 30 * kSecond), arbiter::ConfigValue::table({{"max_gap_s", 10.0}}));
    EXPECT_GT(weighted(*spanning, 1, "luanti.speed"), 0.0);
}

TEST(Analyzer, LostInputRestartsTheMeasurements) {
    // The same moves, every step sent, but the batches of the three stretches lost on the
    // way, and the host saying so; max_gap_s long enough that only InputLost restarts.
    Player p{.id = 1, .path = with_hidden_moves};
    const auto config = arbiter::ConfigValue::table({{"max_gap_s", 10.0}});
    auto all = luanti_match({[&] {
                                Player sent = p;
                                sent.path = [](double t) {
                                    Step s = with_hidden_moves(t);
                                    s.silent = false;
                                    return s;
                                };
                                return sent;
                            }()},
                            30 * kSecond);
    std::vector<std::vector<uint8_t>> told, untold;
    for (size_t i = 0; i < all.size(); ++i) {
        const double t = static_cast<double>(i) * kStepS;  // batch i is step i (0: the joins)
        const bool lost = i > 0 && hidden(t);
        const bool first_after = i > 0 && !lost && hidden(t - kStepS);
        if (first_after) {
            arbiter::BatchBuilder notice("luanti-relay", 1, i - 1);
            const auto next_us = static_cast<int64_t>(i) * kStepUs + 1;
            notice.add(next_us, 0, 0,
                       build::InputLost{.first_sequence = i - 1,
                                        .last_sequence = i - 1,
                                        .last_heard_relay_us = next_us - 2 * kStepUs,
                                        .next_heard_relay_us = next_us});
            told.push_back(notice.finish());
        }
        if (!lost) {
            told.push_back(all[i]);
            untold.push_back(all[i]);
        }
    }
    auto harness = run(told, config);
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "input_lost"), 3);
    EXPECT_GT(weighted(*run(untold, config), 1, "luanti.speed"), 0.0);
}

TEST(Analyzer, AServerTeleportRestartsTheMeasurements) {
    // Respawned 500 m away at 20 s, twice.
    const Player p{.id = 1, .path = [](double t) {
                       Step s = walking(t, 4.0);
                       const int jumps = (t >= 20) + (t >= 40);
                       s.x += 500.0 * jumps;
                       s.teleport = std::fabs(t - 20) < 0.045 || std::fabs(t - 40) < 0.045;
                       return s;
                   }};
    auto harness = run(luanti_match({p}, 60 * kSecond));
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "server_teleports"), 2);
}

TEST(Analyzer, AnAttachedPlayerIsMovedByTheEngineAndNotMeasured) {
    // In a cart at 12 m/s, up a rail in the air, through a hill.
    Player rider{.id = 1, .allowance = R"({"attached":true})", .path = [](double t) {
                     Step s = running(t, 12);
                     s.z = 5;
                     s.on_ground = false;
                     s.inside = t > 30;
                     return s;
                 }};
    EXPECT_TRUE(run(luanti_match({rider}, 60 * kSecond))->signals().empty());
    // Off the cart, the same movement is three findings.
    rider.allowance = "{}";
    auto off = run(luanti_match({rider}, 60 * kSecond));
    EXPECT_GT(weighted(*off, 1, "luanti.speed"), 0.0);
    EXPECT_GT(weighted(*off, 1, "luanti.fly"), 0.0);
    EXPECT_GT(weighted(*off, 1, "luanti.noclip"), 0.0);
}

TEST(Analyzer, AChangeOfAllowanceHoldsFromItsEventOn) {
    // Walks at 4 m/s; granted fast at 10 s and runs at 20; fast revoked at 30 s but keeps
    // running at 20 (a client that keeps it): flagged after the revocation only.
    Player p{.id = 1,
             .path =
                 [](double t) {
                     Step s;
                     s.x = t < 10 ? 4 * t : 40 + 20 * (t - 10);
                     return s;
                 },
             .extras = {{10 * kSecond, "luanti.allowance", R"({"fast":true})"},
                        {30 * kSecond, "luanti.allowance", R"({"fast":false})"}}};
    auto harness = run(luanti_match({p}, 40 * kSecond));
    ASSERT_FALSE(harness->signals().empty());
    for (const auto& signal : harness->signals()) {
        EXPECT_EQ(signal.code, "luanti.speed");
        EXPECT_GT(signal.relay_time_us, 32 * kSecond);  // sustained for 2 s after 30 s
        const auto evidence = nlohmann::json::parse(signal.evidence);
        EXPECT_EQ(evidence["allowance"]["fast"], false);
        EXPECT_DOUBLE_EQ(evidence["limit_mps"].get<double>(), 4.0 * 1.3);
    }
    EXPECT_EQ(metric(*harness, "allowance_changes"), 2);
}

TEST(Analyzer, ABadAllowanceIsCountedAndThePreviousOneHolds) {
    // Fast from the join, runs at 20 m/s; then three lines the plugin cannot read.
    Player p{.id = 1,
             .allowance = R"({"fast":true})",
             .path = [](double t) { return running(t, 20); },
             .extras = {{10 * kSecond, "luanti.allowance", "{\"fast\":"},
                        {20 * kSecond, "luanti.allowance", R"({"fast":"no"})"},
                        {25 * kSecond, "luanti.allowance", R"([false])"}}};
    auto harness = run(luanti_match({p}, 40 * kSecond));
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "bad_allowances"), 3);
}

TEST(Analyzer, PrivilegesExemptTheirCheck) {
    // Flies at 5 m above ground through walls at walking speed, with fly and noclip.
    Player p{.id = 1, .allowance = R"({"fly":true,"noclip":true})", .path = [](double t) {
                 Step s = walking(t, 4);
                 s.z = 5;
                 s.on_ground = false;
                 s.inside = true;
                 return s;
             }};
    EXPECT_TRUE(run(luanti_match({p}, 60 * kSecond))->signals().empty());
    p.allowance = R"({"fly":true})";
    auto no_noclip = run(luanti_match({p}, 60 * kSecond));
    EXPECT_EQ(weighted(*no_noclip, 1, "luanti.fly"), 0.0);
    EXPECT_GE(weighted(*no_noclip, 1, "luanti.noclip"), kReview);
    p.allowance = R"({"noclip":true})";
    auto no_fly = run(luanti_match({p}, 60 * kSecond));
    EXPECT_GE(weighted(*no_fly, 1, "luanti.fly"), kReview);
    EXPECT_EQ(weighted(*no_fly, 1, "luanti.noclip"), 0.0);
}

TEST(Analyzer, AKnockbackIsABurstAndNotSpeed) {
    // Punched every 5 s: 15 m/s for 0.3 s, then walking on.
    const Player p{.id = 1, .path = [](double t) {
                       const double cycle = std::fmod(t, 5.0);
                       const int punches = static_cast<int>(t / 5.0);
                       Step s;
                       s.x = 4 * t + punches * 0.3 * 11 + (cycle < 0.3 ? cycle * 11 : 0.3 * 11);
                       return s;
                   }};
    EXPECT_TRUE(run(luanti_match({p}, 60 * kSecond))->signals().empty());
}

TEST(Analyzer, TheEnginesReportsAreCountedAndKeptAsEvidenceButNeverScored) {
    const std::vector<Player::Extra> reports = {
        {1 * kSecond, "luanti.cheat", R"({"type":"moved_too_fast"})"},
        {kSecond + 500'000, "luanti.cheat", R"({"type":"moved_too_fast"})"},
        {2 * kSecond, "luanti.cheat", R"({"type":"interacted_too_far"})"},
        {2 * kSecond, "luanti.cheat", R"({"kind":"no type"})"},
    };
    // The speeder is flagged once the run has lasted (3 windows, after 3.2 s): the
    // evidence holds what the engine said up to then.
    const Player honest{.id = 1, .path = [](double t) { return walking(t, 4); }, .extras = reports};
    const Player speeder{
        .id = 2, .path = [](double t) { return walking(t, 12); }, .extras = reports};
    auto harness = run(luanti_match({honest, speeder}, 30 * kSecond));
    EXPECT_FALSE(harness->any_signal_for(1));
    EXPECT_EQ(metric(*harness, "engine_cheats.moved_too_fast"), 4);
    EXPECT_EQ(metric(*harness, "engine_cheats.interacted_too_far"), 2);
    EXPECT_EQ(metric(*harness, "engine_cheats.other"), 2);
    EXPECT_EQ(metric(*harness, "bad_cheat_reports"), 2);
    ASSERT_TRUE(harness->any_signal_for(2));
    const auto evidence = nlohmann::json::parse(harness->signals().back().evidence);
    EXPECT_EQ(evidence["engine_reports"]["moved_too_fast"], 2);
    EXPECT_EQ(evidence["engine_reports"]["interacted_too_far"], 1);
    EXPECT_EQ(evidence["engine_reports"]["other"], 1);
}

TEST(Analyzer, ACheckReportsAgainOnlyWhenItsScoreRises) {
    const Player p{.id = 1, .path = [](double t) { return walking(t, 12); }};
    auto harness = run(luanti_match({p}, 120 * kSecond));
    ASSERT_FALSE(harness->signals().empty());
    double last = 0;
    for (const auto& signal : harness->signals()) {
        EXPECT_GE(signal.score * signal.confidence, last + 0.05);
        last = signal.score * signal.confidence;
    }
    EXPECT_LT(harness->signals().size(), 20u);
}

TEST(Analyzer, OtherGamesExtensionsAreNotOurs) {
    const Player p{.id = 1,
                   .path = [](double t) { return walking(t, 4); },
                   .extras = {{5 * kSecond, "ddnet.input", "\x01\x02"},
                              {6 * kSecond, "luanti.future_kind", "{}"}}};
    auto harness = run(luanti_match({p}, 20 * kSecond));
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(harness->last_status(), ARB_OK);
}

}  // namespace
