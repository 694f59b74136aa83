// luanti.noclip as a pure function: horizontal distance over consecutive steps inside.
#include <cmath>
#include <optional>

#include <gtest/gtest.h>

#include "noclip.hpp"

namespace {

using namespace arbiter::luanti;

// Steps 1.. n inside, 0.5 m apart along x.
std::optional<NoclipFinding> walk_inside(NoclipTrack& track, uint64_t first_step, int steps,
                                         double x0 = 0) {
    std::optional<NoclipFinding> last;
    for (int i = 0; i < steps; ++i)
        if (auto found = add_inside_step(track, first_step + static_cast<uint64_t>(i), 100'000 * i,
                                         x0 + 0.5 * i, 0, 3, NoclipSettings{}))
            last = found;
    return last;
}

TEST(Noclip, FoundJustPastTheDistance) {
    NoclipTrack track;
    EXPECT_FALSE(walk_inside(track, 1, 5));      // 4 moves of 0.5 m: 2.0 m, at the limit
    auto found = walk_inside(track, 6, 1, 2.5);  // the next step: 2.5 m
    ASSERT_TRUE(found);
    EXPECT_EQ(found->distance_m, 2.5);
    EXPECT_EQ(found->limit_m, 2.0);
    EXPECT_EQ(found->steps, 6);
    EXPECT_EQ(found->start_x, 0.0);
    EXPECT_EQ(found->x, 2.5);
    EXPECT_NEAR(noclip_score(*found), 1.0 - std::exp(-0.25), 1e-12);
}

TEST(Noclip, AStepOutsideStartsAnotherStretch) {
    NoclipTrack track;
    EXPECT_FALSE(walk_inside(track, 1, 4));       // steps 1-4: 1.5 m
    EXPECT_FALSE(walk_inside(track, 6, 4, 2.0));  // step 5 was outside; 6-9: 1.5 m
    EXPECT_EQ(track.distance_m, 1.5);
    EXPECT_EQ(track.start_x, 2.0);
}

TEST(Noclip, ASecondReportOfTheSameStepAddsNothing) {
    NoclipTrack track;
    EXPECT_FALSE(add_inside_step(track, 1, 0, 0, 0, 0, NoclipSettings{}));
    EXPECT_FALSE(add_inside_step(track, 1, 0, 5, 0, 0, NoclipSettings{}));  // head, same step
    EXPECT_EQ(track.distance_m, 0.0);
    EXPECT_EQ(track.steps, 1);
}

TEST(Noclip, StayingInsideInPlaceIsNeverAFinding) {
    // Sand fell on the player, who waits to be dug out: a minute inside, not moving.
    NoclipTrack track;
    for (uint64_t step = 1; step < 700; ++step)
        EXPECT_FALSE(add_inside_step(track, step, static_cast<int64_t>(step) * 90'000, 3, 4, 0,
                                     NoclipSettings{}));
    EXPECT_EQ(track.steps, 699);
}

}  // namespace
