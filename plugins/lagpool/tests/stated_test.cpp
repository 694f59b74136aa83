// Kinds with cost = "stated": the relay states what each action takes (a StatChange whose
// stat is the kind's name, its delta in seconds), as Luanti's server computes a dig's time
// from the node and the tool. Each costs delta / tolerance; a delta that is no time (not
// finite, negative) is ignored and counted, never charged.
#include <cmath>
#include <limits>
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

// Tolerance 1, so that a stated second costs exactly a second of the 5 s budget.
ConfigValue stated_config(double tolerance = 1.0) {
    return ConfigValue::table({
        {"kinds",
         ConfigValue::table({
             {"dig_time", ConfigValue::table({{"cost", "stated"}, {"tolerance", tolerance}})},
         })},
    });
}

class Stated : public ::testing::Test {
  protected:
    explicit Stated(ConfigValue config = stated_config()) : harness_(config) {}
    void SetUp() override { ASSERT_TRUE(harness_.ok()) << harness_.error(); }

    void join(int64_t t_us) { feed(t_us, build::PlayerJoin{}); }
    void stat(int64_t t_us, double delta, const std::string& name = "dig_time") {
        feed(t_us, build::Stat{.stat = name, .delta = delta});
    }
    double metric(const std::string& name) {
        auto it = harness_.host().metrics.find(name);
        return it == harness_.host().metrics.end() ? 0.0 : it->second;
    }
    double failed() { return metric("failed_grabs.dig_time"); }

    Harness harness_;

  private:
    template <class Body>
    void feed(int64_t t_us, const Body& body) {
        builder_.add(t_us, static_cast<uint64_t>(t_us / 50'000), 1, body);
        harness_.feed(builder_.finish());
    }
    BatchBuilder builder_{"test-relay", 1};
};

TEST_F(Stated, EachActionCostsTheTimeTheRelayStates) {
    join(0);
    stat(10 * kSecond, 4.0);  // the budget is full (5 s) after 10 s: 4 s fit
    EXPECT_EQ(failed(), 0);
    stat(10 * kSecond, 2.0);  // 1 s left: 2 s do not fit, and consume nothing
    EXPECT_EQ(failed(), 1);
    stat(10 * kSecond, 1.0);  // exactly what is left
    EXPECT_EQ(failed(), 1);
    stat(10 * kSecond, 0.001);  // now nothing is left
    EXPECT_EQ(failed(), 2);
}

TEST_F(Stated, ATimeThatIsNoTimeIsIgnoredAndCounted) {
    join(0);
    for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity(), -1.0, -1e-9})
        stat(10 * kSecond, bad);
    EXPECT_EQ(metric("stated_ignored.dig_time"), 4);
    EXPECT_EQ(failed(), 0);
    // None of them touched the budget: the full 5 s are still there.
    stat(10 * kSecond, 5.0);
    EXPECT_EQ(failed(), 0);
    // A stated zero is an instant action: free, and not ignored.
    stat(10 * kSecond, 0.0);
    EXPECT_EQ(metric("stated_ignored.dig_time"), 4);
    EXPECT_EQ(failed(), 0);
}

TEST_F(Stated, OnlyStatChangesOfTheKindsNameFeedIt) {
    join(0);
    stat(10 * kSecond, 100.0, "experience");  // another stat: not a cost of any kind
    EXPECT_EQ(failed(), 0);
    EXPECT_EQ(metric("stated_ignored.experience"), 0);
    // An order named like the kind is not the relay's statement of a time.
    BatchBuilder builder("test-relay", 1, 100);
    for (int i = 0; i < 50; ++i)
        builder.add(10 * kSecond, 200, 1, build::Order{.kind = "dig_time"});
    harness_.feed(builder.finish());
    EXPECT_EQ(failed(), 0);
    stat(10 * kSecond, 5.0);  // all 5 s still there
    EXPECT_EQ(failed(), 0);
}

class StatedWithTolerance : public Stated {
  protected:
    StatedWithTolerance() : Stated(stated_config(2.0)) {}
};

TEST_F(StatedWithTolerance, TheToleranceDividesTheStatedTime) {
    join(0);
    stat(10 * kSecond, 10.0);  // 10 s stated, 5 s charged: exactly the budget
    EXPECT_EQ(failed(), 0);
    stat(10 * kSecond, 0.002);
    EXPECT_EQ(failed(), 1);
}

// A dig bot whose every dig the server says takes 1 s, ten a second: the evidence names
// the kind, the model and the stated time, for a reviewer to see why.
TEST_F(Stated, OverdrawingReportsTheStatedTimeAsEvidence) {
    join(0);
    for (int64_t t = 10 * kSecond; t < 40 * kSecond; t += 100'000)
        stat(t, 1.0);
    ASSERT_FALSE(harness_.signals().empty());
    const auto& signal = harness_.signals().back();
    EXPECT_EQ(signal.code, "dig_time.overdraw");
    const auto evidence = nlohmann::json::parse(signal.evidence);
    EXPECT_EQ(evidence["budget"], "dig_time");
    EXPECT_EQ(evidence["cost"], "stated");
    EXPECT_EQ(evidence["latest"]["stated_s"], 1.0);
    EXPECT_EQ(evidence["latest"]["cost_s"], 1.0);
    EXPECT_FALSE(evidence.contains("seconds_per_action"));
}

}  // namespace
