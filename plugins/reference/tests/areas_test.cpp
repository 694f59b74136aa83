// Items, stats, sessions and the relay clock: each check at and around its limits, then
// honest and cheating players through the analyzer, with the evidence a reviewer reads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "clock.hpp"
#include "event_script.hpp"
#include "evidence_reader.hpp"
#include "items.hpp"
#include "sessions.hpp"
#include "stats.hpp"

namespace arbiter::reference {
namespace {

using test::EventScript;
using test::Signals;

std::deque<int64_t> every(double interval_s, int count) {
    std::deque<int64_t> out;
    for (int i = 0; i < count; ++i)
        out.push_back(std::llround(i * interval_s * 1e6));
    return out;
}

double weighted(const Signals& signals) {
    double best = 0;
    for (const auto& s : signals)
        best = std::max(best, s.score * s.confidence);
    return best;
}

// ---------------------------------------------------------------- items

struct CountCase {
    std::string name;
    int64_t count;
    bool flagged;
};
void PrintTo(const CountCase& c, std::ostream* os) {
    *os << c.name;
}

class StackLimit : public ::testing::TestWithParam<CountCase> {};
TEST_P(StackLimit, FlagsOnlyPastTheStack) {
    const auto result = check_stack(GetParam().count, ItemLimits{.stack = 64});
    EXPECT_EQ(result.has_value(), GetParam().flagged);
    if (result) {
        EXPECT_GE(result->score, 0.8);  // one over is already impossible
    }
}
INSTANTIATE_TEST_SUITE_P(Items, StackLimit,
                         ::testing::Values(CountCase{"Empty", 0, false},
                                           CountCase{"Full", 64, false},
                                           CountCase{"OneOver", 65, true},
                                           CountCase{"Doubled", 128, true}),
                         [](const auto& row) { return row.param.name; });

class UniqueItem : public ::testing::TestWithParam<CountCase> {};
TEST_P(UniqueItem, FlagsASecondCopy) {
    EXPECT_EQ(check_unique(GetParam().count, ItemLimits{.stack = 1, .unique = true}).has_value(),
              GetParam().flagged);
    EXPECT_FALSE(check_unique(GetParam().count, ItemLimits{.stack = 64}).has_value());
}
INSTANTIATE_TEST_SUITE_P(Items, UniqueItem,
                         ::testing::Values(CountCase{"None", 0, false}, CountCase{"One", 1, false},
                                           CountCase{"Two", 2, true}),
                         [](const auto& row) { return row.param.name; });

TEST(UnknownItem, OnlyWhenTheTableIsInForce) {
    ItemSettings settings;
    EXPECT_FALSE(is_unknown_item("anything", settings));  // no table: the game gave none
    settings.items["wood"] = ItemLimits{.stack = 64};
    EXPECT_FALSE(is_unknown_item("wood", settings));
    EXPECT_TRUE(is_unknown_item("wood2", settings));
    settings.known_only = false;
    EXPECT_FALSE(is_unknown_item("wood2", settings));
}

struct AcquisitionCase {
    std::string name;
    std::deque<int64_t> times;
    double allowance_s;
    bool flagged;
};
void PrintTo(const AcquisitionCase& c, std::ostream* os) {
    *os << c.name;
}
class AcquisitionRate : public ::testing::TestWithParam<AcquisitionCase> {};
TEST_P(AcquisitionRate, AllowsOnePerRespawn) {
    const ItemLimits potion{.stack = 8, .respawn_s = 10.0};
    EXPECT_EQ(
        check_acquisition_rate(GetParam().times, potion, GetParam().allowance_s, ItemSettings{})
            .has_value(),
        GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(
    Items, AcquisitionRate,
    ::testing::Values(AcquisitionCase{"AtTheRespawn", every(10.0, 20), 0.0, false},
                      AcquisitionCase{"SlightlyFaster", every(9.9, 20), 0.0, true},
                      AcquisitionCase{"TwiceAsFast", every(5.0, 20), 0.0, true},
                      // Two pickups 9 s apart arriving in one burst after a 2 s silence.
                      AcquisitionCase{"ExcusedBySilence", {0, 9'000'000}, 1.0, false},
                      AcquisitionCase{"NotExcusedWithout", {0, 9'000'000}, 0.0, true}),
    [](const auto& row) { return row.param.name; });

constexpr uint32_t kHonest = 1;
constexpr uint32_t kCheat = 2;

ConfigValue items_config() {
    return test::area_config(
        "items",
        {{"items",
          ConfigValue::table({{"wood", ConfigValue::table({{"stack", 64}})},
                              {"potion", ConfigValue::table({{"stack", 8}, {"respawn_s", 10.0}})},
                              {"crown", ConfigValue::table({{"unique", true}})}})}});
}

build::Inventory change(const char* id, int32_t delta, int32_t after,
                        const char* source = "pickup") {
    return build::Inventory{.item_id = id, .delta = delta, .count_after = after, .source = source};
}

TEST(ItemsAnalyzer, HonestCollectorRaisesNothing) {
    EventScript script;
    for (int i = 0; i < 16; ++i)
        script.at(1.0 + i, kHonest, change("wood", 4, 4 * (i + 1)));
    for (int i = 0; i < 8; ++i)
        script.at(1.0 + i * 10.0, kHonest, change("potion", 1, i + 1));
    script.at(3.0, kHonest, change("crown", 1, 1));
    script.at(50.0, kHonest, change("wood", -60, 4, "craft"));
    EXPECT_TRUE(test::run_events(script, items_config()).empty());
}

struct ItemCheat {
    std::string name;
    std::function<void(EventScript&)> cheat;
    std::string code;
};
void PrintTo(const ItemCheat& c, std::ostream* os) {
    *os << c.name;
}
class ItemCheats : public ::testing::TestWithParam<ItemCheat> {};
TEST_P(ItemCheats, RaiseTheirCheck) {
    EventScript script;
    GetParam().cheat(script);
    const Signals signals =
        test::only(test::run_events(script, items_config()), kCheat, GetParam().code);
    ASSERT_FALSE(signals.empty());
    EXPECT_GE(weighted(signals), 0.7) << test::codes(signals);
    EXPECT_NE(signals[0].evidence.find("\"item_id\""), std::string::npos) << signals[0].evidence;
}
INSTANTIATE_TEST_SUITE_P(
    Items, ItemCheats,
    ::testing::Values(ItemCheat{"DoubledStack",
                                [](EventScript& s) {
                                    s.at(1.0, kCheat, change("wood", 40, 40));
                                    s.at(2.0, kCheat, change("wood", 40, 80, "trade"));
                                },
                                "items.stack"},
                      ItemCheat{"UniqueTwice",
                                [](EventScript& s) {
                                    s.at(1.0, kCheat, change("crown", 1, 1));
                                    s.at(1.5, kCheat, change("crown", 1, 2, "trade"));
                                },
                                "items.unique"},
                      ItemCheat{"UnknownId",
                                [](EventScript& s) { s.at(1.0, kCheat, change("godsword", 1, 1)); },
                                "items.unknown"},
                      ItemCheat{"PotionsFasterThanTheyRespawn",
                                [](EventScript& s) {
                                    for (int i = 0; i < 8; ++i)
                                        s.at(1.0 + i * 2.0, kCheat, change("potion", 1, i + 1));
                                },
                                "items.rate"}),
    [](const auto& row) { return row.param.name; });

// ---------------------------------------------------------------- stats

Ring<StatGain> gains(double per_s, double every_s, double for_s) {
    Ring<StatGain> out;
    for (double t = 0; t < for_s; t += every_s)
        out.push_back({std::llround(t * 1e6), per_s * every_s});
    return out;
}

struct XpCase {
    std::string name;
    Ring<StatGain> gains;
    bool flagged;
};
void PrintTo(const XpCase& c, std::ostream* os) {
    *os << c.name;
}
class ExperienceRate : public ::testing::TestWithParam<XpCase> {};
TEST_P(ExperienceRate, FlagsOnlyPastTheHourlyMaximum) {
    EXPECT_EQ(check_experience_rate(GetParam().gains, StatLimits{}).has_value(),
              GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(
    Stats, ExperienceRate,
    ::testing::Values(XpCase{"TheGamesAverage", gains(3.0, 5.0, 3600), false},
                      XpCase{"JustUnderTheMaximum", gains(9.9, 1.0, 1200), false},
                      XpCase{"JustOverTheMaximum", gains(10.2, 1.0, 1200), true},
                      // A quest's one large reward averages out over the window.
                      XpCase{"OneLargeReward", gains(5000.0, 1.0, 1.0), false},  // 5000 at 0 s
                      XpCase{"AFarm", gains(150.0, 2.0, 120), true}),
    [](const auto& row) { return row.param.name; });

TEST(Invulnerable, NeedsEnoughHitsAndNoDamage) {
    const StatLimits limits;
    EXPECT_FALSE(check_invulnerable(9, 0, limits).has_value());
    EXPECT_TRUE(check_invulnerable(10, 0, limits).has_value());
    EXPECT_FALSE(check_invulnerable(30, 1, limits).has_value());
    EXPECT_NEAR(check_invulnerable(10, 0, limits)->confidence, 0.5, 1e-9);
    EXPECT_NEAR(check_invulnerable(20, 0, limits)->confidence, 1.0, 1e-9);
}

TEST(ResourceNotSpent, ASpendMustTakeTheValueDown) {
    EXPECT_FALSE(resource_not_spent(std::nullopt, -5, 100));  // nothing to compare with
    EXPECT_FALSE(resource_not_spent(100.0, -5, 95));
    EXPECT_FALSE(resource_not_spent(100.0, 5, 105));
    EXPECT_TRUE(resource_not_spent(100.0, -5, 100));
    EXPECT_TRUE(resource_not_spent(100.0, -5, 98));  // less than half the spend taken off
}

build::Stat stat(const char* name, double delta, double after) {
    return build::Stat{.stat = name, .delta = delta, .value_after = after};
}

build::Hit hit_on(uint32_t target) {
    return build::Hit{.target_player = target, .weapon = "rifle", .range_m = 20.0f, .damage = 10};
}

TEST(StatsAnalyzer, HonestPlayersRaiseNothing) {
    EventScript script;
    double xp = 0, wood = 100;
    for (int i = 0; i < 100; ++i) {
        xp += 40;
        script.at(1.0 + i * 12.0, kHonest, stat("experience", 40, xp));
    }
    // Hit 30 times, hurt every time.
    for (int i = 0; i < 30; ++i) {
        script.at(10.0 + i, kCheat, hit_on(kHonest));
        script.at(10.02 + i, kHonest, stat("damage_taken", 10, 10.0 * (i + 1)));
    }
    for (int i = 0; i < 10; ++i) {
        wood -= 5;
        script.at(50.0 + i, kHonest, stat("resource.wood", -5, wood));
    }
    EXPECT_TRUE(test::only(test::run_events(script), kHonest, "stats.xp_rate").empty());
    EXPECT_TRUE(test::run_events(script).empty()) << test::codes(test::run_events(script));
}

TEST(StatsAnalyzer, InvulnerabilityIsNotJudgedWhereTheGameReportsNoDamage) {
    EventScript script;
    for (int i = 0; i < 30; ++i)
        script.at(10.0 + i, kHonest, hit_on(kCheat));
    EXPECT_TRUE(test::run_events(script).empty());
}

struct StatCheat {
    std::string name;
    std::function<void(EventScript&)> cheat;
    std::string code;
};
void PrintTo(const StatCheat& c, std::ostream* os) {
    *os << c.name;
}
class StatCheats : public ::testing::TestWithParam<StatCheat> {};
TEST_P(StatCheats, RaiseTheirCheck) {
    EventScript script;
    GetParam().cheat(script);
    const Signals signals = test::only(test::run_events(script), kCheat, GetParam().code);
    ASSERT_FALSE(signals.empty());
    EXPECT_GE(weighted(signals), 0.7) << test::codes(signals);
}
INSTANTIATE_TEST_SUITE_P(
    Stats, StatCheats,
    ::testing::Values(StatCheat{"ExperienceFarm",
                                [](EventScript& s) {
                                    double xp = 0;
                                    for (int i = 0; i < 60; ++i)
                                        s.at(1.0 + i * 2.0, kCheat,
                                             stat("experience", 300, xp += 300));
                                },
                                "stats.xp_rate"},
                      StatCheat{"Invulnerable",
                                [](EventScript& s) {
                                    // Another player is hurt: the game reports damage.
                                    s.at(1.0, kHonest, stat("damage_taken", 10, 10));
                                    for (int i = 0; i < 25; ++i)
                                        s.at(2.0 + i, kHonest, hit_on(kCheat));
                                },
                                "stats.invulnerable"},
                      StatCheat{"InfiniteResources",
                                [](EventScript& s) {
                                    s.at(1.0, kCheat, stat("resource.gold", 100, 100));
                                    for (int i = 0; i < 3; ++i)
                                        s.at(2.0 + i, kCheat, stat("resource.gold", -20, 100));
                                },
                                "stats.resource"}),
    [](const auto& row) { return row.param.name; });

// ---------------------------------------------------------------- sessions

class Reconnects : public ::testing::TestWithParam<CountCase> {};
TEST_P(Reconnects, FlagsMoreThanFiveAMinute) {
    // `count` reconnects spread evenly over 59 s.
    std::deque<int64_t> times;
    for (int64_t i = 0; i < GetParam().count; ++i)
        times.push_back(i * 59'000'000 / std::max<int64_t>(1, GetParam().count - 1));
    EXPECT_EQ(check_reconnects(times, SessionLimits{}).has_value(), GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(Sessions, Reconnects,
                         ::testing::Values(CountCase{"One", 1, false}, CountCase{"Five", 5, false},
                                           CountCase{"Six", 6, true},
                                           CountCase{"Twelve", 12, true}),
                         [](const auto& row) { return row.param.name; });

TEST(Reconnects, SixSpreadOverMoreThanAMinuteAreFine) {
    EXPECT_FALSE(check_reconnects(every(12.5, 6), SessionLimits{}).has_value());
}

TEST(Versions, OnlyAgainstANonEmptyList) {
    EXPECT_FALSE(unexpected("1.0", {}));
    EXPECT_FALSE(unexpected("1.4.2", {"1.4.1", "1.4.2"}));
    EXPECT_TRUE(unexpected("1.4.2-mod", {"1.4.1", "1.4.2"}));
}

TEST(TwoPlaces, SameAccountAsAnotherPlayerOrMatch) {
    const LiveSession a{"relay", 1, 3, 7, 0};
    EXPECT_FALSE(two_places(a, a));
    EXPECT_TRUE(two_places(a, LiveSession{"relay", 2, 3, 7, 0}));
    EXPECT_TRUE(two_places(a, LiveSession{"other", 1, 3, 7, 0}));
    EXPECT_TRUE(two_places(a, LiveSession{"relay", 1, 4, 9, 0}));
}

build::PlayerJoin join(const char* account, bool reconnect = false, const char* version = "1.4.2",
                       const char* handshake = "arena/7") {
    return test::player_join(account, reconnect, version, handshake);
}

ConfigValue sessions_config() {
    return test::area_config("sessions", {{"client_versions", ConfigValue::array({"1.4.2"})},
                                          {"handshakes", ConfigValue::array({"arena/7"})}});
}

TEST(SessionsAnalyzer, HonestPlayerWithTwoDropsRaisesNothing) {
    EventScript script;
    script.at(0.0, kHonest, join("alice"));
    script.at(20.0, kHonest, build::PlayerLeave{.reason = "timeout"});
    script.at(25.0, kHonest, join("alice", true));
    script.at(50.0, kHonest, build::PlayerLeave{.reason = "timeout"});
    script.at(52.0, kHonest, join("alice", true));
    EXPECT_TRUE(test::run_events(script, sessions_config()).empty());
}

struct SessionCheat {
    std::string name;
    std::function<void(EventScript&)> cheat;
    std::string code;
};
void PrintTo(const SessionCheat& c, std::ostream* os) {
    *os << c.name;
}
class SessionCheats : public ::testing::TestWithParam<SessionCheat> {};
TEST_P(SessionCheats, RaiseTheirCheck) {
    EventScript script;
    GetParam().cheat(script);
    const Signals signals =
        test::only(test::run_events(script, sessions_config()), kCheat, GetParam().code);
    ASSERT_FALSE(signals.empty());
    EXPECT_GE(weighted(signals), 0.7) << test::codes(signals);
}
INSTANTIATE_TEST_SUITE_P(
    Sessions, SessionCheats,
    ::testing::Values(SessionCheat{"ReconnectSpam",
                                   [](EventScript& s) {
                                       s.at(0.0, kCheat, join("mallory"));
                                       for (int i = 0; i < 8; ++i) {
                                           s.at(1.0 + i * 6.0, kCheat, build::PlayerLeave{});
                                           s.at(2.0 + i * 6.0, kCheat, join("mallory", true));
                                       }
                                   },
                                   "sessions.reconnect_spam"},
                      SessionCheat{"ModifiedClient",
                                   [](EventScript& s) {
                                       s.at(0.0, kCheat, join("mallory", false, "1.4.2-aimbot"));
                                   },
                                   "sessions.client_version"},
                      SessionCheat{"OddHandshake",
                                   [](EventScript& s) {
                                       s.at(0.0, kCheat, join("mallory", false, "1.4.2", "x/1"));
                                   },
                                   "sessions.handshake"}),
    [](const auto& row) { return row.param.name; });

// One account in two places is the accounts plugin's (accounts_test.cpp): this plugin is
// sharded by match, and a shard would miss the pairs that straddle two shards. Twice in
// one match and in two matches, it says nothing of it, and keeps its other session checks.
TEST(SessionsAnalyzer, LeavesTwoPlacesToTheAccountsPlugin) {
    EventScript first("relay-a", 1), second("relay-b", 2);
    first.at(0.0, kHonest, join("mallory"));
    first.at(1.0, kCheat, join("mallory", false, "1.4.2-aimbot"));
    second.at(5.0, kCheat, join("mallory"));
    test::Harness harness(sessions_config());
    ASSERT_TRUE(harness.ok()) << harness.error();
    Signals signals = test::feed_all(harness, first.batches());
    for (auto& s : test::feed_all(harness, second.batches()))
        signals.push_back(std::move(s));
    for (const auto& s : signals)
        EXPECT_NE(s.code, "sessions.two_places") << test::codes(signals);
    EXPECT_EQ(test::only(signals, kCheat, "sessions.client_version").size(), 1u)
        << test::codes(signals);
}

// ---------------------------------------------------------------- clock

class TickAhead : public ::testing::TestWithParam<CountCase> {};
TEST_P(TickAhead, AllowsTwoTicks) {
    EXPECT_EQ(check_tick_ahead(1000, static_cast<uint64_t>(1000 + GetParam().count), ClockLimits{})
                  .has_value(),
              GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(Clock, TickAhead,
                         ::testing::Values(CountCase{"Behind", -30, false},
                                           CountCase{"OnTheTick", 0, false},
                                           CountCase{"AtTheAllowance", 2, false},
                                           CountCase{"OnePast", 3, true},
                                           CountCase{"FarAhead", 40, true}),
                         [](const auto& row) { return row.param.name; });

// An order every 0.5 s of client time for `for_s` seconds, sent at `rate` times the
// relay's pace, each arriving `delay_s(t)` after it was sent.
template <class Delay>
std::vector<ClockSample> clock_at(double rate, double for_s, Delay delay_s, int64_t offset_us = 0) {
    std::vector<ClockSample> out;
    for (double t = 0; t <= for_s + 1e-9; t += 0.5)
        out.push_back(
            {std::llround((t + delay_s(t)) * 1e6), offset_us + std::llround(t * rate * 1e6)});
    // In relay order, as the relay hears them.
    std::stable_sort(out.begin(), out.end(), [](const ClockSample& a, const ClockSample& b) {
        return a.relay_us < b.relay_us;
    });
    return out;
}
std::vector<ClockSample> clock_at(double rate, double for_s, int64_t offset_us = 0) {
    return clock_at(
        rate, for_s, [](double) { return 0.05; }, offset_us);
}

// The rate measured when the last sample arrives: every step closed so far.
std::optional<ClockRateMeasure> measure(const std::vector<ClockSample>& samples,
                                        const ClockLimits& limits = {}) {
    Ring<ClockSample> trend;
    std::optional<ClockRateMeasure> last;
    for (const ClockSample& sample : samples)
        if (add_to_clock_trend(trend, sample, limits)) last = check_clock_rate(trend, limits);
    return last;
}

// Whether any judgement of the trend, as it grows sample by sample, flags the clock: an
// honest clock must pass every one of them, not only the last.
bool ever_flagged(const std::vector<ClockSample>& samples, const ClockLimits& limits = {}) {
    Ring<ClockSample> trend;
    bool flagged = false;
    for (const ClockSample& sample : samples)
        if (add_to_clock_trend(trend, sample, limits))
            flagged = flagged || check_clock_rate(trend, limits).has_value();
    return flagged;
}

struct RateCase {
    std::string name;
    std::vector<ClockSample> samples;
    bool flagged;
};
void PrintTo(const RateCase& c, std::ostream* os) {
    *os << c.name;
}
// Client clocks are the client's to claim: extremes are a measurement, never an overflow
// (on b9b94b3 this subtraction was signed-overflow undefined behaviour; the asan
// preset's UBSan stops there).
TEST(ClockRateExtremes, ClientTimesAtTheInt64LimitsAreMeasuredNotOverflowed) {
    std::vector<ClockSample> samples;
    for (int i = 0; i <= 10; ++i)
        samples.push_back({i * 5'000'000ll, i % 2 ? INT64_MAX : INT64_MIN});
    const auto measured = measure(samples);
    if (measured) {
        EXPECT_TRUE(std::isfinite(measured->rate));
        EXPECT_TRUE(std::isfinite(measured->client_s));
    }
    // A clock that leaps by 2^60 us every step, from INT64_MIN up: fast, and finite.
    std::vector<ClockSample> leaps;
    for (int64_t i = 0; i <= 10; ++i)
        leaps.push_back({i * 5'000'000ll, INT64_MIN + i * (int64_t{1} << 60)});
    const auto far = measure(leaps);
    ASSERT_TRUE(far.has_value()) << "a clock that leaps by 2^60 us a step is fast";
    EXPECT_TRUE(std::isfinite(far->rate));
}

class ClockRate : public ::testing::TestWithParam<RateCase> {};
TEST_P(ClockRate, FlagsARateNotAnOffsetNorLag) {
    EXPECT_EQ(ever_flagged(GetParam().samples), GetParam().flagged);
}
INSTANTIATE_TEST_SUITE_P(
    Clock, ClockRate,
    ::testing::Values(
        RateCase{"SameRate", clock_at(1.0, 120), false},
        RateCase{"ALargeOffset", clock_at(1.0, 120, 3'600'000'000), false},
        RateCase{"DriftOfAHundredPpm", clock_at(1.0001, 600), false},
        RateCase{"JustUnder", clock_at(1.049, 120), false},
        RateCase{"JustOver", clock_at(1.06, 120), true},
        RateCase{"FastButTooShortAWindow", clock_at(1.5, 25), false},
        RateCase{"FifteenPercentFast", clock_at(1.15, 120), true},
        // Everything sent in a 10 s spike arrives in a burst at its end: at either end of
        // the window, or in the middle, it spoils a step or two, not the trend.
        RateCase{
            "ATenSecondLagSpikeAndItsBurst",
            clock_at(1.0, 120,
                     [](double sent) { return sent >= 40 && sent < 50 ? 50.05 - sent : 0.05; }),
            false},
        RateCase{"ALagSpikeAtTheStart",
                 clock_at(1.0, 60, [](double sent) { return sent < 8 ? 8.05 - sent : 0.05; }),
                 false},
        // A jittery link: each order 20 to 300 ms late.
        RateCase{"AJitteryLink",
                 clock_at(1.0, 300,
                          [](double sent) { return 0.02 + 0.28 * std::abs(std::sin(sent * 7.3)); }),
                 false},
        // An NTP correction steps the client's clock by a second: a step, not a rate.
        RateCase{"AStepOfTheClock",
                 clock_at(1.0, 120, [](double sent) { return sent >= 60 ? -1.0 + 0.05 : 0.05; }),
                 false},
        // Issue 14's soak, seed 3: three pairs of the trend gained time within a minute
        // (1.40, 1.09 and one between), the median 1.0. Here: steps forward of 1 s, 1 s and
        // 0.5 s, each in a pair of its own, then a lag spike of 10 s. Two are set aside as
        // steps, the third is half a second over a minute; the spike gives back what it
        // takes.
        RateCase{"ThreeStepsOfTheClockAndALagSpike",
                 clock_at(1.0, 120,
                          [](double sent) {
                              const double steps =
                                  (sent >= 30) + (sent >= 45) + 0.5 * (sent >= 60);
                              const double late = sent >= 70 && sent < 80 ? 80.05 - sent : 0.05;
                              return late - steps;
                          }),
                 false}),
    [](const auto& row) { return row.param.name; });

// A speed hack switched on for 4 s in every 20 (a fifth of the time; the clock gains 20 %):
// the median of the steps would pass it; the rate over the trend, with the two pairs that
// gained most set aside (as an NTP step would be), does not.
TEST(ClockRateSpeedUp, ASpeedHackSwitchedOnAndOffIsCaught) {
    std::vector<ClockSample> samples;
    double client = 0;
    for (double t = 0; t <= 120 + 1e-9; t += 0.5) {
        samples.push_back({std::llround((t + 0.05) * 1e6), std::llround(client * 1e6)});
        client += std::fmod(t, 20.0) < 4.0 ? 1.0 : 0.5;  // 2x, then 1x, per 0.5 s
    }
    // Every judgement of the trend as it grows: flagged, while the median stays honest.
    const ClockLimits limits;
    Ring<ClockSample> trend;
    size_t judged = 0, flagged = 0;
    for (const ClockSample& sample : samples) {
        if (!add_to_clock_trend(trend, sample, limits)) continue;
        if (auto m = check_clock_rate(trend, limits)) {
            ++flagged;
            EXPECT_LT(m->median, 1.05) << "the median alone would have missed it";
            EXPECT_GT(m->rate, 1.05);
        }
        judged += trend.back().relay_us - trend.front().relay_us >= 45'000'000;
    }
    EXPECT_GT(flagged, 0u);
    EXPECT_GE(flagged * 2, judged) << "flagged in most windows of a minute";
}

// A 1.1 x clock with one order a step, whose client holds one order a minute back by 3 s
// (all it sent in that step): the pair into the late point loses 2.5 s, the pair out of it
// gains 3.5 s. Setting the gain aside alone would leave the loss to pull the rate down to
// 1.03; the losing pair goes aside with it, and the clock shows at 1.1.
TEST(ClockRateSpeedUp, HoldingAnOrderBackNowAndThenDoesNotHideIt) {
    std::vector<ClockSample> samples;
    for (int k = 0; k < 36; ++k) {
        const double sent = 5.0 * k + 0.5;
        const double late = k % 12 == 6 ? 3.05 : 0.05;
        samples.push_back({std::llround((sent + late) * 1e6), std::llround(sent * 1.1 * 1e6)});
    }
    const auto measured = measure(samples);
    ASSERT_TRUE(measured.has_value());
    EXPECT_NEAR(measured->rate, 1.1, 0.01);
}

// Few orders (a player back from being away): under five pairs nothing can be set aside,
// so the slowest pair is the rate, and a late first point is not a fast clock.
TEST(ClockRateSparse, FewPairsTakeTheSlowest) {
    std::vector<ClockSample> sparse;
    // An order every 10 s for 50 s, the first 2.5 s late.
    for (int i = 0; i <= 5; ++i) {
        const double sent = i * 10.0;
        sparse.push_back({std::llround((sent + (i == 0 ? 2.55 : 0.05)) * 1e6),
                          std::llround(sent * 1e6)});
    }
    EXPECT_FALSE(ever_flagged(sparse));
}

// A speed-up is caught within a minute of play, with its real rate.
TEST(ClockRateSpeedUp, IsCaughtWithinAMinuteWithItsRate) {
    for (double rate : {1.1, 1.25, 2.0}) {
        const auto measured = measure(clock_at(rate, 60));
        ASSERT_TRUE(measured.has_value()) << rate;
        EXPECT_NEAR(measured->rate, rate, 0.01) << rate;
        EXPECT_LE(static_cast<double>(measured->last.relay_us) / 1e6, 60.0);
    }
}

TEST(RunLength, AClaimShorterThanTheRelaySawBeyondTheLeeway) {
    const ClockLimits limits;
    EXPECT_FALSE(check_run_length(0, 100'000'000, 100'000'000, limits).has_value());
    EXPECT_FALSE(check_run_length(0, 100'000'000, 98'000'000, limits).has_value());
    EXPECT_FALSE(check_run_length(0, 100'000'000, 120'000'000, limits).has_value());
    EXPECT_TRUE(check_run_length(0, 100'000'000, 97'900'000, limits).has_value());
    EXPECT_GT(check_run_length(0, 100'000'000, 80'000'000, limits)->score, 0.99);
}

build::Order order(uint64_t claimed_tick, int64_t client_us) {
    return build::Order{.claimed_tick = claimed_tick, .client_time_us = client_us};
}

void orders(EventScript& s, uint32_t player, double rate, double from_s, double to_s) {
    for (double t = from_s; t < to_s; t += 0.25) {
        const double client = t * rate;
        s.at(t, player, order(static_cast<uint64_t>(client / 0.05), std::llround(client * 1e6)));
    }
}

TEST(ClockAnalyzer, HonestClientRaisesNothingThroughALagSpike) {
    // Orders every 0.25 s, a tick behind; nothing heard for 1.5 s from 20 s, then the
    // orders sent meanwhile arrive together, late, with their true ticks and times.
    EventScript script;
    script.at(0.0, 0, test::match_start(20.0f, 1'000'000));
    for (double t = 0.25; t < 60.0; t += 0.25) {
        const double received = t > 20.0 && t <= 21.5 ? 21.5 + t / 1000.0 : t;
        script.at(received, kHonest,
                  order(static_cast<uint64_t>(t / 0.05) - 1, 5'000'000 + std::llround(t * 1e6)));
    }
    EXPECT_TRUE(test::run_events(script).empty()) << test::codes(test::run_events(script));
}

TEST(ClockAnalyzer, SpedUpClientRaisesTickAheadAndRate) {
    EventScript script;
    orders(script, kCheat, 1.2, 0.25, 40.0);
    const Signals signals = test::run_events(script);
    EXPECT_GE(weighted(test::only(signals, kCheat, "clock.tick_ahead")), 0.7)
        << test::codes(signals);
    EXPECT_GE(weighted(test::only(signals, kCheat, "clock.rate")), 0.7) << test::codes(signals);
}

TEST(ClockAnalyzer, RunLengthOfASoloRun) {
    for (const auto& [claimed_s, flagged] :
         std::vector<std::pair<double, bool>>{{100.0, false}, {98.5, false}, {80.0, true}}) {
        EventScript script;
        script.at(0.0, 0, test::match_start(20.0f, 5'000'000));
        script.at(0.1, kCheat, join("runner"));
        script.at(100.0, 0,
                  build::MatchEnd{.claimed_length_us = std::llround(claimed_s * 1e6),
                                  .ended_unix_us = 105'000'000});
        const Signals signals = test::only(test::run_events(script), kCheat, "clock.run_length");
        EXPECT_EQ(!signals.empty(), flagged) << claimed_s;
        if (flagged) {
            EXPECT_GE(weighted(signals), 0.7);
            EXPECT_EQ(test::evidence_number(signals[0].evidence, "relay_s"), 100.0);
        }
    }
}

}  // namespace
}  // namespace arbiter::reference
