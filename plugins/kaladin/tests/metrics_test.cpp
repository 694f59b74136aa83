// Each metric at and around its limit, table-driven.
#include <cmath>
#include <deque>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/state.hpp>

#include "baseline.hpp"
#include "cv.hpp"
#include "entropy.hpp"
#include "inputs.hpp"
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
    std::deque<Input> inputs;
    for (int i = 0; i <= 600; ++i)  // one every 100 ms for 60 s
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i)});
    const auto m = measure_rate(inputs, 30'000'000, 0);
    EXPECT_EQ(m.inputs, 300u);
    EXPECT_DOUBLE_EQ(m.per_min, 600.0);
    EXPECT_TRUE(m.full);
    // A player seen for 10 s is measured over the whole 30 s: lower, never higher.
    std::deque<Input> short_run(inputs.begin(), inputs.begin() + 101);
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
    std::deque<Input> inputs;
    for (int i = 0; i <= 150; ++i)  // 150 intervals of 100 ms: 15 s
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i) * 2});
    EXPECT_FALSE(newest_window(inputs, 100, 30'000'000));
    for (int i = 151; i <= 300; ++i)
        inputs.push_back({int64_t{i} * 100'000, static_cast<uint64_t>(i) * 2});
    auto w = newest_window(inputs, 100, 30'000'000);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->intervals_us.size(), 300u);
    // Slow inputs: 100 intervals take longer than 30 s, and 100 it is.
    std::deque<Input> slow;
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

}  // namespace
}  // namespace arbiter::kaladin
