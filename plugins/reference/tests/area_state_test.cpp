// Hot reload of the hits, items, stats, sessions and clock state: cut in the middle of a
// match that cheats in every area, the restored instance reports exactly what the
// uninterrupted one does after the cut.
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "event_script.hpp"

namespace arbiter::reference {
namespace {

using test::Batches;
using test::EventScript;
using test::Harness;
using test::Signals;

// Each cheat straddles the cut at 10 s; most are seen only with the state carried across it.
EventScript straddling_match() {
    EventScript s;
    s.at(0.0, 0, test::match_start(20.0f, 1'000'000));
    for (uint32_t p = 1; p <= 5; ++p)
        s.at(0.01 * p, p, test::player_join("account-" + std::to_string(p)));
    // 1: rapid fire from 9 s to 10.5 s, 20 shots a second: seen on both sides of the cut,
    // reported again after it only as the uninterrupted instance would.
    for (int i = 0; i < 30; ++i)
        s.at(9.0 + i * 0.05, 1, build::Hit{.target_player = 2, .weapon = "rifle", .range_m = 9});
    // Connected clients: positions at 20 Hz, so that no silence excuses anything.
    for (uint32_t p : {1u, 2u, 3u, 5u})
        for (int i = 1; i < 400; ++i)
            s.at(i * 0.05 + 0.001 * p, p, build::Position{});
    // 2: three potions within 9.5 s that respawn every 5 s; the third after the cut.
    int count = 0;
    for (double t : {1.0, 6.0, 10.5})
        s.at(t, 2,
             build::Inventory{
                 .item_id = "potion", .delta = 1, .count_after = ++count, .source = "pickup"});
    // 3: a resource spent but never lower, twice before the cut and once after.
    s.at(1.0, 3, build::Stat{.stat = "resource.gold", .delta = 50, .value_after = 50});
    for (int i = 0; i < 3; ++i)
        s.at(8.5 + i, 3, build::Stat{.stat = "resource.gold", .delta = -10, .value_after = 50});
    // 4: reconnects every 3 s from 1 s: the sixth after the cut.
    for (int i = 0; i < 7; ++i) {
        s.at(1.0 + i * 3.0, 4, build::PlayerLeave{});
        s.at(1.5 + i * 3.0, 4, test::player_join("account-4", true));
    }
    // 5: a client clock 10 % fast, judged over a window that spans the cut.
    for (double t = 0.25; t < 20.0; t += 0.25)
        s.at(t, 5, build::Order{.client_time_us = std::llround(t * 1.1e6)});
    return s;
}

ConfigValue config() {
    return ConfigValue::table(
        {{"hits", ConfigValue::table({{"weapons", ConfigValue::table(test::weapons_table())}})},
         {"items", ConfigValue::table(
                       {{"items", ConfigValue::table(
                                      {{"potion", ConfigValue::table({{"respawn_s", 5.0}})}})}})},
         // The clock's trend in steps of 2 s, judged from 10 s: within the 20 s match.
         {"clock", ConfigValue::table({{"rate_step_s", 2.0}, {"rate_min_window_s", 10.0}})}});
}

std::set<std::tuple<uint32_t, std::string, double>> keys(const Signals& signals) {
    std::set<std::tuple<uint32_t, std::string, double>> out;
    for (const auto& s : signals)
        out.insert({s.player, s.code, std::round(s.score * s.confidence * 1e6) / 1e6});
    return out;
}

TEST(AreaReload, TheRestoredInstanceReportsWhatTheUninterruptedOneDoes) {
    const Batches all = straddling_match().batches();
    Batches first, second;
    for (const auto& b : all) {
        const auto view = Batch::verified(b);
        ((*view->events()[0]).relay_time_us() < test::us(10.0) ? first : second).push_back(b);
    }
    ASSERT_FALSE(first.empty());
    ASSERT_FALSE(second.empty());

    Harness uninterrupted(config());
    test::feed_all(uninterrupted, first);
    Signals expected = test::feed_all(uninterrupted, second);
    for (const auto& s : uninterrupted.end_match("test-relay", 1))
        expected.push_back(s);

    Harness before(config());
    test::feed_all(before, first);
    const auto blob = before.save_state();
    ASSERT_TRUE(blob.has_value()) << before.error();
    Harness restored(config());
    ASSERT_EQ(restored.restore_state(*blob), ARB_OK) << restored.error();
    Signals actual = test::feed_all(restored, second);
    for (const auto& s : restored.end_match("test-relay", 1))
        actual.push_back(s);
    EXPECT_EQ(keys(actual), keys(expected)) << test::codes(actual) << "---\n"
                                            << test::codes(expected);

    // Every area's cheat is seen after the cut, which a fresh instance would miss.
    std::set<std::string> codes;
    for (const auto& s : actual)
        codes.insert(s.code);
    for (const char* code :
         {"items.rate", "stats.resource", "sessions.reconnect_spam", "clock.rate"})
        EXPECT_TRUE(codes.count(code)) << code << "\n" << test::codes(actual);

    Harness fresh(config());
    std::set<std::string> fresh_codes;
    for (const auto& s : test::feed_all(fresh, second))
        fresh_codes.insert(s.code);
    for (const char* code : {"items.rate", "stats.resource", "sessions.reconnect_spam"})
        EXPECT_FALSE(fresh_codes.count(code)) << code << " needs no state: the test cannot fail";
}

}  // namespace
}  // namespace arbiter::reference
