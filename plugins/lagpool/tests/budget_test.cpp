// The building blocks one by one, as pure functions: the budget (Luanti's LagPool), the
// lag estimate, the cost of a move, and the score of a window of overdraws.
#include <cmath>

#include <gtest/gtest.h>

#include "budget.hpp"
#include "cost.hpp"
#include "overdraw.hpp"
#include "server_lag.hpp"

namespace {

using arbiter::lagpool::Budget;
using arbiter::lagpool::budget_capacity;
using arbiter::lagpool::movement_cost;
using arbiter::lagpool::MovementLimits;
using arbiter::lagpool::Overdraw;
using arbiter::lagpool::OverdrawSettings;
using arbiter::lagpool::OverdrawWindow;
using arbiter::lagpool::score_overdraws;
using arbiter::lagpool::ServerLag;
using arbiter::lagpool::Vec3;

constexpr int64_t kSecond = 1'000'000;

TEST(Budget, StartsEmpty) {
    Budget budget(5.0);
    EXPECT_DOUBLE_EQ(budget.available(), 0.0);
    EXPECT_DOUBLE_EQ(budget.spent(), 5.0);  // Luanti's m_pool starts at m_max
    EXPECT_FALSE(budget.grab(0.01));
}

TEST(Budget, RechargesOneSecondPerSecondUpToItsCapacity) {
    Budget budget(5.0);
    budget.recharge(1.5);
    EXPECT_DOUBLE_EQ(budget.available(), 1.5);
    budget.recharge(2.0);
    EXPECT_DOUBLE_EQ(budget.available(), 3.5);
    budget.recharge(100.0);
    EXPECT_DOUBLE_EQ(budget.available(), 5.0);
    budget.recharge(-3.0);  // time never runs backwards into the budget
    EXPECT_DOUBLE_EQ(budget.available(), 5.0);
}

TEST(Budget, AGrabIsAllOrNothing) {
    Budget budget(5.0);
    budget.recharge(1.0);
    EXPECT_FALSE(budget.grab(1.2));             // would overdraw: fails...
    EXPECT_DOUBLE_EQ(budget.available(), 1.0);  // ...and consumes nothing
    EXPECT_TRUE(budget.grab(0.7));
    EXPECT_NEAR(budget.available(), 0.3, 1e-12);
    EXPECT_TRUE(budget.grab(0.3));  // exactly what is left
    EXPECT_NEAR(budget.available(), 0.0, 1e-12);
    EXPECT_TRUE(budget.grab(0.0));   // costs nothing: always succeeds
    EXPECT_TRUE(budget.grab(-1.0));  // as in Luanti, and gives nothing back
    EXPECT_NEAR(budget.available(), 0.0, 1e-12);
}

TEST(Budget, EmptyTakesEverythingAvailable) {
    Budget budget(5.0);
    budget.recharge(4.0);
    budget.empty();
    EXPECT_DOUBLE_EQ(budget.available(), 0.0);
}

TEST(Budget, ACapacityChangeKeepsTheTimeSpent) {
    // Luanti's setMax keeps m_pool (time spent): a rise of the capacity is available at
    // once, a fall takes away as much as it fell, never below empty.
    Budget budget(5.0);
    budget.recharge(2.0);  // spent 3, available 2
    budget.set_capacity(12.0);
    EXPECT_DOUBLE_EQ(budget.spent(), 3.0);
    EXPECT_DOUBLE_EQ(budget.available(), 9.0);
    budget.set_capacity(8.0);
    EXPECT_DOUBLE_EQ(budget.available(), 5.0);
    budget.set_capacity(2.0);  // spent is capped at the capacity: empty, not negative
    EXPECT_DOUBLE_EQ(budget.spent(), 2.0);
    EXPECT_DOUBLE_EQ(budget.available(), 0.0);
}

TEST(Budget, AdvanceSetsTheCapacityBeforeRecharging) {
    // PlayerSAO::step: setMax, then add. Recharging first would lose time to the old cap.
    Budget budget(5.0);
    budget.advance(10.0, 8.0);
    EXPECT_DOUBLE_EQ(budget.available(), 10.0);
}

TEST(Budget, RestoredRefusesImpossibleValues) {
    EXPECT_DOUBLE_EQ(Budget::restored(5.0, 1.0).available(), 4.0);
    EXPECT_THROW(Budget::restored(5.0, 6.0), std::invalid_argument);
    EXPECT_THROW(Budget::restored(5.0, -1.0), std::invalid_argument);
    EXPECT_THROW(Budget::restored(NAN, 1.0), std::invalid_argument);
}

TEST(ServerLag, JumpsUpAtOnceAndHalvesEveryHalvingTime) {
    ServerLag lag;
    EXPECT_DOUBLE_EQ(lag.estimate_s(10 * kSecond, 60.0), 0.0);
    lag.observe(10 * kSecond, 4.0, 60.0);
    EXPECT_DOUBLE_EQ(lag.estimate_s(10 * kSecond, 60.0), 4.0);
    EXPECT_NEAR(lag.estimate_s(70 * kSecond, 60.0), 2.0, 1e-9);
    EXPECT_NEAR(lag.estimate_s(130 * kSecond, 60.0), 1.0, 1e-9);
    lag.observe(70 * kSecond, 0.5, 60.0);  // lower than the decayed estimate: no effect
    EXPECT_NEAR(lag.estimate_s(70 * kSecond, 60.0), 2.0, 1e-9);
    lag.observe(71 * kSecond, 9.0, 60.0);  // higher: jumps at once
    EXPECT_DOUBLE_EQ(lag.estimate_s(71 * kSecond, 60.0), 9.0);
}

TEST(ServerLag, CapacityIsTwiceTheLagButNeverUnderTheMinimum) {
    EXPECT_DOUBLE_EQ(budget_capacity(0.0, 5.0, 2.0), 5.0);
    EXPECT_DOUBLE_EQ(budget_capacity(2.4, 5.0, 2.0), 5.0);
    EXPECT_DOUBLE_EQ(budget_capacity(4.0, 5.0, 2.0), 8.0);
}

TEST(MovementCost, HorizontalDistanceOverWalkingSpeedDividedByTolerance) {
    MovementLimits limits{.max_walk_speed = 20.0, .max_jump_speed = 10.0, .tolerance = 1.25};
    auto cost = movement_cost({0, 0, 0}, {30, 40, 0}, limits);
    EXPECT_DOUBLE_EQ(cost.horizontal_m, 50.0);
    EXPECT_DOUBLE_EQ(cost.seconds, 50.0 / 20.0 / 1.25);
}

TEST(MovementCost, ClimbingAndWalkingOverlapAndFallingIsFree) {
    MovementLimits limits{.max_walk_speed = 4.0, .max_jump_speed = 13.0, .tolerance = 1.0};
    // 4 m across and 26 m up: the climb takes longer (2 s at 13 m/s) than the walk (1 s).
    EXPECT_DOUBLE_EQ(movement_cost({0, 0, 0}, {4, 0, 26}, limits).seconds, 2.0);
    // 8 m across and 13 m up: the walk takes longer; the times are not added.
    EXPECT_DOUBLE_EQ(movement_cost({0, 0, 0}, {8, 0, 13}, limits).seconds, 2.0);
    // Going down costs only the horizontal part.
    EXPECT_DOUBLE_EQ(movement_cost({0, 0, 50}, {4, 0, 0}, limits).seconds, 1.0);
    // Luanti: vertical movement at walking speed is allowed (climbing, swimming, flying).
    MovementLimits slow_jump{.max_walk_speed = 20.0, .max_jump_speed = 5.0, .tolerance = 1.0};
    EXPECT_DOUBLE_EQ(movement_cost({0, 0, 0}, {0, 0, 20}, slow_jump).seconds, 1.0);
}

// Failed grabs at these relay times and costs, each with half its cost in the budget.
OverdrawWindow window_of(const std::vector<std::pair<int64_t, double>>& costs,
                         double window_s = 60.0) {
    OverdrawWindow window;
    for (auto [t_us, cost] : costs)
        window.add({.t_us = t_us, .cost_s = cost, .available_s = cost / 2, .capacity_s = 5.0},
                   window_s);
    return window;
}

TEST(Overdraw, OneFailedGrabNeverScoresHoweverLarge) {
    OverdrawSettings settings;
    auto summary = window_of({{10 * kSecond, 40.0}}).summary(settings.burst_s);
    EXPECT_EQ(summary.failed_grabs, 1);
    EXPECT_EQ(score_overdraws(summary, settings).score, 0.0);
}

TEST(Overdraw, ABurstOfFailedGrabsIsOneEpisode) {
    OverdrawSettings settings;
    std::vector<std::pair<int64_t, double>> burst;
    for (int i = 0; i < 40; ++i)
        burst.push_back({10 * kSecond + i * 300, 0.04});
    auto summary = window_of(burst).summary(settings.burst_s);
    EXPECT_EQ(summary.failed_grabs, 40);
    EXPECT_EQ(summary.episodes, 1);
    EXPECT_EQ(score_overdraws(summary, settings).score, 0.0);
}

TEST(Overdraw, ScoreGrowsWithHowOftenAndHowMuch) {
    OverdrawSettings settings;
    auto score_of = [&](int count, double cost) {
        std::vector<std::pair<int64_t, double>> items;
        for (int i = 0; i < count; ++i)
            items.push_back({i * kSecond, cost});
        auto summary = window_of(items).summary(settings.burst_s);
        return score_overdraws(summary, settings);
    };
    EXPECT_EQ(score_of(2, 0.5).score, 0.0);  // under min_episodes
    const auto few_small = score_of(3, 0.05);
    const auto few_large = score_of(3, 0.5);
    const auto many_small = score_of(30, 0.05);
    EXPECT_GT(few_small.score, 0.0);
    EXPECT_GT(few_large.score, few_small.score);   // by how much
    EXPECT_GT(many_small.score, few_small.score);  // how often
    EXPECT_GT(many_small.confidence, few_small.confidence);
    EXPECT_DOUBLE_EQ(many_small.confidence, 1.0);
    EXPECT_NEAR(score_of(10, 0.1).score, 1.0 - std::exp(-1.0 / settings.overdraw_scale_s), 1e-9);
}

TEST(Overdraw, HowMuchIsTheTimeTheFailedGrabsAskedFor) {
    // A bot with a fixed rhythm fails with the budget a hair short of the cost: its
    // deficits are tiny, but what it asked for beyond the budget is not.
    OverdrawWindow window;
    for (int i = 0; i < 20; ++i)
        window.add(
            {.t_us = i * kSecond, .cost_s = 0.125, .available_s = 0.124996, .capacity_s = 5.0},
            60.0);
    auto summary = window.summary(0.1);
    EXPECT_NEAR(summary.overdrawn_s, 2.5, 1e-12);
    EXPECT_NEAR(summary.largest_deficit_s, 4e-6, 1e-12);
    EXPECT_GT(score_overdraws(summary, OverdrawSettings{}).score, 0.9);
}

TEST(Overdraw, OldFailedGrabsLeaveTheWindow) {
    OverdrawSettings settings;
    auto window =
        window_of({{0, 1.0}, {1 * kSecond, 1.0}, {2 * kSecond, 1.0}, {70 * kSecond, 1.0}});
    auto summary = window.summary(settings.burst_s);
    EXPECT_EQ(summary.failed_grabs, 1);
    EXPECT_EQ(summary.first_us, 70 * kSecond);
    EXPECT_EQ(score_overdraws(summary, settings).score, 0.0);
}

}  // namespace
