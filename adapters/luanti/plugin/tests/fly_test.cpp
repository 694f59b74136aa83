// luanti.fly as a pure function: the limit from the jump physics, and stretches of
// unsupported positions that do not fall.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include <gtest/gtest.h>

#include "fly.hpp"
#include "luanti_script.hpp"

namespace {

using namespace arbiter::luanti;

TEST(FlyLimit, TheRiseOfAJumpPlusTheGrace) {
    const FlySettings settings;  // jump 6.5 m/s, gravity 9.81, grace 1.5 s
    Allowance a;
    EXPECT_DOUBLE_EQ(rise_time_s(a, settings), 6.5 / 9.81);
    EXPECT_DOUBLE_EQ(hover_limit_s(a, settings), 6.5 / 9.81 + 1.5);
    a.jump = 2;
    a.gravity = 0.5;  // four times as long a rise
    EXPECT_DOUBLE_EQ(rise_time_s(a, settings), 4 * 6.5 / 9.81);
    a.gravity = 0;  // nothing pulls the player down: floating is the game
    EXPECT_EQ(hover_limit_s(a, settings), std::numeric_limits<double>::infinity());
}

struct Sample {
    double z;
    bool supported;
};

// Feeds z(t) every `step_us` for `seconds` against limit_s; returns the last finding and
// counts them.
std::optional<FlyFinding> run(const std::function<Sample(double)>& at, double seconds,
                              double limit_s, int64_t step_us = 100'000, int* findings = nullptr,
                              const FlySettings& settings = FlySettings{}) {
    FlyTrack track;
    std::optional<FlyFinding> last;
    for (int64_t t = 0; t <= static_cast<int64_t>(seconds * 1e6); t += step_us) {
        const Sample s = at(static_cast<double>(t) / 1e6);
        if (auto found = add_fly_position(track, t, 1, 2, s.z, s.supported, limit_s, settings)) {
            last = found;
            if (findings) ++*findings;
        }
    }
    return last;
}

TEST(Fly, HoveringIsFoundJustPastTheLimit) {
    int findings = 0;
    // Unsupported at 5 m from t = 0, still.
    auto hover = [](double) { return Sample{5.0, false}; };
    EXPECT_FALSE(run(hover, 2.0, 2.0));  // 2.0 s: at the limit, not past it
    auto found = run(hover, 2.1, 2.0, 100'000, &findings);
    ASSERT_TRUE(found);
    EXPECT_EQ(findings, 1);
    EXPECT_NEAR(found->hover_s, 2.1, 1e-9);
    EXPECT_EQ(found->from_us, 0);
    EXPECT_EQ(found->top_z, 5.0);
    EXPECT_NEAR(fly_score(*found), 1.0 - std::exp(-0.1 / 2.0), 1e-9);
}

TEST(Fly, SupportEndsAStretch) {
    // Unsupported 1.5 s, supported one step, unsupported 1.5 s: never 2 s in one stretch.
    auto steps = [](double t) { return Sample{5.0, std::fabs(t - 1.6) < 0.01}; };
    EXPECT_FALSE(run(steps, 3.1, 2.0));
}

TEST(Fly, FallingIsDroppingMoreThanFallDropOverFallLook) {
    // 0.3 m/s down: 0.15 m in 0.5 s, falling; never a stretch.
    EXPECT_FALSE(run([](double t) { return Sample{50 - 0.3 * t, false}; }, 20, 2.0));
    // 0.1 m/s down: 0.05 m in 0.5 s, not falling: a slow descent is hovering.
    EXPECT_TRUE(run([](double t) { return Sample{50 - 0.1 * t, false}; }, 20, 2.0));
    // Rising is not falling either.
    EXPECT_TRUE(run([](double t) { return Sample{5 + t, false}; }, 20, 2.0));
}

TEST(Fly, AFallFromATowerIsFallingFromItsFirstSteps) {
    // Stands on a 50 m tower until 2 s, then falls (no drag) to the ground at 0.
    auto tower = [](double t) {
        if (t <= 2.0) return Sample{50, true};
        const double tau = t - 2.0;
        const double z = 50 - 0.5 * 9.81 * tau * tau;
        return z > 0 ? Sample{z, false} : Sample{0, true};
    };
    EXPECT_FALSE(run(tower, 20, 0.3, luanti_test::kStepUs));
}

TEST(Fly, AJumpNeverReachesTheLimit) {
    const FlySettings settings;
    const double limit = hover_limit_s(Allowance{}, settings);
    // Jumping every 1.5 s; and with four times the jump (a game's high-jump boots).
    auto jumper = [](double jump) {
        return [jump](double t) {
            const double tau = std::fmod(t, 1.5 * jump);
            const double z = 6.5 * jump * tau - 0.5 * 9.81 * tau * tau;
            return z > 0 ? Sample{z, false} : Sample{0, true};
        };
    };
    EXPECT_FALSE(run(jumper(1.0), 60, limit, luanti_test::kStepUs, nullptr, settings));
    Allowance high;
    high.jump = 4;
    EXPECT_FALSE(run(jumper(4.0), 60, hover_limit_s(high, settings), luanti_test::kStepUs, nullptr,
                     settings));
    // The same high jump judged by the default allowance's limit is a finding: the check
    // needs the allowance.
    EXPECT_TRUE(run(jumper(4.0), 60, limit, luanti_test::kStepUs, nullptr, settings));
}

}  // namespace
