// The token throttle without a socket: each bound and its window, who is exempt from the
// overall one, and the per-address table that forgets the least recent address.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "serve/token_throttle.hpp"

namespace arbiter::host::serve {
namespace {

using std::chrono::milliseconds;

TokenThrottle::Clock::time_point at(int64_t ms) {
    return TokenThrottle::Clock::time_point{} + milliseconds(ms);
}

TEST(TokenThrottle, AnAddressPastItsBoundIsRefusedUntilItsWindowEnds) {
    TokenThrottle throttle({.per_address = 2, .overall = 100, .window = milliseconds(10'000)});
    EXPECT_TRUE(throttle.failed("10.0.0.1", at(0))) << "the first of a tally";
    EXPECT_EQ(throttle.refusal("10.0.0.1", at(1)), "");
    EXPECT_FALSE(throttle.failed("10.0.0.1", at(1'000)));
    const std::string refusal = throttle.refusal("10.0.0.1", at(2'000));
    EXPECT_NE(refusal.find("too many failed hellos from 10.0.0.1"), std::string::npos);
    EXPECT_NE(refusal.find("for 8 s more"), std::string::npos) << refusal;
    EXPECT_EQ(throttle.refusal("10.0.0.2", at(2'000)), "") << "another address is not held to it";
    // Refusals do not lengthen the wait: the window runs from the first failure.
    EXPECT_NE(throttle.refusal("10.0.0.1", at(9'999)), "");
    EXPECT_EQ(throttle.refusal("10.0.0.1", at(10'000)), "");

    const auto tally = throttle.take_tally(at(10'000));
    EXPECT_EQ(tally.failures, 2u);
    EXPECT_EQ(tally.refused_unchecked, 2u);
    EXPECT_EQ(tally.addresses_throttled, 0u) << "its window is over";
    EXPECT_TRUE(throttle.take_tally(at(10'000)).empty());
}

TEST(TokenThrottle, PastTheOverallBoundOnlyAddressesThatGaveARightTokenAreChecked) {
    TokenThrottle throttle({.per_address = 100, .overall = 3, .window = milliseconds(10'000)});
    throttle.succeeded("10.0.0.9", at(0));
    for (int i = 0; i < 3; ++i)
        throttle.failed("10.0.1." + std::to_string(i), at(i));
    EXPECT_NE(throttle.refusal("10.0.2.1", at(5)).find("from all addresses"), std::string::npos);
    EXPECT_NE(throttle.refusal("10.0.1.0", at(5)), "");
    EXPECT_EQ(throttle.refusal("10.0.0.9", at(5)), "");
    EXPECT_TRUE(throttle.take_tally(at(5)).overall_throttled);
    EXPECT_EQ(throttle.refusal("10.0.2.1", at(10'000)), "") << "the window is over";
}

TEST(TokenThrottle, TheTableForgetsTheLeastRecentAddressOnceFull) {
    TokenThrottle throttle(
        {.per_address = 1, .overall = 1'000'000, .window = milliseconds(60'000), .addresses = 16});
    throttle.failed("old", at(0));
    throttle.failed("recent", at(0));
    ASSERT_NE(throttle.refusal("old", at(1)), "");
    // "old" was just looked at: it is now more recent than "recent".
    for (int i = 0; i < 15; ++i)
        throttle.failed("flood-" + std::to_string(i), at(2));
    EXPECT_EQ(throttle.remembered(), 16u);
    EXPECT_NE(throttle.refusal("old", at(3)), "");
    EXPECT_EQ(throttle.refusal("recent", at(3)), "") << "forgotten: the least recent";
    for (int i = 0; i < 1000; ++i)
        throttle.succeeded("good-" + std::to_string(i), at(4));
    EXPECT_EQ(throttle.remembered(), 32u);
    EXPECT_NE(throttle.refusal("old", at(5)), "") << "successes have a table of their own";
}

}  // namespace
}  // namespace arbiter::host::serve
