// Both halves of the harness: the analyzer in process, then the built library
// through the real host.
#include <gtest/gtest.h>

#include <arbiter/host/plugin_harness.hpp>
#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/testing.hpp>

#include "../src/order_rate.hpp"

namespace {

// A match in which player 1 gives `per_second` orders a second for `seconds`.
std::vector<uint8_t> orders(double per_second, int seconds, bool repeat = false) {
    arbiter::BatchBuilder builder("relay", 1);
    const auto step_us = static_cast<int64_t>(1e6 / per_second);
    for (int64_t t = 0; t < seconds * 1'000'000; t += step_us)
        builder.add(t, static_cast<uint64_t>(t / 50'000), 1, arbiter::build::Order{.kind = "move", .repeat = repeat});
    return builder.finish();
}

TEST(OrderRate, HumanRateIsQuiet) {
    arbiter::testing::Harness<order_rate::OrderRate> harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    EXPECT_TRUE(harness.feed(orders(6, 20)).empty());
}

TEST(OrderRate, BotRateIsReportedWithEvidence) {
    arbiter::testing::Harness<order_rate::OrderRate> harness;
    harness.feed(orders(25, 20));
    auto score = harness.max_score(1, "order_rate.sustained");
    ASSERT_TRUE(score.has_value());
    EXPECT_DOUBLE_EQ(*score, 1.0);
    EXPECT_NE(harness.signals().back().evidence.find("\"limit_per_second\":10"), std::string::npos);
    EXPECT_LE(harness.signals().size(), 25u);  // re-reported only when it gets worse
}

TEST(OrderRate, HeldKeyRepeatsAreNotOrders) {
    arbiter::testing::Harness<order_rate::OrderRate> harness;
    EXPECT_TRUE(harness.feed(orders(25, 20, true)).empty());
}

TEST(OrderRate, BadConfigNamesTheKey) {
    arbiter::testing::Harness<order_rate::OrderRate> harness(
        arbiter::ConfigValue::table({{"max_per_second", -1.0}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(harness.error().rfind("max_per_second:", 0), 0u) << harness.error();
}

TEST(OrderRate, StateSurvivesAReload) {
    arbiter::testing::Harness<order_rate::OrderRate> before;
    before.feed(orders(25, 3));
    auto blob = before.save_state();
    ASSERT_TRUE(blob.has_value());
    arbiter::testing::Harness<order_rate::OrderRate> after;
    EXPECT_EQ(after.restore_state(*blob), ARB_OK);
    blob->back() ^= 1;
    EXPECT_EQ(after.restore_state(*blob), ARB_ERR_STATE);
}

TEST(OrderRateThroughTheHost, BotReachesMonitorAloneAsABehaviouralSignal) {
    arbiter::host::PluginHarness harness(ORDER_RATE_PLUGIN, "max_per_second = 10.0");
    ASSERT_TRUE(harness.ok()) << harness.error();
    ASSERT_FALSE(harness.push(orders(25, 20)).has_value());
    harness.close();
    ASSERT_FALSE(harness.signals().empty());
    // Behavioural evidence alone stops at Monitor: timing alone never convicts.
    EXPECT_EQ(harness.action_of("relay", 1, 1), arbiter::host::Action::monitor);
}

TEST(OrderRateThroughTheHost, UnknownKeyIsRefusedWithItsPosition) {
    arbiter::host::PluginHarness harness(ORDER_RATE_PLUGIN, "max_per_secnd = 10.0");
    EXPECT_FALSE(harness.ok());
    EXPECT_NE(harness.error().find("max_per_secnd: unknown key"), std::string::npos) << harness.error();
}

}  // namespace
