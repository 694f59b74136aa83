// The plugin's table of server_config.toml: the defaults, every key, and errors that name
// the key that is wrong.
#include <gtest/gtest.h>

#include "run_match.hpp"

namespace {

using arbiter::ConfigValue;
using lagpool_test::Harness;

ConfigValue with(ConfigValue::Table members) {
    return ConfigValue::table(std::move(members));
}

ConfigValue kinds(ConfigValue::Table members) {
    return with({{"kinds", ConfigValue::table(std::move(members))}});
}

// The error a config makes the analyzer refuse with, "" when it is accepted.
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
    EXPECT_STREQ(negotiation.name, "lagpool");
    EXPECT_EQ(negotiation.model_class, ARB_CLASS_VALIDATION);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_SHARD_BY_MATCH);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_STATE);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_RECONFIGURE);
}

TEST(Config, EveryKeyIsAccepted) {
    EXPECT_EQ(error_of(with({
                  {"min_capacity_s", 4.0},
                  {"lag_factor", 2.5},
                  {"lag_halving_s", 30.0},
                  {"teleport_grace_s", 2.0},
                  {"window_s", 120.0},
                  {"burst_s", 0.05},
                  {"min_episodes", 4},
                  {"confident_episodes", 20},
                  {"overdraw_scale_s", 2.0},
                  {"kinds",
                   ConfigValue::table({
                       {"movement", ConfigValue::table({{"cost", "distance"},
                                                        {"max_walk_speed", 4.0},
                                                        {"max_jump_speed", 13.0},
                                                        {"tolerance", 1.0}})},
                       {"dig", ConfigValue::table(
                                   {{"cost", "fixed"}, {"seconds", 0.15}, {"tolerance", 1.1}})},
                       {"interact", ConfigValue::table({{"seconds", 0.1}})},
                       {"dig_time", ConfigValue::table({{"cost", "stated"}, {"tolerance", 1.3}})},
                   })},
              })),
              "");
}

TEST(Config, UnknownKeysAreRefusedByName) {
    EXPECT_NE(error_of(with({{"window", 30.0}})).find("window: unknown key"), std::string::npos);
    EXPECT_NE(error_of(kinds({{"dig", ConfigValue::table({{"seconds", 0.2}, {"second", 0.1}})}}))
                  .find("kinds.dig.second: unknown key"),
              std::string::npos);
    // A key of the other cost model is unknown too.
    EXPECT_NE(
        error_of(kinds({{"dig", ConfigValue::table({{"seconds", 0.2}, {"max_walk_speed", 5.0}})}}))
            .find("kinds.dig.max_walk_speed: unknown key"),
        std::string::npos);
}

TEST(Config, ValuesOutOfRangeAreRefusedByName) {
    const std::pair<ConfigValue, std::string> cases[] = {
        {with({{"min_capacity_s", 0.0}}), "min_capacity_s: expected"},
        {with({{"lag_factor", 0.5}}), "lag_factor: expected"},
        {with({{"lag_halving_s", -60.0}}), "lag_halving_s: expected"},
        {with({{"teleport_grace_s", -1.0}}), "teleport_grace_s: expected"},
        {with({{"window_s", 0.0}}), "window_s: expected"},
        {with({{"min_episodes", 1}}), "min_episodes: expected"},  // one failed grab never scores
        {with({{"min_episodes", 2.5}}), "min_episodes: expected an integer"},
        {with({{"overdraw_scale_s", 0.0}}), "overdraw_scale_s: expected"},
        {with({{"lag_halving_s", "a minute"}}), "lag_halving_s: expected"},
        {kinds({{"movement", ConfigValue::table({{"tolerance", 0.9}})}}),
         "kinds.movement.tolerance: expected"},
        {kinds({{"movement", ConfigValue::table({{"max_walk_speed", 0.0}})}}),
         "kinds.movement.max_walk_speed: expected"},
        {kinds({{"dig", ConfigValue::table({{"seconds", 0.0}})}}), "kinds.dig.seconds: expected"},
    };
    for (const auto& [config, expected] : cases) {
        const std::string error = error_of(config);
        EXPECT_NE(error.find(expected), std::string::npos)
            << "expected '" << expected << "', got '" << error << "'";
    }
}

TEST(Config, KindsAreCheckedByName) {
    const std::pair<ConfigValue, std::string> cases[] = {
        {kinds({{"dig", ConfigValue::table({{"cost", "distance"}})}}),
         "kinds.dig.cost: \"distance\" is for"},
        {kinds({{"movement", ConfigValue::table({{"cost", "fixed"}, {"seconds", 1.0}})}}),
         "kinds.movement.cost:"},
        {kinds({{"dig", ConfigValue::table({{"cost", "by_feel"}, {"seconds", 1.0}})}}),
         "kinds.dig.cost: expected"},
        {kinds({{"place", ConfigValue::table({{"cost", "fixed"}})}}),
         "kinds.place.seconds: required"},
        {kinds({{"Dig", ConfigValue::table({{"seconds", 1.0}})}}), "kinds.Dig: a kind's name"},
        {kinds({{"dig", 0.15}}), "kinds.dig: expected a table"},
        {kinds({}), "kinds: names no kind"},
        // A stated kind has no time per action, and the movement kind is never stated.
        {kinds({{"dig_time", ConfigValue::table({{"cost", "stated"}, {"seconds", 1.0}})}}),
         "kinds.dig_time.seconds: unknown key"},
        {kinds({{"movement", ConfigValue::table({{"cost", "stated"}})}}), "kinds.movement.cost:"},
        {kinds({{"dig_time", ConfigValue::table({{"cost", "stated"}, {"tolerance", 0.9}})}}),
         "kinds.dig_time.tolerance: expected"},
    };
    for (const auto& [config, expected] : cases) {
        const std::string error = error_of(config);
        EXPECT_NE(error.find(expected), std::string::npos)
            << "expected '" << expected << "', got '" << error << "'";
    }
}

TEST(Config, AKindsTableReplacesTheDefaults) {
    using namespace lagpool_test;
    Timeline timeline;
    add_match_frame(timeline, {1}, 30 * kSecond);
    add_actor(timeline, {.player = 1, .from_us = 0, .to_us = 30 * kSecond, .interval_us = 20'000});
    // Movement alone: the dig bot's orders are of no configured kind.
    auto movement_only = run(timeline, kinds({{"movement", ConfigValue::table({})}}));
    EXPECT_TRUE(movement_only->signals().empty());
    auto defaults = run(timeline);
    EXPECT_FALSE(defaults->signals().empty());
}

TEST(Config, ABadReconfigureIsRefusedByName) {
    Harness harness;
    ASSERT_TRUE(harness.ok());
    EXPECT_EQ(harness.reconfigure(with({{"window_s", 30.0}})), ARB_OK);
    EXPECT_EQ(harness.reconfigure(with({{"window_s", -1.0}})), ARB_ERR_CONFIG);
    EXPECT_NE(harness.error().find("window_s"), std::string::npos);
}

}  // namespace
