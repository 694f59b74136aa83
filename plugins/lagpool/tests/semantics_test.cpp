// The budget semantics one by one, through the analyzer as the host runs it: a session
// starts empty, time recharges it, a grab is all or nothing, the capacity follows the
// relay's lag, a server teleport empties the move budget and starts a grace period, and
// one failed grab never makes a signal. The plugin's metrics count the failed grabs.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/testing.hpp>

#include "lagpool_analyzer.hpp"

namespace {

using arbiter::BatchBuilder;
using arbiter::ConfigValue;
using arbiter::lagpool::LagpoolAnalyzer;
namespace build = arbiter::build;
using Harness = arbiter::testing::Harness<LagpoolAnalyzer>;

constexpr int64_t kSecond = 1'000'000;

// Costs that are exact in binary, so that "exactly what is left" is exact: moving costs
// 1/8 s a metre, a dig 1/4 s.
ConfigValue exact_config(ConfigValue::Table extra = {}) {
    ConfigValue::Table table = {
        {"kinds",
         ConfigValue::table({
             {"movement", ConfigValue::table({{"max_walk_speed", 8.0}, {"tolerance", 1.0}})},
             {"dig",
              ConfigValue::table({{"cost", "fixed"}, {"seconds", 0.25}, {"tolerance", 1.0}})},
         })},
    };
    for (auto& member : extra)
        table.push_back(std::move(member));
    return ConfigValue::table(std::move(table));
}

class Semantics : public ::testing::Test {
  protected:
    explicit Semantics(ConfigValue config = exact_config()) : harness_(config) {}

    void SetUp() override { ASSERT_TRUE(harness_.ok()) << harness_.error(); }

    void join(int64_t t_us, uint32_t player = 1) { feed(t_us, player, build::PlayerJoin{}); }
    void leave(int64_t t_us, uint32_t player = 1) { feed(t_us, player, build::PlayerLeave{}); }
    void at(int64_t t_us, double x, bool teleport = false, uint32_t player = 1) {
        feed(t_us, player,
             build::Position{.position = {static_cast<float>(x), 0, 0},
                             .server_teleport = teleport});
    }
    void dig(int64_t t_us, int count = 1, uint32_t player = 1) {
        for (int i = 0; i < count; ++i)
            builder_.add(t_us, tick(t_us), player, build::Order{.kind = "dig"});
        signals_ += harness_.feed(builder_.finish()).size();
    }
    // The host's word that batches were lost (schema 1.1), the next heard at t_us.
    void input_lost(int64_t last_heard_us, int64_t t_us) {
        feed(t_us, 0,
             build::InputLost{.first_sequence = 1,
                              .last_sequence = 3,
                              .last_heard_relay_us = last_heard_us,
                              .next_heard_relay_us = t_us});
    }
    void tick_lag(int64_t t_us, double lag_s) {
        feed(t_us, 0, build::TickBoundary{.tick_lag_us = static_cast<uint32_t>(lag_s * 1e6)});
    }

    double metric(const std::string& name) {
        auto it = harness_.host().metrics.find(name);
        return it == harness_.host().metrics.end() ? 0.0 : it->second;
    }
    // Failed grabs of a kind, in a grace period or not.
    double failed(const std::string& kind) {
        return failed_outside_grace(kind) + failed_in_grace(kind);
    }
    double failed_outside_grace(const std::string& kind) { return metric("failed_grabs." + kind); }
    double failed_in_grace(const std::string& kind) {
        return metric("failed_grabs_in_grace." + kind);
    }

    Harness harness_;
    size_t signals_ = 0;

