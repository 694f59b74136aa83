// The analyzer through the SDK's harness: the same C glue the host calls.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/testing.hpp>

#include "baseline.hpp"
#include "kaladin_analyzer.hpp"

namespace arbiter::kaladin {
namespace {

using testing::Harness;
using testing::RecordedSignal;

constexpr double kHz = 20.0;
constexpr int64_t kTickUs = 50'000;

// A match in code: one player, inputs at given relay times.
class Match {
  public:
    explicit Match(std::string tier = "gold") : builder_("relay", 1) {
        build::MatchStart start;
        start.game = "test";
        start.tick_rate_hz = kHz;
        start.started_unix_us = 1'700'000'000'000'000;
        builder_.add(0, 0, 0, start);
        build::PlayerJoin join;
        join.account_id = "p1";
        join.rating_tier = std::move(tier);
        builder_.add(0, 0, 1, join);
    }
    void order(int64_t t_us, bool repeat = false, uint64_t response_to = 0) {
        build::Order o;
        o.repeat = repeat;
        o.response_to = response_to;
        builder_.add(t_us, static_cast<uint64_t>(t_us / kTickUs), 1, o);
    }
    void stimulus(int64_t t_us, uint64_t id) {
        builder_.add(t_us, static_cast<uint64_t>(t_us / kTickUs), 1,
                     build::Stimulus{.stimulus_id = id, .kind = "enemy_visible"});
    }
    void rtt(int64_t t_us, uint32_t rtt_us) {
        builder_.add(t_us, static_cast<uint64_t>(t_us / kTickUs), 1,
                     build::Latency{.rtt_us = rtt_us});
    }
    std::vector<uint8_t> batch() { return builder_.finish(); }

