// The quantised-view check (schema 1.2's look): yaw changes that are all whole multiples
// of one step finer than any mouse's draw aim.quantised; a mouse's coarser step, and a
// hand's unquantised view, draw nothing.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/testing.hpp>

#include "kaladin_analyzer.hpp"
#include "quantum.hpp"

namespace arbiter::kaladin {
namespace {

using testing::Harness;

// 20 seconds of one player's looks at 50 a second, the yaw moved by `step` times a random
// whole count (-40 to 40, never 0) each time.
std::vector<uint8_t> looks(double step, bool quantised, uint32_t seed) {
    BatchBuilder builder("relay", 1);
    build::PlayerJoin join;
    join.account_id = "p";
    builder.add(0, 0, 1, join);
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> counts(1, 40);
    std::uniform_real_distribution<double> hand(-40.0, 40.0);
    double yaw = 1.0;
    for (int i = 1; i <= 1000; ++i) {
        const int count = counts(random) * (random() % 2 ? 1 : -1);
        yaw += quantised ? step * count : step * hand(random);
        builder.add(i * 20'000, static_cast<uint64_t>(i), 1,
                    build::Position{.look = fb::Look(static_cast<float>(yaw), 0.1f)});
    }
    return builder.finish();
}

size_t quantised_signals(const std::vector<uint8_t>& batch) {
    Harness<KaladinAnalyzer> harness;
    size_t n = 0;
    for (const auto& s : harness.feed(batch))
        n += s.code == "aim.quantised" ? 1 : 0;
    return n;
}

TEST(KaladinQuantum, TheFitFindsOneStepOrNone) {
    Ring<double> changes;
    for (double c : {3e-6, -9e-6, 6e-6, 3e-6, 30e-6})
        changes.push_back(c);
    const auto fit = fit_quantum(changes, 0.05, 1e-6);
    ASSERT_TRUE(fit);
    EXPECT_NEAR(fit->step_rad, 3e-6, 1e-12);
    EXPECT_EQ(fit->largest_multiple, 10.0);
    EXPECT_FALSE(fit_quantum(changes, 0.05, 4e-6)) << "a step under the float grid's floor";
    changes.push_back(4.5e-6);  // one and a half steps
    EXPECT_FALSE(fit_quantum(changes, 0.05, 1e-6));
    // A float's grid near 2 pi is 4.8e-7 rad: the floor is twenty of it.
    EXPECT_NEAR(min_step_for(6.0), 20 * 4.76837158203125e-7, 1e-15);
    EXPECT_NEAR(min_step_for(0.5), 20 * 4.76837158203125e-7, 1e-15);
    EXPECT_NEAR(min_step_for(100.0), 20 * 7.62939453125e-6, 1e-15);
}

TEST(KaladinQuantum, AStepFinerThanAnyMouseIsSignalledWithItsEvidence) {
    // 1e-5 rad steps, well within a float's precision at a yaw near 1.
    Harness<KaladinAnalyzer> harness;
    const auto signals = harness.feed(looks(1e-5, true, 1));
    const auto it = std::find_if(signals.begin(), signals.end(),
                                 [](const auto& s) { return s.code == "aim.quantised"; });
    ASSERT_NE(it, signals.end());
    EXPECT_FALSE(it->tripwire) << "behavioural evidence: Monitor at most alone";
    EXPECT_DOUBLE_EQ(it->score, 0.5);
    EXPECT_NE(it->evidence.find("\"max_step_rad\":"), std::string::npos) << it->evidence;
    EXPECT_NE(it->evidence.find("\"changes\":100"), std::string::npos) << it->evidence;
}

TEST(KaladinQuantum, AMouseStepAndAnUnquantisedViewDrawNothing) {
    // Counter-Strike's 0.022 degree a count at sensitivity 1: 3.8e-4 rad.
    EXPECT_EQ(quantised_signals(looks(3.84e-4, true, 2)), 0u);
    for (uint32_t seed = 3; seed < 8; ++seed)
        EXPECT_EQ(quantised_signals(looks(1e-5, false, seed)), 0u) << seed;
}

TEST(KaladinQuantum, TheChangesSurviveASaveAndRestore) {
    const auto batch = looks(1e-5, true, 4);
    Harness<KaladinAnalyzer> first;
    // Half the looks, then a reload.
    BatchBuilder half("relay", 1);
    const auto view = Batch::verified(batch);
    ASSERT_TRUE(view);
    size_t i = 0;
    for (const fb::Event* e : view->events()) {
        if (++i > 60) break;
        if (const auto look = look_of(*e))
            half.add(e->relay_time_us(), e->tick(), 1, build::Position{.look = *look});
    }
    first.feed(half.finish());
    const auto blob = first.save_state();
    ASSERT_TRUE(blob);
    Harness<KaladinAnalyzer> second;
    ASSERT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    // The next 45 changes complete the window of 100 only with the 59 restored.
    BatchBuilder rest("relay", 1, 1);
    i = 0;
    size_t fed = 0;
    for (const fb::Event* e : view->events()) {
        if (++i <= 60) continue;
        if (++fed > 45) break;
        rest.add(e->relay_time_us(), e->tick(), 1, build::Position{.look = *look_of(*e)});
    }
    size_t n = 0;
    for (const auto& s : second.feed(rest.finish()))
        n += s.code == "aim.quantised" ? 1 : 0;
    EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace arbiter::kaladin
