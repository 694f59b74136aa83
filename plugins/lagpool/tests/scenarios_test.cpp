// Whole matches through the analyzer with the default config: honest players (fast, in
// a lag spike, on a lagging server) never overdraw; a speed hacker and action-rate bots
// do, and reach a score a reviewer must look at.
#include <gtest/gtest.h>

#include "run_match.hpp"

namespace {

using namespace lagpool_test;

// The host's review threshold (server_config.toml's default).
constexpr double kReview = 0.7;

auto constant(double speed) {
    return [speed](double) { return speed; };
}

TEST(HonestPlayers, FastPlayersNeverOverdraw) {
    Timeline timeline;
    add_match_frame(timeline, {1, 2, 3}, 120 * kSecond);
    // Close to the 20 m/s limit, jumping, turning; and exactly at the limit.
    add_runner(
        timeline,
        {.player = 1, .to_us = 120 * kSecond, .speed = constant(19.5), .jumps = true, .seed = 11});
    add_runner(timeline,
               {.player = 2, .to_us = 120 * kSecond, .speed = constant(20.0), .seed = 12});
    // Digging as fast as the game allows (0.15 s a dig) and a bit slower, with jitter.
    add_actor(timeline, {.player = 1,
                         .from_us = 0,
                         .to_us = 120 * kSecond,
                         .interval_us = 200'000,
                         .jitter_us = 40'000,
                         .seed = 13});
    add_actor(timeline, {.player = 3,
                         .from_us = 0,
                         .to_us = 120 * kSecond,
                         .interval_us = 150'000,
                         .jitter_us = 20'000,
                         .seed = 14});
    auto harness = run(timeline);
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "failed_grabs.movement"), 0);
    EXPECT_EQ(metric(*harness, "failed_grabs.dig"), 0);
}

TEST(HonestPlayers, ALagSpikeFollowedByABurstIsNotCheating) {
    Timeline timeline;
    add_match_frame(timeline, {1, 2}, 90 * kSecond);
    // 0.8 s of silence then a burst of 16 late updates within 5 ms (the sample's carol),
    // later 3 s of silence, and packet loss throughout.
    add_runner(timeline, {.player = 1,
                          .to_us = 90 * kSecond,
                          .speed = constant(17.0),
                          .seed = 21,
                          .packet_loss = 0.1,
                          .spikes = {{20 * kSecond, 20'800'000}, {50 * kSecond, 53 * kSecond}}});
    // At the speed limit through a 4.5 s spike.
    add_runner(timeline, {.player = 2,
                          .to_us = 90 * kSecond,
                          .speed = constant(20.0),
                          .seed = 22,
                          .spikes = {{40 * kSecond, 44'500'000}}});
    auto harness = run(timeline);
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "failed_grabs.movement"), 0);
}

