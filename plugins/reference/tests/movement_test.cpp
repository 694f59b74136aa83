// The pure movement checks of movement.hpp, at and around each of their limits.
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "match_script.hpp"
#include "movement.hpp"

namespace arbiter::reference {
namespace {

using test::us;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Sample at(double t_s, double x, double y = 0, double z = 0) {
    return {us(t_s), {x, y, z}};
}

// A 20 Hz track along x at speed_mps, with samples from from_s to to_s inclusive.
std::vector<Sample> steady(double from_s, double to_s, double speed_mps) {
    std::vector<Sample> out;
    for (int64_t t = us(from_s); t <= us(to_s); t += test::kTickUs) {
        const double s = static_cast<double>(t) / 1e6;
        out.push_back(at(s, speed_mps * s));
    }
    return out;
}

std::vector<Sample> join(std::vector<Sample> a, const std::vector<Sample>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Track track_of(const std::vector<Sample>& samples, const std::vector<RttSample>& rtts = {}) {
    Track track;
    track.samples.assign(samples.begin(), samples.end());
    track.rtts.assign(rtts.begin(), rtts.end());
    return track;
}

MovementLimits limits_with(double window_s, double max_lag_allowance_s) {
    MovementLimits limits;
    limits.window_s = window_s;
    limits.max_lag_allowance_s = max_lag_allowance_s;
    return limits;
}

// Names of table rows, for the test names GoogleTest prints.
template <class Case>
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    return info.param.name;
}

// ---------------------------------------------------------------- excess_score

struct ScoreCase {
    std::string name;
    double value;
    double limit;
    double expected;
};

void PrintTo(const ScoreCase& c, std::ostream* os) {
    *os << c.name;
}

class ExcessScore : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ExcessScore, Table) {
    const ScoreCase& c = GetParam();
    const double score = excess_score(c.value, c.limit);
    EXPECT_NEAR(score, c.expected, 1e-9);
    EXPECT_GE(score, 0.0);
    EXPECT_LE(score, 1.0);
}

INSTANTIATE_TEST_SUITE_P(
    Limits, ExcessScore,
    ::testing::Values(
        ScoreCase{"FarBelow", 0.0, 22.0, 0.0}, ScoreCase{"Negative", -5.0, 22.0, 0.0},
        ScoreCase{"JustBelow", 21.999, 22.0, 0.0}, ScoreCase{"AtTheLimit", 22.0, 22.0, 0.0},
        ScoreCase{"JustAbove", 22.0 * 1.0001, 22.0, 1.0 - std::exp(-5.0 * 1e-4)},
        // The header's own figures: about 0.4 at 10 % over, 0.78 at 30 % over.
        ScoreCase{"TenPercentOver", 22.0 * 1.1, 22.0, 1.0 - std::exp(-0.5)},
        ScoreCase{"ThirtyPercentOver", 22.0 * 1.3, 22.0, 1.0 - std::exp(-1.5)},
        ScoreCase{"TwiceTheLimit", 44.0, 22.0, 1.0 - std::exp(-5.0)},
        ScoreCase{"Huge", 1e12, 22.0, 1.0}, ScoreCase{"Infinite", kInf, 22.0, 1.0},
        // A limit that cannot be exceeded meaningfully scores nothing.
        ScoreCase{"ZeroLimit", 10.0, 0.0, 0.0}, ScoreCase{"NegativeLimit", 10.0, -1.0, 0.0},
        ScoreCase{"NaNLimit", 10.0, kNaN, 0.0}, ScoreCase{"InfiniteLimit", 1e300, kInf, 0.0},
        // A non-finite measurement must still give a score in [0, 1].
        ScoreCase{"NaNValue", kNaN, 22.0, 0.0}),
    case_name<ScoreCase>);

TEST(ExcessScoreShape, RisesWithTheValueAndNeverPassesOne) {
    double previous = 0.0;
    for (double ratio = 1.0; ratio <= 20.0; ratio += 0.01) {
        const double score = excess_score(22.0 * ratio, 22.0);
        EXPECT_GE(score, previous) << "at " << ratio << " times the limit";
        EXPECT_LE(score, 1.0) << "at " << ratio << " times the limit";
        previous = score;
    }
    EXPECT_GT(excess_score(22.0 * 1.2, 22.0), excess_score(22.0 * 1.1, 22.0));
}

TEST(ExcessScoreShape, DependsOnlyOnTheRatio) {
    EXPECT_DOUBLE_EQ(excess_score(13.0, 10.0), excess_score(130.0, 100.0));
}

// ---------------------------------------------------------------- lag_allowance_s

struct AllowanceCase {
    std::string name;
    std::vector<Sample> samples;
    std::vector<RttSample> rtts;
    double t0_s;
    MovementLimits limits;
    double expected_s;
};

void PrintTo(const AllowanceCase& c, std::ostream* os) {
    *os << c.name;
}

class LagAllowance : public ::testing::TestWithParam<AllowanceCase> {};

TEST_P(LagAllowance, Table) {
    const AllowanceCase& c = GetParam();
    EXPECT_NEAR(lag_allowance_s(track_of(c.samples, c.rtts), us(c.t0_s), c.limits), c.expected_s,
                1e-9);
}

// 20 Hz from 0 to 10 s, except for 0.8 s of silence between 2.0 and 2.8 s.
std::vector<Sample> with_gap() {
    return join(steady(0.0, 2.0, 5.0), steady(2.8, 10.0, 5.0));
}

RttSample rtt(double t_s, double rtt_s) {
    return {us(t_s), static_cast<uint32_t>(us(rtt_s))};
}

INSTANTIATE_TEST_SUITE_P(
    Gaps, LagAllowance,
    ::testing::Values(
        AllowanceCase{"EmptyTrack", {}, {}, 1.0, {}, 0.0},
        AllowanceCase{"WindowStartsAtTheFirstSample", steady(0, 5, 5), {}, 0.0, {}, 0.0},
        AllowanceCase{"Steady20Hz", steady(0, 5, 5), {}, 3.0, {}, 0.05},
        AllowanceCase{"GapBeforeTheStart", with_gap(), {}, 4.0, {}, 0.8},
        // The first update after the gap may show an old position: it is the start.
        AllowanceCase{"GapEndingAtTheStart", with_gap(), {}, 2.8, {}, 0.8},
        AllowanceCase{"GapAfterTheStartIsNotLag", with_gap(), {}, 2.0, {}, 0.05},
        // The look-back reaches max_lag_allowance_s + 1 s before the start.
        AllowanceCase{"GapAtTheEdgeOfTheLookBack", with_gap(), {}, 5.8, {}, 0.8},
        AllowanceCase{"GapBeyondTheLookBack", with_gap(), {}, 5.85, {}, 0.05},
        AllowanceCase{"LookBackGrowsWithTheCap", with_gap(), {}, 7.8, limits_with(1.0, 4.0), 0.8},
        AllowanceCase{
            "CappedAtTheMaximum", {at(0, 0), at(5, 10), at(5.05, 10.25)}, {}, 5.0, {}, 2.0},
        AllowanceCase{"CapFromTheLimits", with_gap(), {}, 4.0, limits_with(1.0, 0.5), 0.5},
        AllowanceCase{"NoAllowanceAllowed", with_gap(), {}, 4.0, limits_with(1.0, 0.0), 0.0}),
    case_name<AllowanceCase>);

INSTANTIATE_TEST_SUITE_P(
    RoundTrips, LagAllowance,
    ::testing::Values(
        AllowanceCase{"RttBeforeTheStart", steady(0, 10, 5), {rtt(4.5, 0.3)}, 5.0, {}, 0.3},
        AllowanceCase{"RttOneSecondAfterTheStart", steady(0, 10, 5), {rtt(6.0, 0.3)}, 5.0, {}, 0.3},
        AllowanceCase{
            "RttLaterThanThat", steady(0, 10, 5), {{us(6.0) + 1, 300'000}}, 5.0, {}, 0.05},
        AllowanceCase{"RttAtTheEdgeOfTheLookBack", steady(0, 10, 5), {rtt(2.0, 0.3)}, 5.0, {}, 0.3},
        AllowanceCase{
            "RttBeyondTheLookBack", steady(0, 10, 5), {{us(2.0) - 1, 300'000}}, 5.0, {}, 0.05},
        AllowanceCase{"LongestRtt",
                      steady(0, 10, 5),
                      {rtt(4.0, 0.3), rtt(4.5, 0.6), rtt(5, 0.2)},
                      5.0,
                      {},
                      0.6},
        AllowanceCase{"GapLongerThanRtt", with_gap(), {rtt(3.5, 0.5)}, 4.0, {}, 0.8},
        AllowanceCase{"RttLongerThanGap", with_gap(), {rtt(3.5, 1.2)}, 4.0, {}, 1.2},
        AllowanceCase{"RttCapped", steady(0, 10, 5), {rtt(4.5, 3.5)}, 5.0, {}, 2.0}),
    case_name<AllowanceCase>);

// ---------------------------------------------------------------- measure_window

struct Expected {
    double start_s, end_s;
    double elapsed_s, allowance_s;
    double horizontal_m, distance_m;
    double speed;
    int64_t samples;
};

struct WindowCase {
    std::string name;
    std::vector<Sample> samples;
    std::vector<RttSample> rtts;
    MovementLimits limits;
    std::optional<Expected> expected;
};

void PrintTo(const WindowCase& c, std::ostream* os) {
    *os << c.name;
}

class MeasureWindow : public ::testing::TestWithParam<WindowCase> {};

TEST_P(MeasureWindow, Table) {
    const WindowCase& c = GetParam();
    const auto m = measure_window(track_of(c.samples, c.rtts), c.limits);
    ASSERT_EQ(m.has_value(), c.expected.has_value());
    if (!m) return;
    const Expected& e = *c.expected;
    EXPECT_EQ(m->start.t_us, us(e.start_s));
    EXPECT_EQ(m->end.t_us, us(e.end_s));
    EXPECT_NEAR(m->elapsed_s, e.elapsed_s, 1e-9);
    EXPECT_NEAR(m->allowance_s, e.allowance_s, 1e-9);
    EXPECT_NEAR(m->horizontal_m, e.horizontal_m, 1e-9);
    EXPECT_NEAR(m->distance_m, e.distance_m, 1e-9);
    EXPECT_NEAR(m->speed, e.speed, 1e-9);
    EXPECT_EQ(m->samples, e.samples);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, MeasureWindow,
    ::testing::Values(
        WindowCase{"EmptyTrack", {}, {}, {}, std::nullopt},
        WindowCase{"OneSample", {at(0, 0)}, {}, {}, std::nullopt},
        WindowCase{"ShorterThanAWindow", steady(0, 0.95, 10), {}, {}, std::nullopt},
        WindowCase{
            "OneMicrosecondShort", {at(0, 0), {us(1.0) - 1, {10, 0, 0}}}, {}, {}, std::nullopt},
        // No sample before the first: nothing to widen the window by.
        WindowCase{"ExactlyAWindow",
                   steady(0, 1.0, 10),
                   {},
                   {},
                   Expected{0.0, 1.0, 1.0, 0.0, 10.0, 10.0, 10.0, 21}},
        WindowCase{"LatestSampleAtLeastAWindowBack",
                   {at(0, 0), at(0.3, 3), at(0.6, 6), at(0.9, 9), at(1.2, 12), at(1.5, 15)},
                   {},
                   {},
                   Expected{0.3, 1.5, 1.2, 0.3, 12.0, 12.0, 8.0, 5}},
        WindowCase{"SampleExactlyAWindowBackIsTheStart",
                   {at(0, 0), at(0.5, 5), at(1.0, 10), at(1.5, 15)},
                   {},
                   {},
                   Expected{0.5, 1.5, 1.0, 0.5, 10.0, 10.0, 10.0 / 1.5, 3}},
        WindowCase{"SampleJustInsideTheWindowIsNot",
                   {at(0, 0), {us(0.5) + 1, {5, 0, 0}}, at(1.5, 15)},
                   {},
                   {},
                   Expected{0.0, 1.5, 1.5, 0.0, 15.0, 15.0, 10.0, 3}},
        // z is up: it counts for the distance, not for the horizontal speed.
        WindowCase{"ClimbIsNotHorizontal",
                   {at(0, 0, 0, 0), at(1.0, 3, 4, 12)},
                   {},
                   {},
                   Expected{0.0, 1.0, 1.0, 0.0, 5.0, 13.0, 5.0, 2}},
        WindowCase{"Steady20Hz",
                   steady(0, 5, 10),
                   {},
                   {},
                   Expected{4.0, 5.0, 1.0, 0.05, 10.0, 10.0, 10.0 / 1.05, 21}},
        WindowCase{"WindowFromTheLimits",
                   steady(0, 5, 10),
                   {},
                   limits_with(0.5, 2.0),
                   Expected{4.5, 5.0, 0.5, 0.05, 5.0, 5.0, 5.0 / 0.55, 11}},
        WindowCase{"RttWidensTheWindow",
                   steady(0, 5, 10),
                   {rtt(3.9, 0.4)},
                   {},
                   Expected{4.0, 5.0, 1.0, 0.4, 10.0, 10.0, 10.0 / 1.4, 21}}),
    case_name<WindowCase>);

TEST(MeasureWindowAcrossSilence, StartsAtTheLastSampleBeforeIt) {
    // End at 3.5 s: the latest sample at least 1 s back is 2.0 s, the last before the gap.
    const auto samples = join(steady(0.0, 2.0, 5.0), steady(2.8, 3.5, 5.0));
    const auto m = measure_window(track_of(samples), {});
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->start.t_us, us(2.0));
    EXPECT_NEAR(m->elapsed_s, 1.5, 1e-9);
    EXPECT_NEAR(m->allowance_s, 0.05, 1e-9);  // the gap is inside the window, not before
    EXPECT_NEAR(m->horizontal_m, 7.5, 1e-9);
    EXPECT_EQ(m->samples, 16);
}

}  // namespace
}  // namespace arbiter::reference
