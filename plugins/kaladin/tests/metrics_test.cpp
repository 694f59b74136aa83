// Each metric at and around its limit, table-driven.
#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/state.hpp>

#include "baseline.hpp"
#include "cv.hpp"
#include "entropy.hpp"
#include "inputs.hpp"
#include "precision.hpp"
#include "rate.hpp"
#include "reaction.hpp"

namespace arbiter::kaladin {
namespace {

TEST(Inputs, SameTickAndRepeatsAreMerged) {
    InputStream s;
    EXPECT_TRUE(s.add(0, 10, false));
    EXPECT_FALSE(s.add(5'000, 10, false));  // same tick: a selection and its command
    EXPECT_FALSE(s.add(60'000, 11, true));  // a held key repeating
    EXPECT_FALSE(s.add(70'000, 11, true));
    EXPECT_TRUE(s.add(100'000, 12, false));
    EXPECT_TRUE(s.add(150'000, 13, false));
    EXPECT_EQ(s.distinct(), 3u);
    EXPECT_EQ(s.merged(), 3u);
}

TEST(Inputs, PruneKeepsWhatTheWindowsNeed) {
    InputStream s;
    for (int i = 0; i < 1000; ++i)
        s.add(int64_t{i} * 100'000, static_cast<uint64_t>(i) * 2, false);
    s.prune(999 * 100'000, 30'000'000, 101);
    // 30 s at 10 inputs a second: 301 inputs span exactly 30 s.
    EXPECT_EQ(s.recent().size(), 301u);
    EXPECT_EQ(s.recent().back().t_us - s.recent().front().t_us, 30'000'000);
}

struct RateCase {
    double per_min, limit, tripwire, score;
};
class RateScore : public ::testing::TestWithParam<RateCase> {};
TEST_P(RateScore, AtAndAroundTheLimit) {
    const auto c = GetParam();
    EXPECT_NEAR(rate_score(c.per_min, c.limit, c.tripwire), c.score, 1e-9);
}
INSTANTIATE_TEST_SUITE_P(
    Kaladin, RateScore,
    ::testing::Values(RateCase{599, 600, 1080, 0.0}, RateCase{600, 600, 1080, 0.0},
                      RateCase{601, 600, 1080, 1.0 / 480}, RateCase{840, 600, 1080, 0.5},
                      RateCase{1080, 600, 1080, 1.0}, RateCase{5000, 600, 1080, 1.0}));

TEST(Rate, TripwireIsTheLowerOfAbsoluteAndTickShare) {
    EXPECT_DOUBLE_EQ(rate_tripwire(2000, 0.9, 20.0), 1080.0);
    EXPECT_NEAR(rate_tripwire(2000, 0.9, 22.4), 1209.6, 1e-9);
    EXPECT_DOUBLE_EQ(rate_tripwire(2000, 0.9, 64.0), 2000.0);
}

TEST(Rate, CountsTheWindowBeforeTheNewestInput) {
    Ring<Input> inputs;
    for (int i = 0; i <= 600; ++i)  // one every 100 ms for 60 s
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i)});
    const auto m = measure_rate(inputs, 30'000'000, 0);
    EXPECT_EQ(m.inputs, 300u);
    EXPECT_DOUBLE_EQ(m.per_min, 600.0);
    EXPECT_TRUE(m.full);
    // A player seen for 10 s is measured over the whole 30 s: lower, never higher.
    Ring<Input> short_run(inputs.begin(), inputs.begin() + 101);
    const auto s = measure_rate(short_run, 30'000'000, 0);
    EXPECT_DOUBLE_EQ(s.per_min, 202.0);
    EXPECT_FALSE(s.full);
}

std::vector<int64_t> alternating(size_t n, int64_t mean, int64_t delta) {
    std::vector<int64_t> v;
    for (size_t i = 0; i < n; ++i)
        v.push_back(i % 2 ? mean + delta : mean - delta);
    return v;
}

struct CvCase {
    int64_t delta;  // every interval is 200 ms ± delta
    bool below_limit;
};
class CvLimit : public ::testing::TestWithParam<CvCase> {};
TEST_P(CvLimit, AtAndAroundTheLimit) {
    // 200 alternating intervals: the CV is delta/200 ms (×sqrt(n/(n-1)) of the sample
    // deviation), so the limit 0.05 sits at delta ≈ 10 ms.
    const auto c = GetParam();
    const auto cv = trimmed_cv(alternating(200, 200'000, c.delta));
    ASSERT_TRUE(cv);
    EXPECT_EQ(*cv < 0.05, c.below_limit) << *cv;
    EXPECT_EQ(cv_score(*cv, 0.05) > 0, c.below_limit);
}
INSTANTIATE_TEST_SUITE_P(Kaladin, CvLimit,
                         ::testing::Values(CvCase{0, true}, CvCase{5'000, true},
                                           CvCase{9'900, true}, CvCase{10'000, false},
                                           CvCase{20'000, false}));

TEST(Cv, LeavesOutTheSingleShortestAndLongest) {
    auto v = alternating(100, 200'000, 0);
    v[10] = 1;           // a burst after a lag spike
    v[50] = 10'000'000;  // a pause
    EXPECT_NEAR(*trimmed_cv(v), 0.0, 1e-12);
    v[70] = 10'000'000;  // a second pause is not left out
    EXPECT_GT(*trimmed_cv(v), 1.0);
}

TEST(Cv, NoOffsetIsAdded) {
    // lila adds 100 ms to each interval; kaladin must not: 100 ± 20 ms has a CV of 0.2
    // (measured with the sample deviation), not the 0.1 the offset would give.
    const auto cv = trimmed_cv(alternating(200, 100'000, 20'000));
    EXPECT_NEAR(*cv, 0.2, 0.002);
}

TEST(Window, NeedsBothIntervalsAndSpan) {
    Ring<Input> inputs;
    for (int i = 0; i <= 150; ++i)  // 150 intervals of 100 ms: 15 s
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i) * 2});
    EXPECT_FALSE(newest_window(inputs, 100, 30'000'000));
    for (int i = 151; i <= 300; ++i)
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i) * 2});
    auto w = newest_window(inputs, 100, 30'000'000);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->intervals_us.size(), 300u);
    // Slow inputs: 100 intervals take longer than 30 s, and 100 it is.
    Ring<Input> slow;
    for (int i = 0; i <= 120; ++i)
        slow.push_back({int64_t{i} * 1'000'000, static_cast<uint64_t>(i) * 20});
    w = newest_window(slow, 100, 30'000'000);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->intervals_us.size(), 100u);
}

struct EntropyCase {
    std::vector<int64_t> intervals;
    double bits;
};
class Entropy : public ::testing::TestWithParam<EntropyCase> {};
TEST_P(Entropy, BinnedByOneTick) {
    const auto c = GetParam();
    EXPECT_NEAR(binned_entropy(c.intervals, 50'000).bits, c.bits, 1e-9);
}
INSTANTIATE_TEST_SUITE_P(Kaladin, Entropy,
                         ::testing::Values(EntropyCase{{100'000, 100'000, 100'000, 100'000}, 0.0},
                                           // 100 and 149 ms share a 50 ms bin
                                           EntropyCase{{100'000, 149'000, 100'000, 149'000}, 0.0},
                                           EntropyCase{{100'000, 150'000, 100'000, 150'000}, 1.0},
                                           EntropyCase{{50'000, 100'000, 150'000, 200'000}, 2.0}));

TEST(Entropy, ScoreAtAndAroundTheLimit) {
    EXPECT_EQ(entropy_score(1.0, 1.0), 0.0);
    EXPECT_EQ(entropy_score(1.2, 1.0), 0.0);
    EXPECT_NEAR(entropy_score(0.99, 1.0), 0.01, 1e-12);
    EXPECT_EQ(entropy_score(0.0, 1.0), 1.0);
}

TEST(Reaction, CorrectedByTheLowestRoundTrip) {
    ReactionTracker r;
    r.rtt(80'000);
    r.rtt(60'000);
    r.rtt(900'000);  // a lag spike: the lowest is kept
    r.stimulus(1, 0);
    EXPECT_TRUE(r.response(1, 200'000, 100));
    EXPECT_FALSE(r.response(1, 210'000, 100));  // a second answer is no pair
    EXPECT_FALSE(r.response(2, 210'000, 100));  // a stimulus this player was never sent
    ASSERT_EQ(r.corrected_ms().size(), 1u);
    EXPECT_DOUBLE_EQ(r.corrected_ms()[0], 140.0);
}

struct ReactionCase {
    double median_ms, score;
};
class ReactionScore : public ::testing::TestWithParam<ReactionCase> {};
TEST_P(ReactionScore, AtAndAroundTheLimits) {
    EXPECT_NEAR(reaction_score(GetParam().median_ms, 100, 40), GetParam().score, 1e-9);
}
INSTANTIATE_TEST_SUITE_P(Kaladin, ReactionScore,
                         ::testing::Values(ReactionCase{160, 0}, ReactionCase{100, 0},
                                           ReactionCase{99, 1.0 / 60}, ReactionCase{70, 0.5},
                                           ReactionCase{40, 1.0}, ReactionCase{12, 1.0}));

TEST(Baseline, PercentilesAndRoundTrip) {
    BaselineCollector c;
    c.add_match(1'700'000'000'000'000);
    for (int i = 1; i <= 1001; ++i) {
        c.add_player("gold");
        c.add("gold", Metric::peak_rate, i);
    }
    const BaselineFile file = c.finish();
    const auto& rate = file.tiers.at("gold")[Metric::peak_rate];
    EXPECT_EQ(rate.samples, 1001u);
    EXPECT_DOUBLE_EQ(rate.at(50.0), 501.0);
    EXPECT_DOUBLE_EQ(rate.at(99.9), 1000.0);
    EXPECT_DOUBLE_EQ(rate.at(0.1), 2.0);
    const BaselineFile back = BaselineFile::read(file.write());
    EXPECT_DOUBLE_EQ(back.tiers.at("*")[Metric::peak_rate].at(99.9), 1000.0);
    EXPECT_EQ(back.corpus_from_unix_us, 1'700'000'000'000'000);
}

TEST(Baseline, DamagedFileIsRefused) {
    BaselineCollector c;
    c.add_player("gold");
    auto bytes = c.finish().write();
    bytes.back() ^= 0x40;
    EXPECT_THROW(BaselineFile::read(bytes), StateError);
    EXPECT_THROW(BaselineFile::read(std::vector<uint8_t>{1, 2, 3}), StateError);
}

// ---- fatigue-free precision ------------------------------------------------------------

struct AimCase {
    Vec aim, target;
    double min_range_m;
    std::optional<double> mrad;
};
class AimError : public ::testing::TestWithParam<AimCase> {};
TEST_P(AimError, AngleSeenFromThePlayer) {
    const auto c = GetParam();
    const auto got = aim_error_mrad({0, 0, 0}, c.aim, c.target, c.min_range_m);
    ASSERT_EQ(got.has_value(), c.mrad.has_value());
    if (got) {
        EXPECT_NEAR(*got, *c.mrad, 1e-9);
    }
}
const double k5mrad = std::atan(0.15 / 30.0) * 1e3;  // 0.15 m off at 30 m
INSTANTIATE_TEST_SUITE_P(Kaladin, AimError,
                         ::testing::Values(AimCase{{30, 0, 0}, {30, 0, 0}, 2.0, 0.0},
                                           AimCase{{30, 0.15, 0}, {30, 0, 0}, 2.0, k5mrad},
                                           // The same direction at twice the depth: the same angle.
                                           AimCase{{60, 0.3, 0}, {30, 0, 0}, 2.0, k5mrad},
                                           AimCase{{30, 0, 0.15}, {30, 0, 0}, 2.0, k5mrad},
                                           AimCase{
                                               {-30, 0, 0}, {30, 0, 0}, 2.0, std::acos(-1.0) * 1e3},
                                           // The minimum range: at it a measure, below it none.
                                           AimCase{{2, 0, 0}, {2, 0, 0}, 2.0, 0.0},
                                           AimCase{{1.99, 0, 0}, {1.99, 0, 0}, 2.0, std::nullopt},
                                           // An aim point on the player itself has no direction.
                                           AimCase{{0, 0, 0}, {30, 0, 0}, 2.0, std::nullopt}));

TEST(PositionTrack, InterpolatesBetweenUpdatesAndRefusesGaps) {
    PositionTrack track;
    EXPECT_FALSE(track.at(0));
    track.add(1'000'000, 0, 0, 0);
    track.add(1'100'000, 1, 2, 0);
    auto mid = track.at(1'025'000);
    ASSERT_TRUE(mid);
    EXPECT_NEAR(mid->x, 0.25, 1e-12);
    EXPECT_NEAR(mid->y, 0.5, 1e-12);
    EXPECT_FALSE(track.at(999'999)) << "before the first update the relay cannot say";
    // After the newest: the newest, up to half the longest gap, then nothing.
    ASSERT_TRUE(track.at(1'100'000 + PositionTrack::kMaxGapUs / 2));
    EXPECT_FALSE(track.at(1'100'001 + PositionTrack::kMaxGapUs / 2));
    EXPECT_TRUE(track.latest(1'100'000 + PositionTrack::kMaxGapUs / 2));
    EXPECT_FALSE(track.latest(1'100'001 + PositionTrack::kMaxGapUs / 2));
    // Updates a lost stretch apart are not interpolated between.
    track.add(1'100'000 + PositionTrack::kMaxGapUs + 1, 9, 9, 0);
    EXPECT_FALSE(track.at(1'200'000));
    EXPECT_TRUE(track.at(1'100'000));
    // Out of order: left out.
    track.add(1'050'000, 5, 5, 5);
    EXPECT_NEAR(track.at(1'050'000)->x, 0.5, 1e-12);
}

// RoundTrip keeps its nine samples in an array used circularly: the newest nine, oldest
// first, as a queue that drops its oldest would keep them, and the median of those.
TEST(RoundTrip, KeepsTheNewestNineInOrderAndTheirMedian) {
    uint64_t seed = 5;
    auto next_rtt = [&seed] {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        return static_cast<uint32_t>(seed >> 40) % 300'000;
    };
    RoundTrip rtt;
    std::deque<uint32_t> expected;
    EXPECT_EQ(rtt.median_us(), 0) << "no sample yet";
    for (int i = 0; i < 100; ++i) {
        const uint32_t sample = next_rtt();
        rtt.add(sample);
        expected.push_back(sample);
        if (expected.size() > RoundTrip::kKeep) expected.pop_front();
        ASSERT_EQ(rtt.samples(), std::vector<uint32_t>(expected.begin(), expected.end())) << i;
        std::vector<uint32_t> sorted(expected.begin(), expected.end());
        std::sort(sorted.begin(), sorted.end());
        const size_t n = sorted.size();
        const int64_t median =
            n % 2 ? sorted[n / 2] : (int64_t{sorted[n / 2 - 1]} + sorted[n / 2]) / 2;
        ASSERT_EQ(rtt.median_us(), median) << i;
    }
    // A restore keeps the newest nine of what it is given, oldest first.
    std::vector<uint32_t> many;
    for (uint32_t i = 1; i <= 12; ++i)
        many.push_back(i * 1000);
    rtt.restore(many);
    EXPECT_EQ(rtt.samples(), std::vector<uint32_t>(many.end() - 9, many.end()));
    rtt.restore(std::vector<uint32_t>{7, 3});
    EXPECT_EQ(rtt.samples(), (std::vector<uint32_t>{7, 3}));
    EXPECT_EQ(rtt.median_us(), 5);
}

TEST(PositionTrack, KeepsTwoSecondsAndTheBracketBeforeThem) {
    PositionTrack track;
    for (int64_t t = 0; t <= 10'000'000; t += 100'000)
        track.add(t, static_cast<float>(t) / 1e6f, 0, 0);
    EXPECT_EQ(track.points().front().t_us, 10'000'000 - PositionTrack::kKeepUs);
    EXPECT_TRUE(track.at(10'000'000 - PositionTrack::kKeepUs));
    EXPECT_FALSE(track.at(10'000'000 - PositionTrack::kKeepUs - 1));
}

// Blocks of the given spreads, 10 minutes apart, 50 aims each.
std::vector<PrecisionBlock> blocks_of(std::vector<double> spreads) {
    std::vector<PrecisionBlock> out;
    for (size_t i = 0; i < spreads.size(); ++i)
        out.push_back({static_cast<int64_t>(i) * 600'000'000, 50, spreads[i]});
    return out;
}
std::vector<double> flat(size_t n, double spread) {
    return std::vector<double>(n, spread);
}
std::vector<double> with(std::vector<double> v, size_t i, double spread) {
    v[i] = spread;
    return v;
}
// Early blocks at `early`, late ones at `late`, the middle in between.
std::vector<double> ramp(size_t n, double early, double late) {
    std::vector<double> v(n, (early + late) / 2);
    for (size_t i = 0; i < n / 3; ++i) {
        v[i] = early;
        v[n - 1 - i] = late;
    }
    return v;
}

struct PrecisionCase {
    const char* name;
    std::vector<double> spreads;
    double session_s;
    bool judged, flags;
    double widening;
};
class Precision : public ::testing::TestWithParam<PrecisionCase> {};
TEST_P(Precision, AtAndAroundEachLimit) {
    const auto c = GetParam();
    // The defaults: 2 h, 6 blocks, 5 mrad, 1.1.
    const PrecisionLimits limits;
    const auto blocks = blocks_of(c.spreads);
    const auto m = measure_precision(blocks, c.session_s, limits);
    EXPECT_EQ(m.judged, c.judged);
    EXPECT_EQ(m.flags, c.flags);
    EXPECT_NEAR(m.widening, c.widening, 1e-12);
    EXPECT_EQ(m.blocks, c.spreads.size());
    EXPECT_EQ(m.aims, 50u * c.spreads.size());
}
INSTANTIATE_TEST_SUITE_P(
    Kaladin, Precision,
    ::testing::Values(
        PrecisionCase{"tireless", flat(12, 2.0), 7200, true, true, 1.0},
        // The session's length: at 2 h judged, just under it not.
        PrecisionCase{"short", flat(12, 2.0), 7199.9, false, false, 1.0},
        // The number of blocks: 6 judged, 5 not.
        PrecisionCase{"six_blocks", flat(6, 2.0), 9000, true, true, 1.0},
        PrecisionCase{"five_blocks", flat(5, 2.0), 9000, false, false, 1.0},
        // The spread limit, on the widest block: at 5 no flag, just under it a flag.
        PrecisionCase{"widest_at_limit", with(flat(12, 2.0), 6, 5.0), 7200, true, false, 1.0},
        PrecisionCase{"widest_under", with(flat(12, 2.0), 6, 4.999), 7200, true, true, 1.0},
        PrecisionCase{"human", flat(12, 20.0), 7200, true, false, 1.0},
        // The widening allowance: late at 1.1 times early plus 0.25 mrad flags, a hair
        // more does not.
        PrecisionCase{"widening_at_limit", ramp(12, 2.0, 2.45), 7200, true, true, 1.225},
        PrecisionCase{"widening_over", ramp(12, 2.0, 2.4501), 7200, true, false, 1.22505},
        // Near 0 a factor allows nothing; the floor still does.
        PrecisionCase{"floor_from_zero", ramp(12, 0.0, 0.25), 7200, true, true, 1e9},
        PrecisionCase{"over_floor_from_zero", ramp(12, 0.0, 0.2501), 7200, true, false, 1e9},
        PrecisionCase{"tiring", ramp(12, 2.0, 3.0), 7200, true, false, 1.5},
        // Sharper late than early (warming up) is not widening.
        PrecisionCase{"warming_up", ramp(12, 3.0, 2.0), 7200, true, true, 2.0 / 3.0},
        PrecisionCase{"perfect", flat(12, 0.0), 7200, true, true, 1.0},
        PrecisionCase{"perfect_then_not", ramp(12, 0.0, 1.0), 7200, true, false, 1e9}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(Precision, ThirdsAreMediansOfBlocks) {
    // Nine blocks: thirds of three; one stray block in each third moves nothing.
    const auto blocks = blocks_of({2, 9, 2, 2, 2, 2, 3, 3, 0.5});
    const auto m = measure_precision(blocks, 7200, PrecisionLimits{});
    EXPECT_EQ(m.third, 3u);
    EXPECT_DOUBLE_EQ(m.early_mrad, 2.0);
    EXPECT_DOUBLE_EQ(m.late_mrad, 3.0);
    EXPECT_DOUBLE_EQ(m.widest_mrad, 9.0);
    EXPECT_FALSE(m.flags);
}

TEST(Precision, ScoreAtAndAroundTheLimit) {
    EXPECT_DOUBLE_EQ(precision_score(5.0, 5.0), 0.0);
    EXPECT_DOUBLE_EQ(precision_score(6.0, 5.0), 0.0);
    EXPECT_DOUBLE_EQ(precision_score(2.5, 5.0), 0.5);
    EXPECT_DOUBLE_EQ(precision_score(0.0, 5.0), 1.0);
    EXPECT_DOUBLE_EQ(precision_score(1.0, 0.0), 0.0);
}

TEST(PrecisionTracker, BlocksFromTheFirstAimThinOnesLeftOut) {
    constexpr int64_t kBlock = 600'000'000;
    PrecisionTracker t;
    EXPECT_FALSE(t.add(5'000'000, 1.0, kBlock, 3));
    EXPECT_FALSE(t.add(6'000'000, 3.0, kBlock, 3));
    EXPECT_FALSE(t.add(5'000'000 + kBlock - 1, 2.0, kBlock, 3));
    // The first aim of the next block closes the previous one.
    EXPECT_TRUE(t.add(5'000'000 + kBlock, 7.0, kBlock, 3));
    ASSERT_EQ(t.blocks().size(), 1u);
    EXPECT_EQ(t.blocks()[0].from_us, 5'000'000);
    EXPECT_EQ(t.blocks()[0].aims, 3u);
    EXPECT_DOUBLE_EQ(t.blocks()[0].spread_mrad, 2.0);
    // Two aims are too few for a block; a silent block between is simply skipped.
    EXPECT_TRUE(t.add(5'000'000 + 3 * kBlock, 1.0, kBlock, 3));
    EXPECT_EQ(t.blocks().size(), 1u);
    EXPECT_EQ(t.thin_blocks(), 1u);
    EXPECT_FALSE(t.add(5'000'000 + 3 * kBlock + 1, 1.0, kBlock, 3));
    EXPECT_FALSE(t.add(5'000'000 + 3 * kBlock + 2, 1.5, kBlock, 3));
    EXPECT_TRUE(t.close(kBlock, 3));
    EXPECT_FALSE(t.close(kBlock, 3));
    ASSERT_EQ(t.blocks().size(), 2u);
    EXPECT_EQ(t.blocks()[1].from_us, 5'000'000 + 3 * kBlock);
    EXPECT_DOUBLE_EQ(t.blocks()[1].spread_mrad, 1.0);
    EXPECT_EQ(t.aims(), 7u);
    EXPECT_DOUBLE_EQ(t.session_s(), (3.0 * kBlock + 2) / 1e6);
}

}  // namespace
}  // namespace arbiter::kaladin