  private:
    static uint64_t tick(int64_t t_us) { return static_cast<uint64_t>(t_us / 50'000); }
    template <class Body>
    void feed(int64_t t_us, uint32_t player, const Body& body) {
        builder_.add(t_us, tick(t_us), player, body);
        signals_ += harness_.feed(builder_.finish()).size();
    }
    BatchBuilder builder_{"test-relay", 1};
};

TEST_F(Semantics, ASessionStartsWithAnEmptyBudget) {
    join(1 * kSecond);
    dig(1 * kSecond + 1000);  // 1 ms of budget: not enough for a dig
    EXPECT_EQ(failed("dig"), 1);
    dig(1 * kSecond + 300'000);  // 0.3 s recharged: enough
    EXPECT_EQ(failed("dig"), 1);

    // A new session (leave, join again) starts empty again, however full it was.
    dig(100 * kSecond, 20);
    EXPECT_EQ(failed("dig"), 1);
    leave(200 * kSecond);
    join(200 * kSecond);
    dig(200 * kSecond + 1000);
    EXPECT_EQ(failed("dig"), 2);
}

TEST_F(Semantics, TimeRechargesTheBudgetOneSecondPerSecondUpToTheCapacity) {
    join(0);
    dig(1 * kSecond, 5);  // 1 s of budget: four digs of 0.25 s, the fifth fails
    EXPECT_EQ(failed("dig"), 1);
    dig(1 * kSecond + 500'000, 3);  // 0.5 s more: two digs, the third fails
    EXPECT_EQ(failed("dig"), 2);
    dig(200 * kSecond, 25);  // a long wait fills it to 5 s and no further: twenty digs
    EXPECT_EQ(failed("dig"), 7);
}

TEST_F(Semantics, AGrabIsAllOrNothing) {
    join(0);
    at(0, 0.0);        // the first position of a session costs nothing
    at(500'000, 6.0);  // 0.75 s with 0.5 s in the budget: fails...
    EXPECT_EQ(failed("movement"), 1);
    at(500'000, 8.0);   // ...and consumed nothing: 0.25 s succeeds
    at(500'000, 10.0);  // and another 0.25 s, exactly what is left
    EXPECT_EQ(failed("movement"), 1);
    at(500'000, 11.0);  // now nothing is left
    EXPECT_EQ(failed("movement"), 2);
}

TEST_F(Semantics, TheCapacityFollowsTheRelaysLagUpAtOnceAndHalvingEachMinute) {
    join(0);
    tick_lag(100 * kSecond, 10.0);  // capacity max(5, 2 x 10) = 20 s at once
    dig(100 * kSecond, 81);         // 80 digs of 0.25 s, the 81st fails
    EXPECT_EQ(failed("dig"), 1);
    dig(160 * kSecond, 41);  // a minute later the estimate is 5 s: capacity 10 s
    EXPECT_EQ(failed("dig"), 2);
    dig(280 * kSecond, 21);  // two more: 1.25 s, so the 5 s minimum
    EXPECT_EQ(failed("dig"), 3);
}

TEST_F(Semantics, WithoutLagTheCapacityIsTheMinimum) {
    join(0);
    tick_lag(100 * kSecond, 0.5);  // 2 x 0.5 s is under the 5 s minimum
    dig(100 * kSecond, 21);
    EXPECT_EQ(failed("dig"), 1);
}

TEST_F(Semantics, AServerTeleportEmptiesTheMoveBudgetAndStartsAGracePeriod) {
    join(0);
    at(0, 0.0);
    at(100 * kSecond, 8.0);  // 1 s of the full 5 s budget
    EXPECT_EQ(failed("movement"), 0);
    at(100 * kSecond + 1000, 508.0, /*teleport=*/true);  // 500 m, made by the server: free
    EXPECT_EQ(failed("movement"), 0);
    at(100 * kSecond + 51'000, 508.8);  // 0.1 s with 0.05 s recharged: the budget was emptied
    EXPECT_EQ(failed_in_grace("movement"), 1);
    EXPECT_EQ(failed_outside_grace("movement"), 0);
    dig(100 * kSecond + 51'000);  // the teleport empties the move budget alone
    EXPECT_EQ(failed("dig"), 0);

    at(106 * kSecond, 556.8);  // 6 s after the teleport, past the 5 s grace: 6 s of moving
    EXPECT_EQ(failed_in_grace("movement"), 1);
    EXPECT_EQ(failed_outside_grace("movement"), 1);
    EXPECT_EQ(signals_, 0u);  // one failed grab is no signal
}

// A respawn in batches that never arrived: without the host's word, the 500 m look walked
// in a second; told, the next position is measured from nothing, and the grace runs as
// after a teleport, since the client may still be catching up with the server.
TEST_F(Semantics, NothingIsChargedAcrossLostInput) {
    join(0);
    at(0, 0.0);
    at(100 * kSecond, 8.0);
    input_lost(100 * kSecond, 101 * kSecond);
    at(101 * kSecond, 508.0);  // where the lost respawn put the player
    EXPECT_EQ(failed("movement"), 0);
    at(101 * kSecond + 100'000, 508.8);  // 0.1 s of moving, from a budget brought forward
    EXPECT_EQ(failed("movement"), 0);
    at(103 * kSecond, 608.0);  // 12.4 s of moving in 2 s: within the grace
    EXPECT_EQ(failed_in_grace("movement"), 1);
    EXPECT_EQ(failed_outside_grace("movement"), 0);
    at(110 * kSecond, 708.0);  // past the grace, the budget judges again
    EXPECT_EQ(failed_outside_grace("movement"), 1);
}

TEST_F(Semantics, WithoutTheHostsWordTheSameMovesOverdraw) {
    join(0);
    at(0, 0.0);
    at(100 * kSecond, 8.0);
    at(101 * kSecond, 508.0);
    EXPECT_EQ(failed_outside_grace("movement"), 1) << "the check the reset prevents can fail";
}

TEST_F(Semantics, TheGracePeriodIsNeverShorterThanTheCapacity) {
    // Luanti: a failed move is reported only once the time since the teleport exceeds
    // the capacity, so that a lagging client that learns of the teleport late is spared.
    join(0);
    at(0, 0.0);
    tick_lag(99 * kSecond, 10.0);
    at(100 * kSecond, 1000.0, /*teleport=*/true);
    at(115 * kSecond, 20'000.0);  // capacity 2 x 10 x 2^(-16/60) = 16.6 s: still in grace
    EXPECT_EQ(failed_in_grace("movement"), 1);
    EXPECT_EQ(failed_outside_grace("movement"), 0);
    at(125 * kSecond, 40'000.0);  // capacity 14.8 s: the grace is over
    EXPECT_EQ(failed_outside_grace("movement"), 1);
}

TEST_F(Semantics, OneFailedGrabIsNoSignalButRepeatedOverdrawsAre) {
    join(0);
    at(0, 0.0);
    at(100 * kSecond, 100.0);  // 12.5 s of moving in one update, with 5 s in the budget
    EXPECT_EQ(failed_outside_grace("movement"), 1);
    EXPECT_EQ(signals_, 0u);
    at(110 * kSecond, 200.0);
    EXPECT_EQ(signals_, 0u);
    at(120 * kSecond, 300.0);  // the third episode in the window
    ASSERT_EQ(signals_, 1u);

    const auto& signal = harness_.signals().back();
    EXPECT_EQ(signal.player, 1u);
    EXPECT_EQ(signal.code, "movement.overdraw");
    EXPECT_GT(signal.score, 0.9);
    auto evidence = nlohmann::json::parse(signal.evidence);
    EXPECT_EQ(evidence["budget"], "movement");
    EXPECT_EQ(evidence["failed_grabs"], 3);
    EXPECT_EQ(evidence["episodes"], 3);
    EXPECT_DOUBLE_EQ(evidence["capacity_s"].get<double>(), 5.0);
    EXPECT_DOUBLE_EQ(evidence["latest"]["deficit_s"].get<double>(), 12.5 - 5.0);
    EXPECT_EQ(evidence["latest"]["t_us"], 120 * kSecond);
    EXPECT_EQ(evidence["first_failure_us"], 100 * kSecond);
    EXPECT_DOUBLE_EQ(evidence["overdrawn_s"].get<double>(), 3 * 12.5);
    EXPECT_DOUBLE_EQ(evidence["lag_estimate_s"].get<double>(), 0.0);
    EXPECT_EQ(evidence["recent"].size(), 3u);
}

}  // namespace
