// The pure movement checks of movement.hpp, at and around each of their limits.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
    track.rtts.assign(Ring<RttSample>(rtts.begin(), rtts.end()), rtts.empty());
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

// ---------------------------------------------------------------- track shapes

// A track along x at speed_mps, one sample every step_us from from_s to to_s inclusive.
std::vector<Sample> every(double from_s, double to_s, int64_t step_us, double speed_mps) {
    std::vector<Sample> out;
    for (int64_t t = us(from_s); t <= us(to_s); t += step_us) {
        const double s = static_cast<double>(t) / 1e6;
        out.push_back(at(s, speed_mps * s));
    }
    return out;
}

// `count` updates arriving spacing_us apart from at_s: a catch-up burst. Each shows where a
// runner at speed_mps was when it was sent, one tick apart from sent_from_s.
std::vector<Sample> burst(double at_s, int count, int64_t spacing_us, double sent_from_s,
                          double speed_mps) {
    std::vector<Sample> out;
    for (int k = 0; k < count; ++k) {
        const double sent_s = sent_from_s + 0.05 * k;
        out.push_back({us(at_s) + k * spacing_us, {speed_mps * sent_s, 0, 0}});
    }
    return out;
}

// A runner at 10 m/s, 20 Hz: silence after 2.0 s, then at 2.8 s the 16 updates sent meanwhile
// (2.05 to 2.8 s) 0.3 ms apart, then 20 Hz again from 2.85 s to until_s.
std::vector<Sample> spike(double until_s) {
    return join(join(steady(0.0, 2.0, 10.0), burst(2.8, 16, 300, 2.05, 10.0)),
                steady(2.85, until_s, 10.0));
}

// ---------------------------------------------------------------- typical_interval_us

struct TypicalCase {
    std::string name;
    std::vector<Sample> samples;
    int64_t expected_us;
};

void PrintTo(const TypicalCase& c, std::ostream* os) {
    *os << c.name;
}

class TypicalInterval : public ::testing::TestWithParam<TypicalCase> {};

TEST_P(TypicalInterval, Table) {
    const TypicalCase& c = GetParam();
    EXPECT_EQ(typical_interval_us(track_of(c.samples)), c.expected_us);
}

// 20 Hz from 0 to 10 s, except for 0.8 s of silence between 2.0 and 2.8 s.
std::vector<Sample> with_gap() {
    return join(steady(0.0, 2.0, 5.0), steady(2.8, 10.0, 5.0));
}