  private:
    BatchBuilder builder_;
};

std::vector<RecordedSignal> of(const std::vector<RecordedSignal>& all, const std::string& code) {
    std::vector<RecordedSignal> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [&](const RecordedSignal& s) { return s.code == code; });
    return out;
}

// Inputs every `period` for `seconds`, plus uniform jitter of up to `jitter`.
void rhythm(Match& m, int64_t period, int64_t jitter, double seconds, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> j(0, jitter);
    for (int64_t t = 1'000'000; t < static_cast<int64_t>(seconds * 1e6);
         t += period + (jitter ? j(rng) : 0))
        m.order(t);
}

TEST(Analyzer, MetronomeGivesCvAndEntropySignalsWithEvidence) {
    Harness<KaladinAnalyzer> h;
    ASSERT_TRUE(h.ok()) << h.error();
    Match m;
    rhythm(m, 150'000, 0, 60);
    auto signals = h.feed(m.batch());
    auto cv = of(signals, "timing.cv");
    ASSERT_FALSE(cv.empty());
    EXPECT_GE(cv.back().score, 0.9);
    EXPECT_FALSE(cv.back().tripwire);
    for (const char* key : {"\"cv\":", "\"limit\":{\"value\":0.05", "no baseline file configured",
                            "\"window_s\":", "\"intervals\":", "\"inputs\":"})
        EXPECT_NE(cv.back().evidence.find(key), std::string::npos) << key << cv.back().evidence;
    auto entropy = of(signals, "timing.entropy");
    ASSERT_FALSE(entropy.empty());
    EXPECT_NE(entropy.back().evidence.find("\"entropy_bits\":0"), std::string::npos);
    EXPECT_TRUE(of(signals, "timing.rate").empty());
}

TEST(Analyzer, IrregularRhythmGivesNothing) {
    Harness<KaladinAnalyzer> h;
    Match m;
    rhythm(m, 100'000, 400'000, 120);  // 100 to 500 ms, uniform: CV about 0.38
    EXPECT_TRUE(h.feed(m.batch()).empty());
}

TEST(Analyzer, ShortWindowsAreNotJudged) {
    // 99 exact intervals: too few for a window, however metronomic.
    Harness<KaladinAnalyzer> h;
    Match m;
    for (int i = 0; i < 100; ++i)
        m.order(1'000'000 + int64_t{i} * 400'000);
    EXPECT_TRUE(h.feed(m.batch()).empty());
}

TEST(Analyzer, HeldKeyRepeatsAndSameTickOrdersAreMerged) {
    // 1,200 raw orders a minute, but only 300 distinct inputs: no rate signal.
    Harness<KaladinAnalyzer> h;
    Match m;
    std::mt19937 rng(3);
    std::uniform_int_distribution<int64_t> gap(100'000, 300'000);
    for (int64_t t = 1'000'000; t < 90'000'000; t += gap(rng)) {
        m.order(t);
        m.order(t + 1'000);         // same tick: merged
        m.order(t + 10'000, true);  // a held key repeating: merged
        m.order(t + 20'000, true);
    }
    auto signals = h.feed(m.batch());
    EXPECT_TRUE(of(signals, "timing.rate").empty());
}

struct RateCase {
    int64_t period_us;
    bool signal, tripwire;
};
class AnalyzerRate : public ::testing::TestWithParam<RateCase> {};
TEST_P(AnalyzerRate, AtAndAroundTheLimits) {
    // Regular inputs would trip the CV check too; the rate check alone is looked at.
    Harness<KaladinAnalyzer> h;
    Match m;
    rhythm(m, GetParam().period_us, 0, 70);
    auto rate = of(h.feed(m.batch()), "timing.rate");
    EXPECT_EQ(!rate.empty(), GetParam().signal);
    const bool tripped = std::any_of(rate.begin(), rate.end(), [](auto& s) { return s.tripwire; });
    EXPECT_EQ(tripped, GetParam().tripwire);
    if (!rate.empty()) {
        EXPECT_NE(rate.back().evidence.find("\"tripwire_per_min\":1080"), std::string::npos);
    }
}
// 20 Hz: 1,200 ticks a minute, trip-wire at 1,080. 100 ms = 600 a minute (at the limit,
// not above); 95 ms = 631; 55 ms = 1,090 distinct ticks... every input in its own tick.
INSTANTIATE_TEST_SUITE_P(Kaladin, AnalyzerRate,
                         ::testing::Values(RateCase{100'000, false, false},
                                           RateCase{95'000, true, false},
                                           RateCase{56'000, true, false},
                                           RateCase{50'000, true, true}));

// Stimuli every 2 s answered after `reaction` plus the round trip.
std::vector<RecordedSignal> reactions(int pairs, int64_t reaction_us, uint32_t rtt_us = 60'000) {
    Harness<KaladinAnalyzer> h;
    Match m;
    m.rtt(500'000, rtt_us);
    for (int i = 0; i < pairs; ++i) {
        const int64_t t = 1'000'000 + int64_t{i} * 2'000'000;
        m.stimulus(t, static_cast<uint64_t>(i + 1));
        m.order(t + rtt_us + reaction_us, false, static_cast<uint64_t>(i + 1));
    }
    return of(h.feed(m.batch()), "timing.reaction");
}

TEST(Analyzer, ReactionNeedsTwentyPairs) {
    EXPECT_TRUE(reactions(19, 20'000).empty());
    EXPECT_FALSE(reactions(20, 20'000).empty());
}

TEST(Analyzer, ReactionLimits) {
    EXPECT_TRUE(reactions(30, 160'000).empty());  // an elite sprinter
    EXPECT_TRUE(reactions(30, 100'000).empty());  // at the limit
    auto near = reactions(30, 90'000);
    ASSERT_FALSE(near.empty());
    EXPECT_FALSE(near.back().tripwire);
    auto fast = reactions(30, 30'000);
    ASSERT_FALSE(fast.empty());
    EXPECT_TRUE(fast.back().tripwire);
    EXPECT_NE(fast.back().evidence.find("\"median_ms\":30"), std::string::npos)
        << fast.back().evidence;
    EXPECT_NE(fast.back().evidence.find("\"pairs\":"), std::string::npos);
    EXPECT_NE(fast.back().evidence.find("\"lowest_rtt_ms\":60"), std::string::npos);
}

TEST(Analyzer, StateRestoredMidWindowChangesNothing) {
    Match whole;
    rhythm(whole, 150'000, 0, 60);
    Harness<KaladinAnalyzer> straight;
    auto expected = straight.feed(whole.batch());
    ASSERT_FALSE(expected.empty());

    // The same inputs in two batches, with a reload between them, 20 s in: mid-window.
    Match first, second;
    for (int64_t t = 1'000'000; t < 60'000'000; t += 150'000)
        (t < 20'000'000 ? first : second).order(t);
    Harness<KaladinAnalyzer> before;
    auto got = before.feed(first.batch());
    auto blob = before.save_state();
    ASSERT_TRUE(blob);
    Harness<KaladinAnalyzer> after;
    ASSERT_EQ(after.restore_state(*blob), ARB_OK) << after.error();
    // The second builder restarted the sequence; the analyzer keys by match, not batch.
    auto rest = after.feed(second.batch());
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].code, expected[i].code);
        EXPECT_EQ(got[i].evidence, expected[i].evidence);
    }
    // And without the restore, the window starts again: fewer signals.
    Harness<KaladinAnalyzer> fresh;
    EXPECT_LT(fresh.feed(second.batch()).size() + 0, expected.size());
}

TEST(Analyzer, DamagedStateIsRefused) {
    Harness<KaladinAnalyzer> h;
    Match m;
    rhythm(m, 150'000, 0, 10);
    h.feed(m.batch());
    auto blob = h.save_state();
    ASSERT_TRUE(blob);
    (*blob)[blob->size() / 2] ^= 0x10;
    Harness<KaladinAnalyzer> other;
    EXPECT_EQ(other.restore_state(*blob), ARB_ERR_STATE);
}

BaselineFile baseline_with(const std::string& tier, uint64_t samples, double cv_p01) {
    BaselineCollector c;
    for (uint64_t i = 0; i < samples; ++i) {
        c.add_player(tier);
        c.add(tier, Metric::min_cv, cv_p01 + static_cast<double>(i) * 0.01);
        c.add(tier, Metric::peak_rate, 300.0);
    }
    return c.finish();
}

TEST(Analyzer, BaselineLimitNamesItsPercentile) {
    // The tier's 0.1th percentile of the lowest CV is 0.1, above the fixed 0.05: a
    // humanised rhythm of CV about 0.07 is signalled against it.
    const auto file = baseline_with("gold", 200, 0.1);
    Harness<KaladinAnalyzer> h(ConfigValue::table({}), file.write());
    ASSERT_TRUE(h.ok()) << h.error();
    Match m("gold");
    rhythm(m, 180'000, 45'000, 90);
    auto cv = of(h.feed(m.batch()), "timing.cv");
    ASSERT_FALSE(cv.empty());
    for (const char* key : {"\"source\":\"baseline\"", "\"tier\":\"gold\"", "\"percentile\":0.1",
                            "\"samples\":200", "\"corpus_matches\":"})
        EXPECT_NE(cv.back().evidence.find(key), std::string::npos) << key << cv.back().evidence;

    // The same rhythm without a baseline: above 0.05, no signal.
    Harness<KaladinAnalyzer> plain;
    Match again("gold");
    rhythm(again, 180'000, 45'000, 90);
    EXPECT_TRUE(of(plain.feed(again.batch()), "timing.cv").empty());
}

TEST(Analyzer, SmallBaselineTierFallsBackAndSaysSo) {
    const auto file = baseline_with("gold", 20, 0.1);  // fewer than 100 samples
    Harness<KaladinAnalyzer> h(ConfigValue::table({}), file.write());
    Match m("gold");
    rhythm(m, 150'000, 0, 60);
    auto cv = of(h.feed(m.batch()), "timing.cv");
    ASSERT_FALSE(cv.empty());
    EXPECT_NE(cv.back().evidence.find("too few samples"), std::string::npos) << cv.back().evidence;
}

TEST(Analyzer, DamagedBaselineIsRefusedAtCreation) {
    auto bytes = baseline_with("gold", 200, 0.1).write();
    bytes[bytes.size() - 3] ^= 0x01;
    Harness<KaladinAnalyzer> h(ConfigValue::table({}), bytes);
    EXPECT_FALSE(h.ok());
    EXPECT_NE(h.error().find("kaladin refuses its baseline file"), std::string::npos) << h.error();
    EXPECT_NE(h.error().find("damaged"), std::string::npos) << h.error();
}

TEST(Analyzer, UnknownConfigKeyIsRefused) {
    Harness<KaladinAnalyzer> h(ConfigValue::table({{"cv_limt", ConfigValue(0.1)}}));
    EXPECT_EQ(h.create_status(), ARB_ERR_CONFIG);
    EXPECT_NE(h.error().find("cv_limt"), std::string::npos);
}

}  // namespace
}  // namespace arbiter::kaladin