// Three players and a digger on a relay that stalls three times for 8 s: everything the
// players sent meanwhile arrives at once when it resumes.
Timeline lagging_server() {
    Timeline timeline;
    add_match_frame(timeline, {1, 2, 3}, 90 * kSecond, /*max_noise_us=*/300'000);
    add_runner(
        timeline,
        {.player = 1, .to_us = 90 * kSecond, .speed = constant(19.5), .jumps = true, .seed = 31});
    add_runner(timeline, {.player = 2, .to_us = 90 * kSecond, .speed = constant(12.0), .seed = 32});
    add_runner(timeline, {.player = 3, .to_us = 90 * kSecond, .speed = constant(5.0), .seed = 33});
    add_actor(timeline, {.player = 3,
                         .from_us = 0,
                         .to_us = 90 * kSecond,
                         .interval_us = 150'000,
                         .jitter_us = 20'000,
                         .seed = 34});
    timeline.stall(20 * kSecond, 8 * kSecond);
    timeline.stall(45 * kSecond, 8 * kSecond);
    timeline.stall(70 * kSecond, 8 * kSecond);
    return timeline;
}

TEST(HonestPlayers, AWholeServerLaggingIsNotCheating) {
    auto harness = run(lagging_server());
    EXPECT_TRUE(harness->signals().empty());
    EXPECT_EQ(metric(*harness, "failed_grabs.movement"), 0);
    EXPECT_EQ(metric(*harness, "failed_grabs.dig"), 0);
}

TEST(HonestPlayers, OnALaggingServerItIsTheCapacityThatSparesThem) {
    // The same match with the relay's tick lag forgotten: 8 s of catch-up movement does
    // not fit the 5 s minimum capacity, so the same honest players would overdraw.
    Timeline timeline = lagging_server();
    timeline.forget_tick_lag();
    auto harness = run(timeline);
    EXPECT_GT(metric(*harness, "failed_grabs.movement"), 0);
    EXPECT_GT(weighted(*harness, 1, "movement.overdraw"), 0.0);
}

TEST(Cheaters, ASpeedHackRunsTheMoveBudgetDry) {
    Timeline timeline;
    add_match_frame(timeline, {1, 2}, 60 * kSecond);
    // 32 m/s from 15 to 45 s: 60 % over the limit, 33 % over limit x tolerance.
    add_runner(timeline, {.player = 1,
                          .speed = [](double t) { return t >= 15.0 && t < 45.0 ? 32.0 : 10.0; },
                          .seed = 41});
    add_runner(timeline, {.player = 2, .speed = constant(19.0), .seed = 42});
    auto harness = run(timeline);

    EXPECT_GE(weighted(*harness, 1, "movement.overdraw"), kReview);
    EXPECT_FALSE(harness->any_signal_for(2));
    for (const auto& signal : harness->signals()) {
        // The stored budget (5 s) carries the hack for a while; no signal before it began.
        EXPECT_GE(signal.relay_time_us, 15 * kSecond);
        EXPECT_LE(signal.relay_time_us, 46 * kSecond);
    }
    // A signal again only when the score rises: a handful, not one per failed grab.
    EXPECT_LT(harness->signals().size(), 20u);
    EXPECT_GT(metric(*harness, "failed_grabs.movement"), 50);
}

TEST(Cheaters, AModestSustainedSpeedHackIsCaughtToo) {
    Timeline timeline;
    add_match_frame(timeline, {1}, 90 * kSecond);
    // 27 m/s: 12.5 % over limit x tolerance, for the whole match.
    add_runner(timeline, {.player = 1, .to_us = 90 * kSecond, .speed = constant(27.0), .seed = 43});
    auto harness = run(timeline);
    EXPECT_GE(weighted(*harness, 1, "movement.overdraw"), kReview);
}

TEST(Cheaters, AnActionRateBotRunsTheDigBudgetDry) {
    Timeline timeline;
    add_match_frame(timeline, {1, 2, 3}, 60 * kSecond);
    // A bot digging every 60 ms (16 a second, where the game allows 6.7), another that
    // digs ten at once every second, and an honest player digging about 5 a second.
    add_actor(timeline, {.player = 1,
                         .from_us = 5 * kSecond,
                         .to_us = 60 * kSecond,
                         .interval_us = 60'000,
                         .jitter_us = 5'000,
                         .seed = 51});
    add_actor(timeline, {.player = 2,
                         .from_us = 5 * kSecond,
                         .to_us = 60 * kSecond,
                         .interval_us = kSecond,
                         .burst = 10,
                         .seed = 52});
    add_actor(timeline, {.player = 3,
                         .from_us = 0,
                         .to_us = 60 * kSecond,
                         .interval_us = 200'000,
                         .jitter_us = 40'000,
                         .seed = 53});
    // Orders of a kind the config does not name cost nothing.
    add_actor(
        timeline,
        {.player = 3, .kind = "chat", .from_us = 0, .to_us = 60 * kSecond, .interval_us = 10'000});
    auto harness = run(timeline);
    EXPECT_GE(weighted(*harness, 1, "dig.overdraw"), kReview);
    EXPECT_GE(weighted(*harness, 2, "dig.overdraw"), kReview);
    EXPECT_FALSE(harness->any_signal_for(3));
}

TEST(Cheaters, TheEvidenceSaysWhichBudgetByHowMuchAndWhen) {
    Timeline timeline;
    add_match_frame(timeline, {1}, 40 * kSecond);
    add_actor(timeline,
              {.player = 1, .from_us = 5 * kSecond, .to_us = 40 * kSecond, .interval_us = 60'000});
    auto harness = run(timeline);
    ASSERT_FALSE(harness->signals().empty());
    const auto& evidence = harness->signals().back().evidence;
    for (const char* field :
         {"\"budget\":\"dig\"", "\"overdrawn_s\":", "\"failed_grabs\":", "\"episodes\":",
          "\"deficit_s\":", "\"capacity_s\":5", "\"lag_estimate_s\":", "\"t_us\":",
          "\"first_failure_us\":", "\"seconds_per_action\":0.15", "\"tolerance\":1.2"})
        EXPECT_NE(evidence.find(field), std::string::npos) << field << " in " << evidence;
}

TEST(Batching, TheResultDoesNotDependOnTheBatchSize) {
    Timeline timeline = lagging_server();
    add_runner(timeline, {.player = 4, .to_us = 90 * kSecond, .speed = constant(30.0), .seed = 61});
    auto one_by_one = run(timeline, arbiter::ConfigValue::table({}), 1);
    auto large = run(timeline, arbiter::ConfigValue::table({}), 5000);
    ASSERT_EQ(one_by_one->signals().size(), large->signals().size());
    ASSERT_FALSE(large->signals().empty());
    for (size_t i = 0; i < large->signals().size(); ++i) {
        EXPECT_EQ(one_by_one->signals()[i].player, large->signals()[i].player);
        EXPECT_EQ(one_by_one->signals()[i].score, large->signals()[i].score);
        EXPECT_EQ(one_by_one->signals()[i].evidence, large->signals()[i].evidence);
    }
}

}  // namespace
