// luanti.speed as a pure function: the limit from the allowance, windows of relay time,
// and runs of windows over the limit that must last sustained_s.
#include <cmath>
#include <optional>

#include <gtest/gtest.h>

#include "speed.hpp"

namespace {

using namespace arbiter::luanti;

constexpr int64_t kStep = 125'000;  // 1/8 s: speeds and distances exact in binary

TEST(SpeedLimit, FollowsThePrivilegeAndTheOverride) {
    const SpeedSettings settings;  // walk 4, fast 20, tolerance 1.3
    Allowance walker;
    EXPECT_DOUBLE_EQ(speed_limit(walker, settings), 5.2);
    Allowance fast;
    fast.fast = true;
    EXPECT_DOUBLE_EQ(speed_limit(fast, settings), 26.0);
    fast.speed = 0.5;
    EXPECT_DOUBLE_EQ(speed_limit(fast, settings), 13.0);
    Allowance frozen;
    frozen.speed = 0;
    EXPECT_EQ(speed_limit(frozen, settings), 0.0);
}

// Runs a player at speed(t) along x for `seconds`, one position every 1/8 s, against a
// limit of 8 m/s; returns the last finding.
template <class Speed>
std::optional<SpeedFinding> run(Speed speed, double seconds, const SpeedSettings& settings,
                                int* findings = nullptr) {
    SpeedTrack track;
    std::optional<SpeedFinding> last;
    double x = 0;
    for (int64_t t = 0; t <= static_cast<int64_t>(seconds * 1e6); t += kStep) {
        if (t > 0) x += speed(static_cast<double>(t) / 1e6) * 0.125;
        if (auto found = add_speed_position(track, t, x, 0, 8.0, settings)) {
            last = found;
            if (findings) ++*findings;
        }
    }
    return last;
}

TEST(Speed, ExactlyAtTheLimitIsNotOverIt) {
    EXPECT_FALSE(run([](double) { return 8.0; }, 30, SpeedSettings{}));
}

TEST(Speed, JustOverTheLimitForSustainedSecondsIsAFinding) {
    SpeedSettings settings;  // windows of 1 s, sustained 2 s
    // Over for three whole windows, [0,1] to [2,3]: found at 3 s exactly.
    auto found = run([](double t) { return t <= 3.0 ? 8.5 : 4.0; }, 10, settings);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->windows, 3);
    EXPECT_EQ(found->sustained_s, 3.0);
    EXPECT_EQ(found->from_us, 0);
    EXPECT_EQ(found->to_us, 3 * 1'000'000);
    EXPECT_EQ(found->mean_mps, 8.5);
    EXPECT_EQ(found->limit_mps, 8.0);
    EXPECT_GT(speed_score(*found), 0.0);
}

TEST(Speed, ABurstOverTheLimitIsNotAFinding) {
    // A punch's knockback: 30 m/s for a quarter second inside one window.
    EXPECT_FALSE(
        run([](double t) { return t > 1.0 && t <= 1.25 ? 30.0 : 4.0; }, 10, SpeedSettings{}));
    // The same straddling two windows, [1,2] and [2,3]: both over, still a burst, even
    // with a sustained_s the two windows last.
    SpeedSettings short_run;
    short_run.sustained_s = 1.5;
    EXPECT_FALSE(run([](double t) { return t > 1.875 && t <= 2.125 ? 30.0 : 4.0; }, 10, short_run));
    // Over for one window, under for the next, over again: never two in a row.
    EXPECT_FALSE(run([](double t) { return static_cast<int>(std::ceil(t)) % 2 ? 9.0 : 4.0; }, 20,
                     SpeedSettings{}));
}

TEST(Speed, TheRunMustLastSustainedSeconds) {
    SpeedSettings settings;
    settings.sustained_s = 3.5;
    // Three windows over: 3 s, short of 3.5.
    EXPECT_FALSE(run([](double t) { return t <= 3.0 ? 9.0 : 4.0; }, 10, settings));
    // Four: 4 s.
    auto found = run([](double t) { return t <= 4.0 ? 9.0 : 4.0; }, 10, settings);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->windows, 4);
    EXPECT_EQ(found->sustained_s, 4.0);
}

TEST(Speed, EveryWindowOfAContinuingRunIsAFinding) {
    int findings = 0;
    auto found = run([](double) { return 16.0; }, 10, SpeedSettings{}, &findings);
    ASSERT_TRUE(found);
    EXPECT_EQ(findings, 8);  // windows 3 to 10
    EXPECT_EQ(found->windows, 10);
    EXPECT_EQ(found->distance_m, 160.0);
    EXPECT_EQ(found->mean_mps, 16.0);
    EXPECT_NEAR(speed_score(*found), 1.0 - std::exp(-4.0), 1e-12);  // twice the limit
}

TEST(Speed, AWindowClosesOnlyAfterWindowSeconds) {
    SpeedTrack track;
    const SpeedSettings settings;
    EXPECT_FALSE(add_speed_position(track, 0, 0, 0, 8.0, settings));
    // 100 m in 0.875 s: the window is still open, nothing is measured yet.
    EXPECT_FALSE(add_speed_position(track, 875'000, 100, 0, 8.0, settings));
    EXPECT_EQ(track.run_windows, 0);
    EXPECT_FALSE(add_speed_position(track, 1'000'000, 100, 0, 8.0, settings));
    EXPECT_EQ(track.run_windows, 1);
    EXPECT_EQ(track.window_start_us, 1'000'000);
}

TEST(Speed, HorizontalDistanceOnly) {
    // Falling 50 m in a second is not speed.
    SpeedTrack track;
    EXPECT_FALSE(add_speed_position(track, 0, 0, 0, 8.0, SpeedSettings{}));
    EXPECT_FALSE(add_speed_position(track, 1'000'000, 3, 4, 8.0, SpeedSettings{}));  // 5 m/s
    EXPECT_EQ(track.run_windows, 0);
}

TEST(Speed, TimeGoingBackwardsStartsAgain) {
    SpeedTrack track;
    const SpeedSettings settings;
    add_speed_position(track, 5'000'000, 0, 0, 8.0, settings);
    add_speed_position(track, 6'000'000, 20, 0, 8.0, settings);
    EXPECT_EQ(track.run_windows, 1);
    EXPECT_FALSE(add_speed_position(track, 4'000'000, 500, 0, 8.0, settings));
    EXPECT_EQ(track.run_windows, 0);
    EXPECT_EQ(track.window_start_us, 4'000'000);
}

}  // namespace