INSTANTIATE_TEST_SUITE_P(
    Medians, TypicalInterval,
    ::testing::Values(TypicalCase{"EmptyTrack", {}, 0}, TypicalCase{"OneSample", {at(0, 0)}, 0},
                      TypicalCase{"TwoSamples", {at(0, 0), at(0.3, 3)}, 300'000},
                      TypicalCase{"Steady20Hz", steady(0, 5, 5), 50'000},
                      TypicalCase{"Steady10Hz", every(0, 5, 100'000, 5), 100'000},
                      TypicalCase{"AGapDoesNotMoveIt", with_gap(), 50'000},
                      // Gaps of 40, 60, 50, 50 and 1000 ms: the median is 50 ms, the mean 240 ms.
                      TypicalCase{
                          "MedianNotMean",
                          {at(0, 0), at(0.04, 0), at(0.1, 0), at(0.15, 0), at(0.2, 0), at(1.2, 0)},
                          50'000},
                      TypicalCase{"AShortBurstDoesNotMoveIt", spike(5.0), 50'000}),
    case_name<TypicalCase>);

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

RttSample rtt(double t_s, double rtt_s) {
    return {us(t_s), static_cast<uint32_t>(us(rtt_s))};
}

// The allowance is the longest receive gap in the look-back, less the typical interval
// (50 ms at 20 Hz), capped at max_lag_allowance_s.
INSTANTIATE_TEST_SUITE_P(
    Gaps, LagAllowance,
    ::testing::Values(
        AllowanceCase{"EmptyTrack", {}, {}, 1.0, {}, 0.0},
        AllowanceCase{"WindowStartsAtTheFirstSample", steady(0, 5, 5), {}, 0.0, {}, 0.0},
        // The usual spacing of updates is not lag.
        AllowanceCase{"Steady20Hz", steady(0, 5, 5), {}, 3.0, {}, 0.0},
        AllowanceCase{"Steady10Hz", every(0, 5, 100'000, 5), {}, 3.0, {}, 0.0},
        AllowanceCase{"GapBeforeTheStart", with_gap(), {}, 4.0, {}, 0.75},
        // The first update after the gap may show an old position: it is the start.
        AllowanceCase{"GapEndingAtTheStart", with_gap(), {}, 2.8, {}, 0.75},
        AllowanceCase{"GapAfterTheStartIsNotLag", with_gap(), {}, 2.0, {}, 0.0},
        AllowanceCase{"TypicalIntervalIsSubtracted",
                      join(every(0, 2, 100'000, 5), every(2.8, 10, 100'000, 5)),
                      {},
                      4.0,
                      {},
                      0.7},
        // The look-back reaches max_lag_allowance_s + 1 s before the start.
        AllowanceCase{"GapAtTheEdgeOfTheLookBack", with_gap(), {}, 5.8, {}, 0.75},
        AllowanceCase{"GapJustBeyondTheLookBack", with_gap(), {}, 5.800001, {}, 0.0},
        AllowanceCase{"LookBackGrowsWithTheCap", with_gap(), {}, 7.8, limits_with(1.0, 4.0), 0.75},
        AllowanceCase{
            "GapJustBeyondTheLongerLookBack", with_gap(), {}, 7.800001, limits_with(1.0, 4.0), 0.0},
        // At and around the cap of 2 s: gaps of 2.0, 2.05, 2.1 and 3 s.
        AllowanceCase{
            "JustUnderTheCap", join(steady(0, 2, 5), steady(4.0, 10, 5)), {}, 5.0, {}, 1.95},
        AllowanceCase{"AtTheCap", join(steady(0, 2, 5), steady(4.05, 10, 5)), {}, 5.0, {}, 2.0},
        AllowanceCase{
            "JustOverTheCap", join(steady(0, 2, 5), steady(4.1, 10, 5)), {}, 5.0, {}, 2.0},
        AllowanceCase{
            "CappedAtTheMaximum", join(steady(0, 2, 5), steady(5.0, 10, 5)), {}, 5.5, {}, 2.0},
        AllowanceCase{"CapFromTheLimits", with_gap(), {}, 4.0, limits_with(1.0, 0.5), 0.5},
        AllowanceCase{"UnderACapFromTheLimits", with_gap(), {}, 4.0, limits_with(1.0, 0.8), 0.75},
        AllowanceCase{"NoAllowanceAllowed", with_gap(), {}, 4.0, limits_with(1.0, 0.0), 0.0}),
    case_name<AllowanceCase>);

// A client controls its replies to pings: no round trip, however long or wherever it falls,
// changes the allowance. Each row is the allowance of the same track without them.
INSTANTIATE_TEST_SUITE_P(
    RoundTripsDoNotCount, LagAllowance,
    ::testing::Values(
        AllowanceCase{"RttBeforeTheStart", steady(0, 10, 5), {rtt(4.5, 0.3)}, 5.0, {}, 0.0},
        AllowanceCase{"RttOneSecondAfterTheStart", steady(0, 10, 5), {rtt(6.0, 0.3)}, 5.0, {}, 0.0},
        AllowanceCase{"RttAtTheEdgeOfTheLookBack", steady(0, 10, 5), {rtt(2.0, 0.3)}, 5.0, {}, 0.0},
        AllowanceCase{"SeveralRtts",
                      steady(0, 10, 5),
                      {rtt(4.0, 0.3), rtt(4.5, 0.6), rtt(5, 0.2)},
                      5.0,
                      {},
                      0.0},
        AllowanceCase{"OneSecondRtts",
                      steady(0, 10, 5),
                      {rtt(3.0, 1.0), rtt(4.0, 1.0), rtt(5.0, 1.0), rtt(6.0, 1.0)},
                      5.0,
                      {},
                      0.0},
        AllowanceCase{"TwoSecondRtts",
                      steady(0, 10, 5),
                      {rtt(3.0, 2.0), rtt(4.0, 2.0), rtt(5.0, 2.0), rtt(6.0, 2.0)},
                      5.0,
                      {},
                      0.0},
        AllowanceCase{"RttOverTheCap", steady(0, 10, 5), {rtt(4.5, 3.5)}, 5.0, {}, 0.0},
        AllowanceCase{"GapLongerThanRtt", with_gap(), {rtt(3.5, 0.5)}, 4.0, {}, 0.75},
        AllowanceCase{"RttLongerThanGap", with_gap(), {rtt(3.5, 1.2)}, 4.0, {}, 0.75}),
    case_name<AllowanceCase>);

TEST(LagAllowanceRoundTrips, NoRoundTripChangesAnyAllowance) {
    // A 2 s round trip every 100 ms, over a track with a gap: every start, the same answer.
    std::vector<RttSample> rtts;
    for (double t = 0.0; t < 10.0; t += 0.1)
        rtts.push_back(rtt(t, 2.0));
    const Track without = track_of(with_gap());
    const Track with = track_of(with_gap(), rtts);
    for (double t0 = 0.0; t0 <= 10.0; t0 += 0.05)
        EXPECT_EQ(lag_allowance_s(with, us(t0), {}), lag_allowance_s(without, us(t0), {}))
            << "window starting at " << t0 << " s";
}

// ---------------------------------------------------------------- window_start_index

struct StartCase {
    std::string name;
    std::vector<Sample> samples;
    MovementLimits limits;
    size_t expected;
};

void PrintTo(const StartCase& c, std::ostream* os) {
    *os << c.name;
}

class WindowStartIndex : public ::testing::TestWithParam<StartCase> {};

TEST_P(WindowStartIndex, Table) {
    const StartCase& c = GetParam();
    EXPECT_EQ(window_start_index(track_of(c.samples), c.limits), c.expected);
}

MovementLimits limits_with_burst_gap(double burst_gap_s) {
    MovementLimits limits;
    limits.burst_gap_s = burst_gap_s;
    return limits;
}

// 20 Hz to 3.0 s (index 60), two more updates spacing_us apart (61, 62), 20 Hz from 3.1 s
// to 4.0 s: with a 1 s window, the latest sample at least a window back is index 60.
std::vector<Sample> pair_after_3s(int64_t spacing_us) {
    return join(join(steady(0, 3.0, 5),
                     {{us(3.0) + spacing_us, {15, 0, 0}}, {us(3.0) + 2 * spacing_us, {15, 0, 0}}}),
                steady(3.1, 4.0, 5));
}

// 20 Hz to 1 s, silence, then a burst of 400 updates 0.3 ms apart that the track ends in.
std::vector<Sample> ending_in_a_long_burst() {
    return join(steady(0, 1.0, 10), burst(1.8, 400, 300, 1.05, 10));
}

INSTANTIATE_TEST_SUITE_P(
    Starts, WindowStartIndex,
    ::testing::Values(
        // While the track is shorter than a window: samples.size().
        StartCase{"EmptyTrack", {}, {}, 0}, StartCase{"OneSample", {at(0, 0)}, {}, 1},
        StartCase{"ShorterThanAWindow", steady(0, 0.95, 10), {}, 20},
        StartCase{"ExactlyAWindow", steady(0, 1.0, 10), {}, 0},
        StartCase{"Steady20Hz", steady(0, 5, 10), {}, 80},
        StartCase{"SampleJustInsideTheWindowIsNot",
                  {at(0, 0), {us(0.5) + 1, {5, 0, 0}}, at(1.5, 15)},
                  {},
                  0},
        // spike(3.85): 0 to 2.0 s (indices 0 to 40), the burst at 2.8 s (41 to 56, the last
        // at 2.8045 s), 2.85 s on (57 on). The window's length picks the first candidate.
        StartCase{"AfterTheBurst", spike(3.85), limits_with(1.0, 2.0), 57},
        StartCase{"AtTheBurstsLastUpdate", spike(3.85), limits_with(1.04545, 2.0), 56},
        StartCase{"InsideTheBurstMovesToItsLast", spike(3.85), limits_with(1.048, 2.0), 56},
        StartCase{"AtTheBurstsFirstUpdateMovesToItsLast", spike(3.85), limits_with(1.0499, 2.0),
                  56},
        StartCase{"BeforeTheSilenceStays", spike(3.85), limits_with(1.06, 2.0), 40},
        // A burst is updates less than burst_gap_s (5 ms) apart...
        StartCase{"PairWellInsideTheSpacing", pair_after_3s(300), {}, 62},
        StartCase{"PairJustInsideTheSpacing", pair_after_3s(4'999), {}, 62},
        StartCase{"PairAtTheSpacing", pair_after_3s(5'000), {}, 60},
        StartCase{"PairBeyondTheSpacing", pair_after_3s(20'000), {}, 60},
        StartCase{"ALargerBoundFromTheConfig", pair_after_3s(9'000), limits_with_burst_gap(0.01),
                  62},
        // ...and the start moves a quarter of a window at most: at 500 Hz every gap is
        // under 5 ms, and the start goes from 1.0 s (index 500) to 1.25 s and no further.
        StartCase{"AQuarterWindowAtMost", every(0, 2.0, 2'000, 5), {}, 625},
        // A burst the window ends in: the start stops at the quarter-window bound (25 ms,
        // 83 updates on), far short of the end, which is a whole window away.
        StartCase{"NeverTheEndSample", ending_in_a_long_burst(), limits_with(0.1, 2.0), 169}),
    case_name<StartCase>);

// Checks window_start_index on one track and window; true if the start moved forward.
bool check_start(const Track& track, double window_s) {
    const MovementLimits limits = limits_with(window_s, 2.0);
    const size_t start = window_start_index(track, limits);
    const Sample& end = track.samples.back();
    size_t candidate = track.samples.size();
    for (size_t i = 0; i < track.samples.size(); ++i)
        if (track.samples[i].t_us <= end.t_us - static_cast<int64_t>(window_s * 1e6)) candidate = i;
    SCOPED_TRACE("window of " + std::to_string(window_s) + " s ending at " +
                 std::to_string(end.t_us) + " us");
    if (candidate == track.samples.size()) {
        EXPECT_EQ(start, track.samples.size());
        return false;
    }
    EXPECT_LT(start + 1, track.samples.size());  // never the end sample
    EXPECT_GE(start, candidate);
    const auto spacing = static_cast<int64_t>(limits.burst_gap_s * 1e6);
    for (size_t i = candidate; i < start && i + 1 < track.samples.size(); ++i)
        EXPECT_LT(track.samples[i + 1].t_us - track.samples[i].t_us, spacing);
    const int64_t latest_us =
        track.samples[candidate].t_us + static_cast<int64_t>(window_s * 1e6) / 4;
    EXPECT_LE(track.samples[start].t_us, std::max(latest_us, track.samples[candidate].t_us));
    if (start > candidate && start + 2 < track.samples.size() &&
        track.samples[start + 1].t_us <= latest_us) {
        // It stopped at the burst's last update (not at the quarter-window bound).
        EXPECT_GE(track.samples[start + 1].t_us - track.samples[start].t_us, spacing);
    }
    return start > candidate;
}

// 20 Hz to 1 s, then bursts of 1 to 20 updates 0.3 ms apart, each 50 ms per update after
// the one before.
Track bursty_track() {
    std::vector<Sample> all = steady(0, 1.0, 10);
    for (int n = 1; n <= 20; ++n) {
        const auto more = burst(static_cast<double>(all.size()) * 0.05, n, 300, 0, 10);
        all.insert(all.end(), more.begin(), more.end());
    }
    return track_of(all);
}

TEST(WindowStartIndexShape, MovesOnlyThroughABurstToItsLastUpdate) {
    // Windows of every length over the same track: the start is the latest sample at least
    // a window back, or a later one reached through gaps under the burst spacing.
    const Track track = bursty_track();
    int moved = 0;
    for (int64_t w_us = 100'000; w_us < us(11.0); w_us += 350)
        moved += check_start(track, static_cast<double>(w_us) / 1e6) ? 1 : 0;
    EXPECT_GT(moved, 100);  // the bursts were met, not skipped
}

TEST(WindowStartIndexShape, NeverMovesToTheEndSample) {
    // Every prefix with a 4 ms window: the window often starts and ends in one burst.
    const Track all = bursty_track();
    Track track;
    int moved = 0;
    for (const Sample& s : all.samples) {
        track.samples.push_back(s);
        moved += check_start(track, 0.004) ? 1 : 0;
    }
    EXPECT_GT(moved, 20);
}

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
        // Updates every 0.3 s: that spacing is the track's typical interval, not lag.
        WindowCase{"LatestSampleAtLeastAWindowBack",
                   {at(0, 0), at(0.3, 3), at(0.6, 6), at(0.9, 9), at(1.2, 12), at(1.5, 15)},
                   {},
                   {},
                   Expected{0.3, 1.5, 1.2, 0.0, 12.0, 12.0, 10.0, 5}},
        WindowCase{"SampleExactlyAWindowBackIsTheStart",
                   {at(0, 0), at(0.5, 5), at(1.0, 10), at(1.5, 15)},
                   {},
                   {},
                   Expected{0.5, 1.5, 1.0, 0.0, 10.0, 10.0, 10.0, 3}},
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
        // Steady 20 Hz: no allowance, so the window measures the true speed.
        WindowCase{"Steady20Hz",
                   steady(0, 5, 10),
                   {},
                   {},
                   Expected{4.0, 5.0, 1.0, 0.0, 10.0, 10.0, 10.0, 21}},
        WindowCase{"WindowFromTheLimits",
                   steady(0, 5, 10),
                   {},
                   limits_with(0.5, 2.0),
                   Expected{4.5, 5.0, 0.5, 0.0, 5.0, 5.0, 10.0, 11}},
        // 0.8 s of silence 1.2 s before the start: 0.75 s of it is lag.
        WindowCase{"GapBeforeTheStartWidensTheWindow",
                   join(steady(0, 2, 10), steady(2.8, 5, 10)),
                   {},
                   {},
                   Expected{4.0, 5.0, 1.0, 0.75, 10.0, 10.0, 10.0 / 1.75, 21}},
        WindowCase{"RttDoesNotWidenTheWindow",
                   steady(0, 5, 10),
                   {rtt(3.9, 0.4), rtt(4.5, 2.0)},
                   {},
                   Expected{4.0, 5.0, 1.0, 0.0, 10.0, 10.0, 10.0, 21}},
        // The first candidate is the burst's first update (2.8 s, sent at 2.05 s, x = 20.5):
        // the start moves to its last (2.8045 s, sent at 2.8 s, x = 28).
        WindowCase{"StartsAtTheLastUpdateOfABurst",
                   spike(3.8),
                   {},
                   {},
                   Expected{2.8045, 3.8, 0.9955, 0.75, 10.0, 10.0, 10.0 / (0.9955 + 0.75), 21}}),
    case_name<WindowCase>);

TEST(MeasureWindowAcrossSilence, StartsAtTheLastSampleBeforeIt) {
    // End at 3.5 s: the latest sample at least 1 s back is 2.0 s, the last before the gap.
    const auto samples = join(steady(0.0, 2.0, 5.0), steady(2.8, 3.5, 5.0));
    const auto m = measure_window(track_of(samples), {});
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->start.t_us, us(2.0));
    EXPECT_NEAR(m->elapsed_s, 1.5, 1e-9);
    // The gap is inside the window, not before it, and 20 Hz before it is no lag.
    EXPECT_NEAR(m->allowance_s, 0.0, 1e-9);
    EXPECT_NEAR(m->horizontal_m, 7.5, 1e-9);
    EXPECT_NEAR(m->speed, 5.0, 1e-9);
    EXPECT_EQ(m->samples, 16);
}

struct SteadyCase {
    std::string name;
    int64_t step_us;
    double speed_mps;
};

void PrintTo(const SteadyCase& c, std::ostream* os) {
    *os << c.name;
}

class SteadyRun : public ::testing::TestWithParam<SteadyCase> {};

TEST_P(SteadyRun, EveryWindowMeasuresTheTrueSpeed) {
    // The first window (no sample before it) and every later one alike: a steady rate of
    // updates is no lag, so a speed just over the limit is over it in every window.
    const SteadyCase& c = GetParam();
    Track track;
    int windows = 0;
    for (const Sample& s : every(0, 10, c.step_us, c.speed_mps)) {
        track.samples.push_back(s);
        const auto m = measure_window(track, {});
        if (!m) continue;
        ++windows;
        EXPECT_EQ(m->allowance_s, 0.0) << "window ending at " << s.t_us << " us";
        EXPECT_NEAR(m->speed, c.speed_mps, 1e-9) << "window ending at " << s.t_us << " us";
    }
    EXPECT_GE(windows, 90);
}

INSTANTIATE_TEST_SUITE_P(Rates, SteadyRun,
                         ::testing::Values(SteadyCase{"JustOverTheLimitAt20Hz", 50'000, 22.5},
                                           SteadyCase{"JustUnderTheLimitAt20Hz", 50'000, 21.5},
                                           SteadyCase{"At10Hz", 100'000, 22.5},
                                           SteadyCase{"At60Hz", 16'667, 22.5}),
                         case_name<SteadyCase>);

}  // namespace
}  // namespace arbiter::reference
