// arbiter::Ring against std::deque: the same values in the same order through every mix of
// pushes, pops and clears, while it wraps around and grows.
#include <algorithm>
#include <deque>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <arbiter/sdk/ring.hpp>

namespace arbiter {
namespace {

struct Point {
    int64_t t_us = 0;
    float x = 0;
};

template <class T>
std::vector<T> values_of(const Ring<T>& ring) {
    return {ring.begin(), ring.end()};
}

TEST(Ring, AnEmptyRingHoldsNoBlock) {
    Ring<int64_t> ring;
    EXPECT_TRUE(ring.empty());
    EXPECT_EQ(ring.capacity(), 0u);
    EXPECT_EQ(ring.begin(), ring.end());
    EXPECT_EQ(ring.address(0), nullptr);
    EXPECT_EQ(ring.address(size_t{0} - 1), nullptr);
    EXPECT_LE(sizeof(Ring<int64_t>), 24u);
}

TEST(Ring, BehavesAsADequeThroughWrapsGrowthAndClears) {
    std::mt19937 random(7);
    Ring<int64_t> ring;
    std::deque<int64_t> expected;
    int64_t next = 0;
    for (int step = 0; step < 20'000; ++step) {
        const auto roll = static_cast<unsigned>(random() % 100);
        if (roll < 55) {
            ring.push_back(next);
            expected.push_back(next++);
        } else if (roll < 99) {
            if (!expected.empty()) {
                ring.pop_front();
                expected.pop_front();
            }
        } else {
            const size_t capacity = ring.capacity();
            ring.clear();
            expected.clear();
            EXPECT_EQ(ring.capacity(), capacity) << "a cleared ring keeps its block";
        }
        ASSERT_EQ(ring.size(), expected.size());
        if (!expected.empty()) {
            ASSERT_EQ(ring.front(), expected.front());
            ASSERT_EQ(ring.back(), expected.back());
            ASSERT_EQ(ring.address(0), &ring.front());
            ASSERT_EQ(ring.address(expected.size() - 1), &ring.back());
        }
        if (step % 97 == 0) {
            ASSERT_TRUE(std::equal(ring.begin(), ring.end(), expected.begin(), expected.end()));
            ASSERT_TRUE(std::equal(ring.rbegin(), ring.rend(), expected.rbegin(), expected.rend()));
            for (size_t i = 0; i < expected.size(); ++i)
                ASSERT_EQ(ring[i], expected[i]);
        }
    }
    EXPECT_GT(next, 1000);
}

TEST(Ring, GrowsByHalfAgainAndOnlyWhenFull) {
    Ring<int64_t> ring;
    std::vector<size_t> capacities;
    for (int64_t i = 0; i < 100; ++i) {
        ring.push_back(i);
        if (capacities.empty() || capacities.back() != ring.capacity())
            capacities.push_back(ring.capacity());
    }
    EXPECT_EQ(capacities, (std::vector<size_t>{4, 6, 9, 13, 19, 28, 42, 63, 94, 141}));
    // A window that slides keeps its block: pushes after pops reuse the slots.
    for (int64_t i = 100; i < 10'000; ++i) {
        ring.pop_front();
        ring.push_back(i);
    }
    EXPECT_EQ(ring.capacity(), 141u);
    EXPECT_EQ(ring.front(), 9'900);
    EXPECT_EQ(ring.back(), 9'999);
}

TEST(Ring, TheSlotsAPushAndAPopTouchAreTheOnesNamed) {
    Ring<int64_t> ring;
    for (int64_t i = 0; i < 6; ++i)  // capacity 6, full
        ring.push_back(i);
    EXPECT_EQ(ring.address(6), nullptr) << "a full ring's next push moves it to a new block";
    ring.pop_front();
    ring.pop_front();
    const int64_t* next = ring.address(ring.size());
    ASSERT_NE(next, nullptr);
    EXPECT_EQ(*ring.address(1), 3);
    ring.push_back(6);  // wraps to the slot the 0 was in
    EXPECT_EQ(&ring.back(), next);
    EXPECT_EQ(*next, 6);
}

TEST(Ring, GrowthStopsAtTheLargestSizeWithAClearError) {
    using R = Ring<uint8_t>;
    constexpr size_t kMax = R::kMaxSize;
    EXPECT_EQ(kMax, 4'294'967'295u);
    // Half again, until that would pass the largest size; then the largest size.
    EXPECT_EQ(R::next_capacity(0, 1), 4u);
    EXPECT_EQ(R::next_capacity(4'000'000'000, 4'000'000'001), kMax);
    EXPECT_EQ(R::next_capacity(kMax - 1, kMax), kMax);
    // Past it, an error rather than a block too small for what it must hold.
    EXPECT_THROW((void)R::next_capacity(kMax, kMax + 1), std::length_error);
    R ring;
    EXPECT_THROW(ring.reserve(kMax + 1), std::length_error);
    EXPECT_EQ(ring.capacity(), 0u) << "a refused reserve leaves the ring as it was";
}

TEST(Ring, CopiesAreDeepAndMovesLeaveAnEmptyRing) {
    Ring<Point> ring;
    for (int64_t i = 0; i < 10; ++i)
        ring.push_back({i, static_cast<float>(i) / 2});
    ring.pop_front();
    Ring<Point> copy = ring;
    copy.push_back({99, 1});
    EXPECT_EQ(ring.size(), 9u);
    EXPECT_EQ(copy.size(), 10u);
    EXPECT_EQ(copy.front().t_us, 1);
    Ring<Point> moved = std::move(copy);
    EXPECT_EQ(moved.size(), 10u);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): what a move leaves
    copy = moved;
    EXPECT_EQ(copy.back().t_us, 99);
    const Ring<Point>& same = copy;
    copy = same;  // a self-assignment changes nothing
    EXPECT_EQ(copy.size(), 10u);
}

TEST(Ring, StandardAlgorithmsWorkOnItsIterators) {
    Ring<int64_t> ring;
    for (int64_t i = 0; i < 50; ++i) {
        ring.push_back(i * 10);
        if (i % 3 == 0) ring.pop_front();  // so that the values wrap around the block
    }
    static_assert(std::random_access_iterator<Ring<int64_t>::const_iterator>);
    static_assert(std::random_access_iterator<Ring<int64_t>::iterator>);
    static_assert(std::is_convertible_v<Ring<int64_t>::iterator, Ring<int64_t>::const_iterator>);
    static_assert(!std::is_convertible_v<Ring<int64_t>::const_iterator, Ring<int64_t>::iterator>);
    const Ring<int64_t>& view = ring;
    EXPECT_TRUE(ring.begin() == view.begin()) << "a mutable and a const iterator compare";
    const auto after = std::upper_bound(view.begin(), view.end(), 305);
    ASSERT_NE(after, view.end());
    EXPECT_EQ(*after, 310);
    EXPECT_EQ(*std::prev(after), 300);
    EXPECT_EQ(after - view.begin(), 310 / 10 - view.front() / 10);
    // Written through a mutable iterator.
    for (int64_t& value : ring)
        value += 1;
    EXPECT_EQ(ring.back(), 491);
    const std::vector<int64_t> values = values_of(ring);
    const Ring<int64_t> from_range(values.begin(), values.end());
    EXPECT_EQ(values_of(from_range), values);
}

}  // namespace
}  // namespace arbiter
