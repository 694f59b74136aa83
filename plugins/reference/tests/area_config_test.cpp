// The config of the hits, items, stats, sessions and clock tables: a bad value is refused
// when the plugin is created, naming the key; the tables' limits reach the checks.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "event_script.hpp"

namespace arbiter::reference {
namespace {

struct BadAreaValue {
    std::string name;
    ConfigValue config;
    std::string key;  // the full key the error must start with
};
void PrintTo(const BadAreaValue& c, std::ostream* os) {
    *os << c.name;
}

ConfigValue in(const std::string& area, const std::string& key, ConfigValue value) {
    return test::area_config(area, {{key, std::move(value)}});
}

ConfigValue weapon(ConfigValue::Table members) {
    return test::area_config(
        "hits", {{"weapons", ConfigValue::table({{"rifle", ConfigValue::table(members)}})}});
}

ConfigValue item(ConfigValue::Table members) {
    return test::area_config(
        "items", {{"items", ConfigValue::table({{"crown", ConfigValue::table(members)}})}});
}

class BadAreaValues : public ::testing::TestWithParam<BadAreaValue> {};
TEST_P(BadAreaValues, AreRefusedNamingTheKey) {
    test::Harness harness(GetParam().config);
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(harness.error().rfind(GetParam().key + ": ", 0), 0u) << harness.error();
}
INSTANTIATE_TEST_SUITE_P(
    Areas, BadAreaValues,
    ::testing::Values(
        BadAreaValue{"ZeroDefaultRange", in("hits", "default_range_m", 0.0),
                     "hits.default_range_m"},
        BadAreaValue{"RangeToleranceUnderOne", in("hits", "range_tolerance", 0.9),
                     "hits.range_tolerance"},
        BadAreaValue{"NegativeTimingWindow", in("hits", "timing_window_s", -0.1),
                     "hits.timing_window_s"},
        BadAreaValue{"FireWindowTooShort", in("hits", "fire_window_s", 0.01), "hits.fire_window_s"},
        BadAreaValue{"UnknownHitsKey", in("hits", "rang", 1.0), "hits.rang"},
        BadAreaValue{"NegativeWeaponRange", weapon({{"range_m", -1.0}}),
                     "hits.weapons.rifle.range_m"},
        BadAreaValue{"StringDamage", weapon({{"max_damage", "lots"}}),
                     "hits.weapons.rifle.max_damage"},
        BadAreaValue{"ZeroRoundsPerMinute", weapon({{"rounds_per_minute", 0.0}}),
                     "hits.weapons.rifle.rounds_per_minute"},
        BadAreaValue{"BothFireRates",
                     weapon({{"fire_interval_s", 0.1}, {"rounds_per_minute", 600.0}}),
                     "hits.weapons.rifle.rounds_per_minute"},
        BadAreaValue{"UnknownWeaponKey", weapon({{"rpm", 600.0}}), "hits.weapons.rifle.rpm"},
        BadAreaValue{"WeaponNotATable",
                     test::area_config("hits", {{"weapons", ConfigValue::table({{"rifle", 3.0}})}}),
                     "hits.weapons.rifle"},
        BadAreaValue{"ZeroStack", item({{"stack", 0}}), "items.items.crown.stack"},
        BadAreaValue{"UniqueStackOfTwo", item({{"unique", true}, {"stack", 2}}),
                     "items.items.crown.stack"},
        BadAreaValue{"NegativeRespawn", item({{"respawn_s", -1.0}}), "items.items.crown.respawn_s"},
        BadAreaValue{"StringKnownOnly", in("items", "known_only", "yes"), "items.known_only"},
        BadAreaValue{"NumberRateSources", in("items", "rate_sources", ConfigValue::array({1.0})),
                     "items.rate_sources[0]"},
        BadAreaValue{"ZeroExperienceMaximum", in("stats", "max_experience_per_hour", 0.0),
                     "stats.max_experience_per_hour"},
        BadAreaValue{"ZeroMinHitsTaken", in("stats", "min_hits_taken", 0), "stats.min_hits_taken"},
        BadAreaValue{"NegativeReconnects", in("sessions", "max_reconnects", -1),
                     "sessions.max_reconnects"},
        BadAreaValue{"VersionsNotAList", in("sessions", "client_versions", "1.4.2"),
                     "sessions.client_versions"},
        BadAreaValue{"RateOfOne", in("clock", "max_rate", 1.0), "clock.max_rate"},
        BadAreaValue{"NegativeAheadTicks", in("clock", "ahead_ticks", -1), "clock.ahead_ticks"},
        BadAreaValue{
            "MinWindowOverWindow",
            test::area_config("clock", {{"rate_window_s", 10.0}, {"rate_min_window_s", 20.0}}),
            "clock.rate_min_window_s"},
        BadAreaValue{"NegativeLeeway", in("clock", "run_length_leeway_s", -1.0),
                     "clock.run_length_leeway_s"}),
    [](const auto& row) { return row.param.name; });

TEST(AreaConfig, TheDefaultsAndAFullTableAreAccepted) {
    EXPECT_TRUE(test::Harness().ok());
    const ConfigValue full = ConfigValue::table(
        {{"hits", ConfigValue::table({{"weapons", ConfigValue::table(test::weapons_table())}})},
         {"items",
          ConfigValue::table(
              {{"known_only", false},
               {"rate_sources", ConfigValue::array({"pickup", "loot"})},
               {"items", ConfigValue::table(
                             {{"crown", ConfigValue::table({{"unique", true}, {"stack", 1}})}})}})},
         {"stats", ConfigValue::table({{"max_experience_per_hour", 5000.0}})},
         {"sessions", ConfigValue::table({{"handshakes", ConfigValue::array({"arena/7"})}})},
         {"clock", ConfigValue::table({{"tick_rate_hz", 22.4}})}});
    test::Harness harness(full);
    EXPECT_TRUE(harness.ok()) << harness.error();
}

// The clock's minimum window must be reachable: the closed trend spans at most the window
// less two steps. A config written for the old 30 s window, with no minimum, stays valid.
TEST(AreaConfig, TheClockWindowsAreOnesTheTrendCanReach) {
    EXPECT_TRUE(test::Harness(test::area_config("clock", {{"rate_window_s", 30.0}})).ok());
    for (const auto& [window, minimum] :
         std::vector<std::pair<double, double>>{{60.0, 60.0}, {60.0, 51.0}, {60.0, 9.0}}) {
        test::Harness harness(test::area_config(
            "clock", {{"rate_window_s", window}, {"rate_min_window_s", minimum}}));
        EXPECT_FALSE(harness.ok()) << window << " " << minimum;
        EXPECT_NE(harness.error().find("clock.rate_min_window_s"), std::string::npos)
            << harness.error();
    }
    EXPECT_TRUE(test::Harness(test::area_config(
                                  "clock", {{"rate_window_s", 60.0}, {"rate_min_window_s", 50.0}}))
                    .ok());
}

TEST(AreaConfig, RoundsPerMinuteSetsTheFireInterval) {
    // 240 rounds a minute: 4 a second. Six shots a second for 3 s is too many; four is not.
    for (const auto& [interval_s, flagged] :
         std::vector<std::pair<double, bool>>{{0.25, false}, {1.0 / 6.0, true}}) {
        test::EventScript script;
        for (int i = 0; i * interval_s < 3.0; ++i) {
            build::Hit hit;
            hit.weapon = "pistol";
            hit.range_m = 10.0f;
            script.at(1.0 + i * interval_s, 1, hit);
        }
        const auto signals = test::only(
            test::run_events(script,
                             test::area_config(
                                 "hits", {{"weapons", ConfigValue::table(test::weapons_table())}})),
            1, "hits.fire_rate");
        EXPECT_EQ(!signals.empty(), flagged) << interval_s;
    }
}

TEST(AreaConfig, MaxExperiencePerHourMovesTheLimit) {
    // 10 experience a second: over 5000 an hour, under the default 36000.
    test::EventScript script;
    double xp = 0;
    for (int i = 0; i < 100; ++i) {
        build::Stat stat;
        stat.stat = "experience";
        stat.delta = 10;
        stat.value_after = xp += 10;
        script.at(1.0 + i, 1, stat);
    }
    EXPECT_TRUE(test::run_events(script).empty());
    EXPECT_FALSE(
        test::run_events(script, test::area_config("stats", {{"max_experience_per_hour", 5000.0}}))
            .empty());
}

}  // namespace
}  // namespace arbiter::reference
