// The analyzer through the SDK's harness: the same C glue the host calls.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/state.hpp>
#include <arbiter/sdk/testing.hpp>

#include "baseline.hpp"
#include "cv.hpp"
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
    EXPECT_EQ(cv.back().score, 1.0);  // a CV of 0
    for (const char* key : {"\"cv\":", "\"limit\":{\"value\":0.13", "no baseline file configured",
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

// Lost input (schema 1.1): no interval spans the gap, so every CV and entropy window after
// it begins after it. A steady script (jitter up to 24 ms on 300 ms) before a 5 s gap and a
// steadier one (6 ms) after: without being told, the analyzer reports windows that mix the
// two across the gap; told, it waits for windows of the new stretch alone.
TEST(Analyzer, NoWindowSpansAGapTheHostReported) {
    auto run = [](bool tell) {
        Match before;
        rhythm(before, 300'000, 24'000, 40, 3);
        BatchBuilder after_gap("relay", 1, 5);
        std::mt19937 rng(4);
        std::uniform_int_distribution<int64_t> jitter(0, 6'000);
        for (int64_t t = 45'000'000; t < 80'000'000; t += 300'000 + jitter(rng))
            after_gap.add(t, static_cast<uint64_t>(t / kTickUs), 1, build::Order{});
        Harness<KaladinAnalyzer> h;
        std::vector<RecordedSignal> out = h.feed(before.batch());
        if (tell) {
            auto lost = BatchBuilder("relay", 1, 4)
                            .add(45'000'000, 900, 0,
                                 build::InputLost{.first_sequence = 1,
                                                  .last_sequence = 4,
                                                  .last_heard_relay_us = 40'000'000,
                                                  .next_heard_relay_us = 45'000'000})
                            .finish();
            for (auto& signal : h.feed(lost))
                out.push_back(std::move(signal));
        }
        for (auto& signal : h.feed(after_gap.finish()))
            out.push_back(std::move(signal));
        return out;
    };
    // The start of the window of each CV signal reported after the gap.
    auto window_starts_after_gap = [](const std::vector<RecordedSignal>& signals) {
        std::vector<int64_t> starts;
        for (const auto& signal : of(signals, "timing.cv")) {
            if (signal.relay_time_us < 45'000'000) continue;
            const std::string key = "\"window_from_us\":";
            const size_t at = signal.evidence.find(key);
            EXPECT_NE(at, std::string::npos) << signal.evidence;
            if (at != std::string::npos)
                starts.push_back(std::stoll(signal.evidence.substr(at + key.size())));
        }
        return starts;
    };
    const auto blind = window_starts_after_gap(run(false));
    ASSERT_FALSE(blind.empty());
    EXPECT_LT(*std::min_element(blind.begin(), blind.end()), 40'000'000)
        << "without being told, a window reaches back across the gap";
    const auto told = window_starts_after_gap(run(true));
    ASSERT_FALSE(told.empty()) << "the steadier stretch is still judged, on its own windows";
    for (int64_t start : told)
        EXPECT_GE(start, 45'000'000);
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
    // The tier's 0.1th percentile of the lowest CV is 0.5, so its limit is 0.4 (the margin
    // of 0.8), above the fixed 0.13: a rhythm of CV about 0.2 is signalled against it.
    const auto file = baseline_with("gold", 200, 0.5);
    Harness<KaladinAnalyzer> h(ConfigValue::table({}), file.write());
    ASSERT_TRUE(h.ok()) << h.error();
    Match m("gold");
    rhythm(m, 150'000, 150'000, 90);
    auto cv = of(h.feed(m.batch()), "timing.cv");
    ASSERT_FALSE(cv.empty());
    for (const char* key : {"\"source\":\"baseline\"", "\"tier\":\"gold\"", "\"percentile\":0.1",
                            "\"samples\":200", "\"corpus_matches\":", "\"baseline_margin\":0.8"})
        EXPECT_NE(cv.back().evidence.find(key), std::string::npos) << key << cv.back().evidence;
    EXPECT_NEAR(nlohmann::json::parse(cv.back().evidence)["limit"]["value"].get<double>(), 0.4,
                0.01)
        << cv.back().evidence;

    // The same rhythm without a baseline: above the fixed 0.13, no signal.
    Harness<KaladinAnalyzer> plain;
    Match again("gold");
    rhythm(again, 150'000, 150'000, 90);
    EXPECT_TRUE(of(plain.feed(again.batch()), "timing.cv").empty());
}

// Scripts that jitter a fixed delay live between the seed's 0.05 and the humans' lowest
// (0.16 on windows of 100 intervals): the whole band scores over the sample config's
// monitor threshold (0.3), rising to 1 at a CV of 0; at and above 0.13 nothing.
TEST(Analyzer, JitteredFixedDelaysAreSignalledAboveTheMonitorThreshold) {
    EXPECT_EQ(cv_score(0.0, 0.13, 0.35), 1.0);
    EXPECT_NEAR(cv_score(0.129, 0.13, 0.35), 0.355, 0.001);
    EXPECT_EQ(cv_score(0.13, 0.13, 0.35), 0.0);
    EXPECT_EQ(cv_score(std::nan(""), 0.13, 0.35), 0.0);
    // A 200 ms delay plus up to 45 % jitter at 20 Hz: a trimmed CV of about 0.1.
    Harness<KaladinAnalyzer> h;
    Match m;
    rhythm(m, 200'000, 90'000, 120);
    auto cv = of(h.feed(m.batch()), "timing.cv");
    ASSERT_FALSE(cv.empty());
    const double measured = nlohmann::json::parse(cv.back().evidence)["cv"].get<double>();
    EXPECT_GT(measured, 0.05) << cv.back().evidence;
    EXPECT_LT(measured, 0.13) << cv.back().evidence;
    EXPECT_GT(cv.back().score, 0.35) << cv.back().evidence;
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

// ---- fatigue-free precision ------------------------------------------------------------

// A long session, sparse: player 1 stands at the origin and aims at player 2, who circles
// it 30 m away at 5 m/s. Every 10 s an aimed order, with the target's updates of the
// 300 ms before it and the aimer's own; the aim is off the target (as the relay had it one
// round trip earlier) by spread(t) times 0.5, 1 or 1.5, so a block's median is spread(t).
class AimMatch {
  public:
    static constexpr uint32_t kRttUs = 60'000;
    static constexpr double kRangeM = 30.0, kSpeedMps = 5.0;

    AimMatch() : builder_("relay", 1) {
        build::MatchStart start;
        start.game = "test";
        start.tick_rate_hz = kHz;
        builder_.add(0, 0, 0, start);
        for (uint32_t id : {1u, 2u}) {
            build::PlayerJoin join;
            join.account_id = "p" + std::to_string(id);
            join.rating_tier = "gold";
            builder_.add(0, 0, id, join);
        }
        builder_.add(0, 0, 1, build::Latency{.rtt_us = kRttUs});
    }
    static Vec target_at(int64_t t_us) {
        const double a = kSpeedMps / kRangeM * static_cast<double>(t_us) / 1e6;
        return {kRangeM * std::cos(a), kRangeM * std::sin(a), 0};
    }
    // Aims every 10 s from `from_s` to `to_s` with the spread spread_mrad(t in hours).
    void aims(double from_s, double to_s, const std::function<double(double)>& spread_mrad) {
        // On a fixed grid (5 s, 15 s, ...), so that two halves make the whole.
        for (int64_t t = 5'000'000; t < static_cast<int64_t>(to_s * 1e6); t += 10'000'000) {
            if (t < static_cast<int64_t>(from_s * 1e6)) continue;
            const int64_t n = t / 10'000'000;
            for (int64_t back = 300'000; back >= 0; back -= 100'000)
                position(t - back - 20'000, 2, target_at(t - back - 20'000));
            position(t - 10'000, 1, {0, 0, 0});
            static constexpr double kPattern[] = {0.5, 1.0, 1.5};
            const double off = spread_mrad(static_cast<double>(t) / 3.6e9) / 1e3 * kPattern[n % 3] *
                               (n % 2 ? 1 : -1);
            const Vec seen = target_at(t - kRttUs);
            const double a = std::atan2(seen.y, seen.x) + off;
            build::Order o;
            o.kind = "fire";
            o.target_player = aim_at;
            o.target = fb::Vec3(static_cast<float>(kRangeM * std::cos(a)),
                                static_cast<float>(kRangeM * std::sin(a)), 0.0f);
            builder_.add(t, static_cast<uint64_t>(t / kTickUs), 1, o);
        }
    }
    std::vector<uint8_t> batch() { return builder_.finish(); }

    uint32_t aim_at = 2;  // the order's target player

  private:
    void position(int64_t t_us, uint32_t id, Vec at) {
        build::Position p;
        p.position =
            fb::Vec3(static_cast<float>(at.x), static_cast<float>(at.y), static_cast<float>(at.z));
        builder_.add(t_us, static_cast<uint64_t>(t_us / kTickUs), id, p);
    }
    BatchBuilder builder_;
};

// Runs a session of `hours` through a harness, ending the match; precision signals only.
std::vector<RecordedSignal> session(double hours, const std::function<double(double)>& spread,
                                    const ConfigValue& config = ConfigValue::table({})) {
    Harness<KaladinAnalyzer> h(config);
    EXPECT_TRUE(h.ok()) << h.error();
    AimMatch m;
    m.aims(5, hours * 3600, spread);
    auto signals = h.feed(m.batch());
    auto end = h.end_match("relay", 1);
    signals.insert(signals.end(), end.begin(), end.end());
    return of(signals, "aim.precision");
}

TEST(AnalyzerPrecision, TirelessTightAimOverTwoHoursIsSignalledWithEvidence) {
    auto signals = session(2.5, [](double) { return 2.0; });
    ASSERT_FALSE(signals.empty());
    const auto& s = signals.back();
    EXPECT_EQ(s.player, 1u);
    EXPECT_FALSE(s.tripwire);
    EXPECT_NEAR(s.score, 0.6, 0.02);  // (5 - 2) / 5
    for (const char* key :
         {"\"widest_block_spread_mrad\":2", "\"limit\":{\"value\":5",
          "fixed default: population baselines hold no precision metric yet",
          "\"widening_limit\":1.1", "\"widening_floor_mrad\":0.25", "\"allowed_late_mrad\":",
          "\"early_spread_mrad\":", "\"late_spread_mrad\":", "\"session_s\":", "\"block_s\":600",
          "\"blocks\":", "\"aims\":", "\"min_aims_per_block\":20",
          "\"block_spreads_mrad\":\"2.00 2.00"})
        EXPECT_NE(s.evidence.find(key), std::string::npos) << key << "\n" << s.evidence;
    // Not before two hours of aims.
    EXPECT_NE(s.evidence.find("\"session_s\":72"), std::string::npos) << s.evidence;
}

TEST(AnalyzerPrecision, TheSameAimForLessThanTwoHoursIsNotJudged) {
    EXPECT_TRUE(session(1.9, [](double) { return 2.0; }).empty());
}

TEST(AnalyzerPrecision, TightAimThatTiresIsNotSignalled) {
    // 2 mrad widening by 30 % an hour: still under 5 mrad after 2.5 h, but it widens.
    EXPECT_TRUE(session(2.5, [](double h) { return 2.0 * (1 + 0.3 * h); }).empty());
    // 2 % an hour is within the 1.1 allowance: signalled.
    EXPECT_FALSE(session(2.5, [](double h) { return 2.0 * (1 + 0.02 * h); }).empty());
}

TEST(AnalyzerPrecision, SpreadAroundTheLimit) {
    EXPECT_TRUE(session(2.5, [](double) { return 20.0; }).empty());  // a person's degree
    EXPECT_TRUE(session(2.5, [](double) { return 5.1; }).empty());
    EXPECT_FALSE(session(2.5, [](double) { return 4.8; }).empty());
}

TEST(AnalyzerPrecision, LimitsComeFromTheConfig) {
    auto config = ConfigValue::table({{"precision_spread_limit_mrad", ConfigValue(30.0)},
                                      {"precision_min_session_s", ConfigValue(3600.0)}});
    auto signals = session(
        1.5, [](double) { return 20.0; }, config);
    ASSERT_FALSE(signals.empty());
    EXPECT_NE(signals.back().evidence.find("\"min_session_s\":3600"), std::string::npos);
}

TEST(AnalyzerPrecision, OnlyOrdersAimedAtAnotherPlayerAreAims) {
    for (uint32_t aim_at : {0u, 1u}) {  // a point on the ground; the player itself
        Harness<KaladinAnalyzer> h;
        AimMatch m;
        m.aim_at = aim_at;
        m.aims(5, 2.5 * 3600, [](double) { return 2.0; });
        EXPECT_TRUE(of(h.feed(m.batch()), "aim.precision").empty()) << aim_at;
        EXPECT_TRUE(of(h.end_match("relay", 1), "aim.precision").empty()) << aim_at;
    }
}

TEST(AnalyzerPrecision, StateRestoredMidSessionChangesNothing) {
    auto spread = [](double) { return 2.0; };
    AimMatch whole;
    whole.aims(5, 2.5 * 3600, spread);
    Harness<KaladinAnalyzer> straight;
    auto expected = of(straight.feed(whole.batch()), "aim.precision");
    ASSERT_FALSE(expected.empty());

    // The same session in two batches with a reload between, 65 min in (mid-block).
    AimMatch first;
    first.aims(5, 65 * 60, spread);
    Harness<KaladinAnalyzer> before;
    auto got = of(before.feed(first.batch()), "aim.precision");
    EXPECT_TRUE(got.empty());
    auto blob = before.save_state();
    ASSERT_TRUE(blob);
    Harness<KaladinAnalyzer> after;
    ASSERT_EQ(after.restore_state(*blob), ARB_OK) << after.error();
    AimMatch rest;
    rest.aims(65 * 60, 2.5 * 3600, spread);
    auto later = of(after.feed(rest.batch()), "aim.precision");
    got.insert(got.end(), later.begin(), later.end());
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(got[i].evidence, expected[i].evidence);

    // Without the restore the session starts again at 65 min: too short to judge.
    Harness<KaladinAnalyzer> fresh;
    AimMatch alone;
    alone.aims(65 * 60, 2.5 * 3600, spread);
    EXPECT_TRUE(of(fresh.feed(alone.batch()), "aim.precision").empty());
}

// One match, one player, as kaladin writes it up to the version 2 part (the whole of a
// version 1 blob).
void put_one_player_to_version_two(StateWriter& v1) {
    v1.put<uint64_t>(1);
    v1.put_string("relay");
    v1.put<uint64_t>(1);
    v1.put<double>(kHz);
    v1.put<int64_t>(0);
    v1.put<uint64_t>(1);
    v1.put<uint32_t>(1);
    v1.put_string("gold");
    v1.put<uint64_t>(1);  // one input kept
    v1.put<int64_t>(1'000'000);
    v1.put<uint64_t>(20);
    v1.put<uint64_t>(1);  // distinct
    v1.put<uint64_t>(0);  // merged
    v1.put<uint8_t>(1);
    v1.put<uint64_t>(20);
    v1.put<uint8_t>(1);
    v1.put<int64_t>(1'000'000);
    v1.put<uint32_t>(1);
    v1.put<uint64_t>(0);  // pending stimuli
    v1.put<uint64_t>(0);  // reaction delays
    v1.put<uint8_t>(0);
    v1.put<uint32_t>(0);
    v1.put<double>(-1);
    v1.put<double>(-1);
    v1.put<double>(-1);
    for (int c = 0; c < 4; ++c) {
        v1.put<double>(-1);
        v1.put<uint8_t>(0);
    }
}

TEST(AnalyzerPrecision, VersionOneStateStillRestores) {
    // A blob as kaladin 0.1 wrote it before the precision check.
    StateWriter v1("KLD1", 1);
    put_one_player_to_version_two(v1);
    Harness<KaladinAnalyzer> h;
    ASSERT_EQ(h.restore_state(v1.finish()), ARB_OK) << h.error();
    // Its players start their precision afresh, and are judged as anyone.
    AimMatch m;
    m.aims(5, 2.5 * 3600, [](double) { return 2.0; });
    EXPECT_FALSE(of(h.feed(m.batch()), "aim.precision").empty());
    auto blob = h.save_state();
    ASSERT_TRUE(blob);
    Harness<KaladinAnalyzer> again;
    EXPECT_EQ(again.restore_state(*blob), ARB_OK) << again.error();
}

// A version 2 blob whose one player has one position of x = `x`.
std::vector<uint8_t> blob_with_position(double x) {
    StateWriter v2("KLD1", 2);
    put_one_player_to_version_two(v2);
    v2.put<uint64_t>(1);  // one position
    v2.put<int64_t>(1'000'000);
    v2.put<double>(x);
    v2.put<double>(2.5);
    v2.put<double>(0);
    v2.put<uint64_t>(0);  // round trips
    v2.put<uint8_t>(0);   // no first aim
    v2.put<int64_t>(0);
    v2.put<int64_t>(0);
    v2.put<int64_t>(0);   // open block
    v2.put<uint64_t>(0);  // its aim errors
    v2.put<uint64_t>(0);  // blocks
    v2.put<uint64_t>(0);  // thin blocks
    v2.put<uint64_t>(0);  // aims
    v2.put<double>(-1);   // the precision check's report
    v2.put<uint8_t>(0);
    return v2.finish();
}

TEST(AnalyzerPrecision, APositionNoEventCouldCarryIsRefused) {
    // Positions arrive as floats and are kept as floats: a saved one that no float holds
    // was not written by kaladin, and the blob is refused rather than rounded.
    Harness<KaladinAnalyzer> h;
    EXPECT_EQ(h.restore_state(blob_with_position(0.5)), ARB_OK) << h.error();
    Harness<KaladinAnalyzer> other;
    EXPECT_EQ(other.restore_state(blob_with_position(0.1)), ARB_ERR_STATE);
    EXPECT_NE(other.error().find("not a float"), std::string::npos) << other.error();
    // Beyond float's range (converting it would be undefined), refused the same way.
    Harness<KaladinAnalyzer> far;
    EXPECT_EQ(far.restore_state(blob_with_position(1e300)), ARB_ERR_STATE);
    EXPECT_NE(far.error().find("not a float"), std::string::npos) << far.error();
}

struct BadKey {
    const char* key;
    double value;
};
class AnalyzerPrecisionConfig : public ::testing::TestWithParam<BadKey> {};
TEST_P(AnalyzerPrecisionConfig, OutOfRangeIsRefusedNamingTheKey) {
    const auto c = GetParam();
    ConfigValue value =
        std::string(c.key) == "precision_min_aims" || std::string(c.key) == "precision_min_blocks"
            ? ConfigValue(static_cast<int64_t>(c.value))
            : ConfigValue(c.value);
    Harness<KaladinAnalyzer> h(ConfigValue::table({{c.key, value}}));
    EXPECT_EQ(h.create_status(), ARB_ERR_CONFIG) << c.key;
    EXPECT_NE(h.error().find(c.key), std::string::npos) << h.error();
}
INSTANTIATE_TEST_SUITE_P(Kaladin, AnalyzerPrecisionConfig,
                         ::testing::Values(BadKey{"precision_block_s", 5.0},
                                           BadKey{"precision_min_aims", 0},
                                           BadKey{"precision_min_session_s", 1199.0},
                                           BadKey{"precision_min_blocks", 2},
                                           BadKey{"precision_spread_limit_mrad", -1.0},
                                           BadKey{"precision_widening_limit", 0.99},
                                           BadKey{"precision_widening_floor_mrad", -0.1},
                                           BadKey{"precision_view_delay_ms", 1001.0},
                                           BadKey{"precision_min_range_m", 0.0}));

}  // namespace
}  // namespace arbiter::kaladin
