// The plugin's [movement] table: every key changes what is reported, every bad value is
// refused at create (naming its key path), and configure applies a whole new table or none.
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence_reader.hpp"
#include "match_script.hpp"

namespace arbiter::reference {
namespace {

using test::MatchScript;
using test::movement_config;
using test::Mover;
using test::Signals;

constexpr uint32_t kPlayer = 3;

Signals run(const Mover& mover, const ConfigValue& config) {
    return test::run_match(MatchScript().add(kPlayer, mover), config);
}

Signals speed(const Signals& signals) {
    return test::only(signals, kPlayer, "movement.speed");
}

Mover speed_hacker() {
    return Mover().run(5.0, 2.0).run(32.0, 6.0);
}

// An honest runner close to the limit through a 0.8 s lag spike and its burst.
MatchScript lagging_runner() {
    MatchScript script;
    script.add(kPlayer, test::lag_spike(Mover().run(19.5, 10.0).updates(), 4.0, 0.8));
    return script;
}

// The same runner whose first update after the silence arrives late and alone.
MatchScript late_runner() {
    MatchScript script;
    script.add(kPlayer, test::late_update(Mover().run(19.5, 10.0).updates(), 4.0, 0.8));
    return script;
}

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

// ---------------------------------------------------------------- each key matters

TEST(ConfigKeys, MaxSpeedMovesTheLimit) {
    EXPECT_FALSE(speed(run(speed_hacker(), ConfigValue::table({}))).empty());
    EXPECT_TRUE(speed(run(speed_hacker(), movement_config({{"max_speed", 40.0}}))).empty());
    // ... and the limit the evidence quotes.
    const Signals slow = speed(run(Mover().run(19.5, 5.0), movement_config({{"max_speed", 10}})));
    ASSERT_FALSE(slow.empty());
    EXPECT_NEAR(test::evidence_number(slow.back().evidence, "limit_mps").value_or(0), 11.0, 1e-9);
}

TEST(ConfigKeys, ToleranceWidensTheLimit) {
    // 26 m/s against max_speed 20: over the limit at 1.1 (22 m/s) and 1.25 (25 m/s), under it
    // at 1.35 (27 m/s).
    const Mover fast = Mover().run(5.0, 2.0).run(26.0, 6.0);
    EXPECT_FALSE(speed(run(fast, ConfigValue::table({}))).empty());
    const Signals over = speed(run(fast, movement_config({{"tolerance", 1.25}})));
    ASSERT_FALSE(over.empty());
    EXPECT_NEAR(test::evidence_number(over.back().evidence, "limit_mps").value_or(0), 25.0, 1e-9);
    EXPECT_TRUE(speed(run(fast, movement_config({{"tolerance", 1.35}}))).empty());
}

TEST(ConfigKeys, WindowAveragesAShortDash) {
    // One second at 35 m/s between walks: over 1 s it is a speed, over 4 s an average of 12.
    const Mover dash = Mover().run(5.0, 5.0).run(35.0, 1.0).run(5.0, 5.0);
    EXPECT_FALSE(speed(run(dash, ConfigValue::table({}))).empty());
    EXPECT_TRUE(speed(run(dash, movement_config({{"window_s", 4.0}}))).empty());
}

TEST(ConfigKeys, MaxLagAllowanceIsWhatAbsorbsALateUpdate) {
    // 0.8 s of silence, then one update sent 0.75 s before it arrived (the others lost):
    // a window starting at it covers 1.75 s of running in 1 s of relay time.
    const auto updates = test::late_update(Mover().run(19.5, 10.0).updates(), 4.0, 0.8);
    ASSERT_EQ(updates.size(), 201u - 15u) << "the match does not have the shape of a late update";
    ASSERT_EQ(updates[81].sent_us, test::us(4.05));
    ASSERT_EQ(updates[81].received_us, test::us(4.8));
    EXPECT_TRUE(test::run_match(late_runner()).empty());
    // With a cap of 0 (no lag tolerance at all), its old position looks like a sprint.
    EXPECT_FALSE(
        speed(test::run_match(late_runner(), movement_config({{"max_lag_allowance_s", 0.0}})))
            .empty());
    // A silence longer than a cap above 0 is no longer under-allowed for (it once was, and
    // read as 32 m/s after 4 s of silence at the default cap): the windows that would start
    // at the late update start before the silence instead, and span it.
    EXPECT_TRUE(
        test::run_match(late_runner(), movement_config({{"max_lag_allowance_s", 0.3}})).empty());
}

TEST(ConfigKeys, ABurstNeedsNoAllowance) {
    // The burst's updates arrive together: the window starts from its last one, whose
    // position is as recent as its arrival, so no allowance is needed.
    EXPECT_TRUE(test::run_match(lagging_runner()).empty());
    EXPECT_TRUE(
        test::run_match(lagging_runner(), movement_config({{"max_lag_allowance_s", 0.0}})).empty());
}

TEST(ConfigKeys, TeleportDistanceIsTheSingleUpdateLimit) {
    const Mover jumper = Mover().run(5.0, 3.0).jump({0, 60, 0}).run(5.0, 3.0);
    auto kinds = [](const Signals& signals) {
        std::vector<std::string> out;
        for (const auto& s : test::only(signals, kPlayer, "movement.teleport"))
            out.push_back(test::evidence_string(s.evidence, "kind").value_or("?"));
        return out;
    };
    EXPECT_EQ(kinds(run(jumper, ConfigValue::table({}))), std::vector<std::string>{"window"});
    EXPECT_EQ(kinds(run(jumper, movement_config({{"teleport_distance", 50.0}}))),
              std::vector<std::string>{"single_update"});
}

TEST(ConfigKeys, MinSamplesSetsFullConfidence) {
    const Signals full = speed(run(speed_hacker(), ConfigValue::table({})));
    ASSERT_FALSE(full.empty());
    EXPECT_DOUBLE_EQ(full.back().confidence, 1.0);
    // A 1 s window at 20 Hz holds 21 updates.
    const Signals partial = speed(run(speed_hacker(), movement_config({{"min_samples", 100}})));
    ASSERT_FALSE(partial.empty());
    EXPECT_NEAR(partial.back().confidence, 0.21, 1e-9);
}

TEST(ConfigKeys, MaxAccelerationMovesTheLimit) {
    // From standing to 70 m/s at once: over 50 × 1.1, under 70 × 1.1 (the speed limit is
    // raised out of the way).
    const Mover dash = Mover().run(0, 3).run(70, 3);
    auto accel = [&](ConfigValue::Table members) {
        members.emplace_back("max_speed", 200.0);
        return test::only(run(dash, movement_config(std::move(members))), kPlayer,
                          "movement.acceleration");
    };
    const Signals over = accel({});
    ASSERT_FALSE(over.empty());
    EXPECT_NEAR(test::evidence_number(over.back().evidence, "limit_mps2").value_or(0), 55.0, 1e-9);
    EXPECT_TRUE(accel({{"max_acceleration", 70.0}}).empty());
}

TEST(ConfigKeys, SustainedSecondsSetsHowLongIsARun) {
    // 30 m/s for 6 s: over the speed limit, window after window, for 5.6 s.
    const Mover hacker = Mover().run(5, 2).run(30, 6).run(5, 2);
    auto sustained = [&](ConfigValue::Table members) {
        return test::only(run(hacker, movement_config(std::move(members))), kPlayer,
                          "movement.sustained_speed");
    };
    EXPECT_FALSE(sustained({}).empty());
    EXPECT_FALSE(sustained({{"sustained_s", 5.5}}).empty());
    EXPECT_TRUE(sustained({{"sustained_s", 5.6}}).empty());
}

TEST(ConfigKeys, JumpTimeAndGraceSetTheAirborneLimit) {
    // 3 s off the ground (2.95 s by the relay's clock): over 1 + 1 s, under 2 + 1 s or 1 + 2 s.
    Mover flyer;
    flyer.report_ground().run(5, 2).fly(5, 5, 3).land().run(5, 2);
    auto airborne = [&](ConfigValue::Table members) {
        return test::only(run(flyer, movement_config(std::move(members))), kPlayer,
                          "movement.airborne");
    };
    const Signals over = airborne({});
    ASSERT_FALSE(over.empty());
    EXPECT_EQ(test::evidence_number(over.back().evidence, "limit_s"), 2.0);
    EXPECT_EQ(test::evidence_number(over.back().evidence, "grace_s"), 1.0);
    EXPECT_TRUE(airborne({{"max_jump_time_s", 2.0}}).empty());
    EXPECT_TRUE(airborne({{"airborne_grace_s", 2.0}}).empty());
    EXPECT_FALSE(airborne({{"max_jump_time_s", 1.5}, {"airborne_grace_s", 1.4}}).empty());
}

TEST(ConfigKeys, BelowTerrainSetsTheDepth) {
    Mover diver;
    diver.report_ground().run(5, 2).fly(5, -2, 3).land().run(5, 2);
    auto below = [&](ConfigValue::Table members) {
        return test::only(run(diver, movement_config(std::move(members))), kPlayer,
                          "movement.below_terrain");
    };
    EXPECT_FALSE(below({}).empty());
    EXPECT_FALSE(below({{"below_terrain_m", 1.9}}).empty());
    EXPECT_TRUE(below({{"below_terrain_m", 2.0}}).empty());
}

// ---------------------------------------------------------------- bad values

struct BadValue {
    std::string name;
    std::string key;
    ConfigValue value;
};

void PrintTo(const BadValue& c, std::ostream* os) {
    *os << c.name;
}

class BadValues : public ::testing::TestWithParam<BadValue> {};

TEST_P(BadValues, AreRefusedNamingTheKey) {
    const BadValue& c = GetParam();
    test::Harness harness(movement_config({{c.key, c.value}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movement." + c.key + ": ")) << harness.error();
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    Ranges, BadValues,
    ::testing::Values(BadValue{"NegativeMaxSpeed", "max_speed", -3.0},
                      BadValue{"ZeroMaxSpeed", "max_speed", 0.0},
                      BadValue{"InfiniteMaxSpeed", "max_speed", kInf},
                      BadValue{"ToleranceUnderOne", "tolerance", 0.5},
                      BadValue{"ToleranceJustUnderOne", "tolerance", 0.999},
                      BadValue{"ToleranceOverTen", "tolerance", 10.5},
                      BadValue{"NaNTolerance", "tolerance", kNaN},
                      BadValue{"WindowTooShort", "window_s", 0.05},
                      BadValue{"WindowTooLong", "window_s", 61.0},
                      BadValue{"NegativeLagAllowance", "max_lag_allowance_s", -0.1},
                      BadValue{"LagAllowanceOverTen", "max_lag_allowance_s", 10.5},
                      BadValue{"ZeroTeleportDistance", "teleport_distance", 0.0},
                      BadValue{"NegativeTeleportDistance", "teleport_distance", -5.0},
                      BadValue{"ZeroMinSamples", "min_samples", 0},
                      BadValue{"TooManyMinSamples", "min_samples", 1001},
                      BadValue{"ZeroBurstGap", "burst_gap_s", 0.0},
                      BadValue{"TooLongABurstGap", "burst_gap_s", 0.051},
                      BadValue{"ZeroMaxAcceleration", "max_acceleration", 0.0},
                      BadValue{"NegativeMaxAcceleration", "max_acceleration", -50.0},
                      BadValue{"NaNMaxAcceleration", "max_acceleration", kNaN},
                      BadValue{"SustainedTooShort", "sustained_s", 0.05},
                      BadValue{"SustainedTooLong", "sustained_s", 3601.0},
                      BadValue{"JumpTimeTooShort", "max_jump_time_s", 0.05},
                      BadValue{"JumpTimeTooLong", "max_jump_time_s", 61.0},
                      BadValue{"NegativeGrace", "airborne_grace_s", -0.1},
                      BadValue{"GraceTooLong", "airborne_grace_s", 61.0},
                      BadValue{"ZeroBelowTerrain", "below_terrain_m", 0.0},
                      BadValue{"NegativeBelowTerrain", "below_terrain_m", -1.0},
                      BadValue{"BelowTerrainTooDeep", "below_terrain_m", 101.0}),
    [](const auto& row) { return row.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Types, BadValues,
    ::testing::Values(
        BadValue{"StringMaxSpeed", "max_speed", "fast"},
        BadValue{"BoolTolerance", "tolerance", true},
        BadValue{"TableWindow", "window_s", ConfigValue::table({{"s", 1.0}})},
        BadValue{"ArrayLagAllowance", "max_lag_allowance_s", ConfigValue::array({1.0})},
        BadValue{"StringTeleportDistance", "teleport_distance", "100"},
        BadValue{"FractionalMinSamples", "min_samples", 2.5},
        BadValue{"StringMaxAcceleration", "max_acceleration", "fast"},
        BadValue{"BoolSustained", "sustained_s", false},
        BadValue{"StringJumpTime", "max_jump_time_s", "1s"},
        BadValue{"ArrayGrace", "airborne_grace_s", ConfigValue::array({1.0})},
        BadValue{"TableBelowTerrain", "below_terrain_m", ConfigValue::table({{"m", 1.0}})}),
    [](const auto& row) { return row.param.name; });

struct GoodValue {
    std::string name;
    std::string key;
    ConfigValue value;
};

void PrintTo(const GoodValue& c, std::ostream* os) {
    *os << c.name;
}

class EdgeValues : public ::testing::TestWithParam<GoodValue> {};

TEST_P(EdgeValues, AreAccepted) {
    const GoodValue& c = GetParam();
    test::Harness harness(movement_config({{c.key, c.value}}));
    EXPECT_TRUE(harness.ok()) << harness.error();
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, EdgeValues,
    ::testing::Values(
        GoodValue{"IntegerMaxSpeed", "max_speed", 25}, GoodValue{"TinyMaxSpeed", "max_speed", 1e-3},
        GoodValue{"ToleranceOne", "tolerance", 1.0}, GoodValue{"ToleranceTen", "tolerance", 10.0},
        GoodValue{"ShortestWindow", "window_s", 0.1}, GoodValue{"LongestWindow", "window_s", 60.0},
        GoodValue{"NoLagAllowance", "max_lag_allowance_s", 0.0},
        GoodValue{"LongestLagAllowance", "max_lag_allowance_s", 10.0},
        GoodValue{"OneMinSample", "min_samples", 1},
        GoodValue{"MostMinSamples", "min_samples", 1000},
        GoodValue{"LongestBurstGap", "burst_gap_s", 0.05},
        GoodValue{"TinyMaxAcceleration", "max_acceleration", 1e-3},
        GoodValue{"ShortestSustained", "sustained_s", 0.1},
        GoodValue{"LongestSustained", "sustained_s", 3600},
        GoodValue{"ShortestJump", "max_jump_time_s", 0.1},
        GoodValue{"LongestJump", "max_jump_time_s", 60.0},
        GoodValue{"NoGrace", "airborne_grace_s", 0.0},
        GoodValue{"LongestGrace", "airborne_grace_s", 60.0},
        GoodValue{"ShallowBelowTerrain", "below_terrain_m", 0.01},
        GoodValue{"DeepestBelowTerrain", "below_terrain_m", 100.0}),
    [](const auto& row) { return row.param.name; });

TEST(ConfigTable, DefaultsWithoutAMovementTable) {
    test::Harness harness;
    EXPECT_TRUE(harness.ok()) << harness.error();
    test::Harness empty(movement_config({}));
    EXPECT_TRUE(empty.ok()) << empty.error();
}

TEST(ConfigTable, MisspeltKeyIsRefused) {
    test::Harness harness(movement_config({{"max_sped", 25.0}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movement.max_sped: ")) << harness.error();
}

TEST(ConfigTable, UnknownTableIsRefused) {
    test::Harness harness(ConfigValue::table({{"movment", ConfigValue::table({})}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movment: ")) << harness.error();
}

TEST(ConfigTable, MovementMustBeATable) {
    test::Harness harness(ConfigValue::table({{"movement", 20.0}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movement: ")) << harness.error();
}

// ---------------------------------------------------------------- configure

TEST(Reconfigure, AppliesANewLimit) {
    test::Harness harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    const Signals before =
        test::feed_all(harness, MatchScript("r", 1).add(kPlayer, speed_hacker()).batches());
    EXPECT_FALSE(speed(before).empty());

    ASSERT_EQ(harness.reconfigure(movement_config({{"max_speed", 40.0}})), ARB_OK)
        << harness.error();
    const Signals after =
        test::feed_all(harness, MatchScript("r", 2).add(kPlayer, speed_hacker()).batches());
    EXPECT_TRUE(speed(after).empty());
}

TEST(Reconfigure, BadTableLeavesTheOldOneInForce) {
    test::Harness harness(movement_config({{"max_speed", 40.0}}));
    ASSERT_TRUE(harness.ok()) << harness.error();
    // max_speed is good and read first: applying it alone would report the hacker below.
    EXPECT_EQ(harness.reconfigure(movement_config({{"max_speed", 10.0}, {"tolerance", 0.5}})),
              ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movement.tolerance: ")) << harness.error();
    EXPECT_EQ(harness.reconfigure(movement_config({{"max_speed", 10.0}, {"max_sped", 1.0}})),
              ARB_ERR_CONFIG);
    EXPECT_TRUE(starts_with(harness.error(), "movement.max_sped: ")) << harness.error();

    const Signals signals =
        test::feed_all(harness, MatchScript().add(kPlayer, speed_hacker()).batches());
    EXPECT_TRUE(speed(signals).empty()) << "a refused config changed the limits";
}

}  // namespace
}  // namespace arbiter::reference
