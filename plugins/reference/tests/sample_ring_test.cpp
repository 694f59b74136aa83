// SampleRing: what is read back is what was pushed, whatever the times and positions, next to
// a std::deque<Sample> put through the same changes; and the positions let go stay gone
// through a copy.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "sample_ring.hpp"

namespace arbiter::reference {
namespace {

uint64_t next(uint64_t& seed, uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % bound;
}

bool same(const Sample& a, const Sample& b) {
    return a.t_us == b.t_us && a.position.x == b.position.x && a.position.y == b.position.y &&
           a.position.z == b.position.z;
}

TEST(SampleRing, ReadsBackWhatADequeHoldsThroughEveryChange) {
    // Gaps of a tick, of bursts, of silences beyond 32 bits of microseconds, and back; float
    // positions, and now and then one that is not (kept whole from then on); pops and clears.
    uint64_t seed = 7;
    SampleRing ring;
    std::deque<Sample> deque;
    int64_t t_us = -5'000'000;
    int64_t differences = 0;
    for (int step = 0; step < 200'000; ++step) {
        const uint64_t roll = next(seed, 1000);
        if (roll < 2) {
            ring.clear();
            deque.clear();
        } else if (roll < 450 && !deque.empty()) {
            ring.pop_front();
            deque.pop_front();
        } else {
            int64_t gap = static_cast<int64_t>(next(seed, 100'000));
            if (roll >= 450 && roll < 453) gap = static_cast<int64_t>(next(seed, 5'000'000'000));
            if (roll >= 995) gap = -gap;
            t_us += gap;
            Sample s{t_us,
                     {static_cast<float>(next(seed, 100'000)) / 7.0f,
                      static_cast<float>(next(seed, 1'000)) * 0.5f, 0.0f}};
            if (roll == 600) s.position.x = 0.1;  // not a float
            ring.push_back(s);
            deque.push_back(s);
        }
        ASSERT_EQ(ring.size(), deque.size());
        for (size_t i = 0; i < deque.size(); i += 1 + deque.size() / 5)
            if (!same(ring[i], deque[i]) || ring.time(i) != deque[i].t_us) ++differences;
    }
    EXPECT_EQ(differences, 0);
}

// longest_step walks the stored times a contiguous run at a time (narrow or wide, across the
// ring's wrap): it must give what a walk over time(i) gives, for every range.
TEST(SampleRing, LongestStepIsTheWalkOverTheTimes) {
    uint64_t seed = 11;
    SampleRing ring;
    int64_t t_us = 1'000'000;
    int64_t checked = 0, differences = 0;
    for (int step = 0; step < 20'000; ++step) {
        const uint64_t roll = next(seed, 1000);
        if ((roll < 300 || ring.size() > 400) && !ring.empty()) {
            ring.pop_front();  // moves the head, so ranges wrap
        } else {
            int64_t gap = static_cast<int64_t>(next(seed, 200'000));
            if (roll == 999) gap = static_cast<int64_t>(next(seed, 5'000'000'000));  // wide
            if (roll >= 990 && roll < 995) gap = -gap;  // out of order
            t_us += gap;
            ring.push_back({t_us, {1.0f, 2.0f, 0.0f}});
        }
        const size_t n = ring.size();
        for (int probe = 0; probe < 4 && n > 0; ++probe) {
            const size_t first = next(seed, n + 1), last = next(seed, n + 2);
            int64_t walked = 0;
            for (size_t i = std::max<size_t>(first, 1); i < std::min(last, n); ++i)
                walked = std::max(walked, ring.time(i) - ring.time(i - 1));
            ++checked;
            if (ring.longest_step(first, last) != walked) ++differences;
        }
    }
    EXPECT_GT(checked, 50'000);
    EXPECT_EQ(differences, 0);
}

TEST(SampleRing, TimesAtTheEndsOfInt64) {
    SampleRing ring;
    const int64_t low = std::numeric_limits<int64_t>::min(),
                  high = std::numeric_limits<int64_t>::max();
    for (int64_t t : {int64_t{0}, low, high, int64_t{-1}, high - 1})
        ring.push_back({t, {1, 2, 3}});
    EXPECT_EQ(ring.time(0), 0);
    EXPECT_EQ(ring.time(1), low);
    EXPECT_EQ(ring.time(2), high);
    EXPECT_EQ(ring.time(3), -1);
    EXPECT_EQ(ring.time(4), high - 1);
    for (int i = 0; i < 4; ++i)
        ring.pop_front();
    EXPECT_TRUE(ring.compact());  // back within 32 bits
    EXPECT_EQ(ring.time(0), high - 1);
}

TEST(SampleRing, PositionsLetGoStayGoneAndTheTimesStay) {
    SampleRing ring;
    for (int i = 0; i < 50; ++i)
        ring.push_back({i * 50'000, {static_cast<float>(i), 0, 0}});
    ring.forget_positions_before(30);
    EXPECT_EQ(ring.positions_forgotten(), 30u);
    EXPECT_FALSE(ring.has_position(29));
    EXPECT_TRUE(ring.has_position(30));
    EXPECT_EQ(ring.time(3), 150'000);
    EXPECT_EQ(ring.position(3).x, 30.0);  // the oldest kept stands in
    EXPECT_EQ(ring[40].position.x, 40.0);
    const SampleRing copy = ring;
    EXPECT_EQ(copy.positions_forgotten(), 30u);
    EXPECT_EQ(copy[40].position.x, 40.0);
    ring.pop_front();
    EXPECT_EQ(ring.positions_forgotten(), 29u);
    EXPECT_EQ(ring[39].position.x, 40.0);
    ring.forget_positions_before(ring.size() + 10);  // never the newest
    EXPECT_TRUE(ring.has_position(ring.size() - 1));
}

TEST(SampleRing, PositionsThatAreNotFloatsAreNeverLetGo) {
    SampleRing ring;
    for (int i = 0; i < 10; ++i)
        ring.push_back({i * 50'000, {0.1 * i, 0, 0}});
    ring.forget_positions_before(5);
    EXPECT_EQ(ring.positions_forgotten(), 0u);
    EXPECT_EQ(ring[3].position.x, 0.1 * 3);
}

// A ring restored in one go (a state restore) holds what pushing the same samples and
// letting the same positions go holds: with positions let go, with none, with a count to
// let go that is not one, and with times too far apart for 32 bits (then none is let go,
// as forget_positions_before lets none go).
TEST(SampleRing, ARestoreHoldsWhatPushingAndForgettingHolds) {
    struct Case {
        int64_t step_us;
        size_t count, forgotten;
    };
    for (const Case c :
         {Case{50'000, 40, 25}, Case{50'000, 40, 0}, Case{50'000, 40, 40}, Case{50'000, 40, 39},
          Case{50'000, 1, 0}, Case{50'000, 0, 0}, Case{int64_t{1} << 31, 6, 3}}) {
        std::vector<Sample> samples;
        for (size_t i = 0; i < c.count; ++i)
            samples.push_back({static_cast<int64_t>(i) * c.step_us,
                               {static_cast<float>(i), static_cast<float>(2 * i), 0.5f}});
        SampleRing pushed;
        pushed.assign(samples.begin(), samples.end());
        if (c.forgotten > 0 && c.forgotten < c.count) pushed.forget_positions_before(c.forgotten);
        SampleRing restored;
        restored.push_back({-5, {1, 1, 1}});  // what was there before goes
        std::vector<size_t> asked;
        restored.restore(
            c.count, c.forgotten, [&](size_t i) { return samples[i].t_us; },
            [&](size_t i, float* xyz) {
                asked.push_back(i);
                xyz[0] = static_cast<float>(samples[i].position.x);
                xyz[1] = static_cast<float>(samples[i].position.y);
                xyz[2] = static_cast<float>(samples[i].position.z);
            });
        const std::string where = std::to_string(c.count) + "/" + std::to_string(c.forgotten);
        ASSERT_EQ(restored.size(), pushed.size()) << where;
        EXPECT_EQ(restored.positions_forgotten(), pushed.positions_forgotten()) << where;
        EXPECT_EQ(asked.size(), c.count - pushed.positions_forgotten()) << where;
        EXPECT_EQ(restored.compact(), pushed.compact()) << where;
        for (size_t i = 0; i < pushed.size(); ++i)
            EXPECT_TRUE(same(restored[i], pushed[i])) << where << " sample " << i;
        // And it goes on as the pushed one does.
        pushed.push_back({c.step_us * 100, {7, 7, 7}});
        restored.push_back({c.step_us * 100, {7, 7, 7}});
        ASSERT_EQ(restored.size(), pushed.size());
        EXPECT_TRUE(same(restored.back(), pushed.back())) << where;
    }
}

// The save's walk gives each sample's time and position as time(i) and position(i) do,
// the oldest kept position standing in for those let go.
TEST(SampleRing, TheCompactWalkReadsWhatTheIndexedReadsDo) {
    SampleRing ring;
    for (int i = 0; i < 70; ++i)
        ring.push_back({1'000'000 + i * 50'000, {static_cast<float>(i), -1.5f, 2}});
    for (int i = 0; i < 20; ++i)  // the ring's start moves, so that the arrays wrap
        ring.pop_front();
    for (int i = 70; i < 95; ++i)
        ring.push_back({1'000'000 + i * 50'000, {static_cast<float>(i), -1.5f, 2}});
    ring.forget_positions_before(30);
    ASSERT_TRUE(ring.compact());
    size_t i = 0;
    ring.visit_compact([&](int64_t t_us, const float* xyz) {
        ASSERT_LT(i, ring.size());
        EXPECT_EQ(t_us, ring.time(i)) << i;
        EXPECT_EQ(xyz[0], ring.position(i).x) << i;
        EXPECT_EQ(xyz[1], ring.position(i).y) << i;
        EXPECT_EQ(xyz[2], ring.position(i).z) << i;
        ++i;
    });
    EXPECT_EQ(i, ring.size());
}

}  // namespace
}  // namespace arbiter::reference
