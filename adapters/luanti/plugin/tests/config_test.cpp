// The plugin's table of server_config.toml: the defaults, every key, and errors that name
// the key that is wrong.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include <arbiter/sdk/testing.hpp>

#include "luanti_analyzer.hpp"

namespace {

using arbiter::ConfigValue;
using Harness = arbiter::testing::Harness<arbiter::luanti::LuantiAnalyzer>;

ConfigValue with(ConfigValue::Table members) {
    return ConfigValue::table(std::move(members));
}

std::string error_of(const ConfigValue& config) {
    Harness harness(config);
    if (harness.ok()) return "";
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG) << harness.error();
    return harness.error();
}

TEST(Config, TheDefaultsNeedNoTable) {
    Harness harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    const auto& negotiation = harness.negotiation();
    EXPECT_STREQ(negotiation.name, "luanti");
    EXPECT_EQ(negotiation.model_class, ARB_CLASS_VALIDATION);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_SHARD_BY_MATCH);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_STATE);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_RECONFIGURE);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_MATCH_END);
}

TEST(Config, EveryKeyIsAccepted) {
    EXPECT_EQ(error_of(with({{"window_s", 2.0},
                             {"walk_speed", 4.5},
                             {"fast_speed", 25.0},
                             {"tolerance", 1.5},
                             {"sustained_s", 3.0},
                             {"jump_speed", 7.0},
                             {"gravity", 10.0},
                             {"hover_grace_s", 2.0},
                             {"fall_look_s", 0.4},
                             {"fall_drop_m", 0.2},
                             {"noclip_distance_m", 3.0},
                             {"max_gap_s", 5.0}})),
              "");
}

TEST(Config, UnknownKeysAreRefusedByName) {
    EXPECT_NE(error_of(with({{"walk_sped", 4.0}})).find("walk_sped: unknown key"),
              std::string::npos);
}

TEST(Config, ValuesAtTheirLimitsAreAcceptedAndPastThemRefusedByName) {
    const std::pair<ConfigValue, std::string> refused[] = {
        {with({{"window_s", 0.19}}), "window_s: expected"},
        {with({{"walk_speed", 0.0}}), "walk_speed: expected"},
        {with({{"fast_speed", -1.0}}), "fast_speed: expected"},
        {with({{"tolerance", 0.99}}), "tolerance: expected"},
        {with({{"sustained_s", -0.1}}), "sustained_s: expected"},
        {with({{"gravity", 0.0}}), "gravity: expected"},
        {with({{"hover_grace_s", 601.0}}), "hover_grace_s: expected"},
        {with({{"fall_look_s", 0.05}}), "fall_look_s: expected"},
        {with({{"noclip_distance_m", 0.0}}), "noclip_distance_m: expected"},
        {with({{"max_gap_s", 0.1}}), "max_gap_s: expected"},
        {with({{"tolerance", "high"}}), "tolerance: expected"},
    };
    for (const auto& [config, expected] : refused) {
        const std::string error = error_of(config);
        EXPECT_NE(error.find(expected), std::string::npos)
            << "expected '" << expected << "', got '" << error << "'";
    }
    const ConfigValue accepted[] = {
        with({{"window_s", 0.2}}),    with({{"tolerance", 1.0}}),     with({{"sustained_s", 0.0}}),
        with({{"jump_speed", 0.0}}),  with({{"hover_grace_s", 0.0}}), with({{"fall_drop_m", 0.0}}),
        with({{"max_gap_s", 600.0}}),
    };
    for (const auto& config : accepted)
        EXPECT_EQ(error_of(config), "");
}

TEST(Config, ABadReconfigureIsRefusedByNameAndChangesNothing) {
    Harness harness;
    ASSERT_TRUE(harness.ok());
    EXPECT_EQ(harness.reconfigure(with({{"walk_speed", 5.0}})), ARB_OK);
    EXPECT_EQ(harness.reconfigure(with({{"walk_speed", -5.0}})), ARB_ERR_CONFIG);
    EXPECT_NE(harness.error().find("walk_speed"), std::string::npos);
}

}  // namespace
