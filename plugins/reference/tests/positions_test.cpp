// The positions a track lets go (MovementArea::forget_positions): limits changed under a
// track that ask for a window further back than it kept never measure that window from a
// stand-in, and a reload carries which positions are gone (the blob stays the same through a
// save, a restore and a save, and both instances carry on alike).
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "evidence_reader.hpp"
#include "match_script.hpp"

namespace arbiter::reference {
namespace {

using test::Batches;
using test::Harness;
using test::MatchScript;
using test::Mover;
using test::Signals;

constexpr uint32_t kRunner = 4;
constexpr size_t kSixSeconds = 24;  // batches of 0.25 s

// An honest runner at 19 m/s (the limit is 22 m/s) who turns back after 7 s.
Batches runner() {
    MatchScript script;
    script.add(kRunner, Mover().run(19.0, 7.0).run(-19.0, 7.0));
    return script.batches();
}

TEST(PositionsLetGo, AWiderWindowIsNeverMeasuredFromOne) {
    // 6 s at 10 m/s, then 60 m/s. After 6 s the track keeps the positions of its last 2 s
    // only; a reconfigure to a 4 s window asks for starts further back, and each window
    // reported starts where the player was at its start time, never at a stand-in.
    const Mover mover = Mover().run(10.0, 6.0).run(60.0, 4.0);
    std::map<int64_t, double> x_at;
    for (const auto& u : mover.updates())
        x_at[u.received_us] = u.position.x;
    MatchScript script;
    script.add(kRunner, mover);
    const Batches all = script.batches();
    ASSERT_GT(all.size(), kSixSeconds + 8);
    Harness harness;
    test::feed_all(harness, {all.begin(), all.begin() + kSixSeconds});
    ASSERT_EQ(harness.reconfigure(test::movement_config({{"window_s", 4.0}})), ARB_OK)
        << harness.error();
    const Signals after = test::feed_all(harness, {all.begin() + kSixSeconds, all.end()});
    int checked = 0;
    for (const auto& s : after) {
        if (s.player != kRunner || s.code != "movement.speed") continue;
        const auto t_us = test::evidence_number(s.evidence, "t_us");  // the window's start
        const auto x = test::evidence_number(s.evidence, "x");
        ASSERT_TRUE(t_us && x) << s.evidence;
        const auto at = x_at.find(std::llround(*t_us));
        ASSERT_NE(at, x_at.end()) << s.evidence;
        EXPECT_NEAR(*x, at->second, 1e-3) << s.evidence;
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

TEST(PositionsLetGo, ABlobSaysWhichAndRoundTrips) {
    const Batches all = runner();
    Harness first;
    test::feed_all(first, {all.begin(), all.begin() + kSixSeconds});
    const auto blob = first.save_state();
    ASSERT_TRUE(blob.has_value()) << first.error();
    Harness second;
    ASSERT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    EXPECT_EQ(second.save_state(), blob);
    // And both carry on alike.
    const Batches rest(all.begin() + kSixSeconds, all.end());
    const Signals a = test::feed_all(first, rest);
    const Signals b = test::feed_all(second, rest);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].code, b[i].code);
        EXPECT_EQ(a[i].evidence, b[i].evidence);
    }
}

}  // namespace
}  // namespace arbiter::reference
