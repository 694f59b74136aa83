// Aggregation: each default rule of ARCHITECTURE.md ("Aggregation"), and each as a setting.
#include <gtest/gtest.h>

#include "arbiter/host/aggregator.hpp"

namespace {

using arbiter::host::Action;
using arbiter::host::AggregationSettings;
using arbiter::host::Aggregator;
using arbiter::host::ModelClass;
using arbiter::host::PlayerKey;
using arbiter::host::SignalRecord;

const PlayerKey kPlayer{"relay", 1, 7};

SignalRecord signal(const std::string& plugin, ModelClass model_class, const std::string& code,
                    double score, double confidence = 1.0) {
    SignalRecord s;
    s.plugin = plugin;
    s.model_class = model_class;
    s.code = code;
    s.score = score;
    s.confidence = confidence;
    s.player = kPlayer;
    s.evidence_json = "{}";
    return s;
}

Action action_of(const Aggregator& aggregator) {
    return aggregator.assessment(kPlayer)->action;
}

TEST(Aggregator, KnownPlayerWithoutSignalsIsClear) {
    Aggregator aggregator({});
    aggregator.observe_player(kPlayer, "acct-7");
    auto all = aggregator.assessments();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].action, Action::clear);
    EXPECT_EQ(all[0].account_id, "acct-7");
    EXPECT_DOUBLE_EQ(all[0].combined_score, 0.0);
}

TEST(Aggregator, ScoreTimesConfidenceTimesWeight) {
    Aggregator aggregator({});
    auto s = signal("p", ModelClass::validation, "c", 0.8, 0.5);
    s.weight = 2.0;
    aggregator.add(s);
    EXPECT_DOUBLE_EQ(aggregator.assessment(kPlayer)->class_scores.at(ModelClass::validation), 0.8);
    s.weight = 10.0;  // capped at 1
    EXPECT_DOUBLE_EQ(s.weighted(), 1.0);
}

TEST(Aggregator, ValidationAtReviewReachesFlagForReviewAlone) {
    Aggregator aggregator({});
    EXPECT_EQ(aggregator.add(signal("ref", ModelClass::validation, "movement.speed", 0.75)),
              Action::flag_for_review);
}

TEST(Aggregator, WeakValidationIsMonitor) {
    Aggregator aggregator({});
    aggregator.add(signal("ref", ModelClass::validation, "movement.speed", 0.4));
    EXPECT_EQ(action_of(aggregator), Action::monitor);
    Aggregator below({});
    below.add(signal("ref", ModelClass::validation, "movement.speed", 0.29));
    EXPECT_EQ(action_of(below), Action::clear);
}

TEST(Aggregator, ACheckThatFiresAgainIsNotNewEvidence) {
    Aggregator aggregator({});
    for (int i = 0; i < 10; ++i)
        aggregator.add(signal("ref", ModelClass::validation, "movement.speed", 0.5));
    auto a = *aggregator.assessment(kPlayer);
    EXPECT_DOUBLE_EQ(a.class_scores.at(ModelClass::validation), 0.5);
    EXPECT_EQ(a.action, Action::monitor);
    EXPECT_EQ(a.checks.size(), 1u);
}

TEST(Aggregator, DistinctChecksOfAClassCombine) {
    Aggregator aggregator({});
    aggregator.add(signal("ref", ModelClass::validation, "a", 0.5));
    aggregator.add(signal("ref", ModelClass::validation, "b", 0.5));
    auto a = *aggregator.assessment(kPlayer);
    EXPECT_DOUBLE_EQ(a.class_scores.at(ModelClass::validation), 0.75);  // 1 - 0.5 * 0.5
    EXPECT_EQ(a.action, Action::flag_for_review);
    for (char c = 'c'; c < 'z'; ++c)
        aggregator.add(signal("ref", ModelClass::validation, std::string(1, c), 0.9));
    EXPECT_LE(aggregator.assessment(kPlayer)->class_scores.at(ModelClass::validation), 1.0);
}

TEST(Aggregator, BehaviouralAloneStopsAtMonitor) {
    Aggregator aggregator({});
    aggregator.add(signal("kaladin", ModelClass::behavioural, "timing.cv", 0.99));
    auto a = *aggregator.assessment(kPlayer);
    EXPECT_EQ(a.action, Action::monitor);
    ASSERT_FALSE(a.reasons.empty());
    EXPECT_NE(a.reasons[0].find("no second class"), std::string::npos);
}

TEST(Aggregator, BehaviouralWithASecondClassReachesReview) {
    Aggregator aggregator({});
    aggregator.add(signal("kaladin", ModelClass::behavioural, "timing.cv", 0.9));
    EXPECT_EQ(aggregator.add(signal("ref", ModelClass::validation, "movement.speed", 0.35)),
              Action::flag_for_review);
}

TEST(Aggregator, APluginCannotAgreeWithItself) {
    // Two checks of one behavioural plugin are one class: no second class of evidence.
    Aggregator aggregator({});
    aggregator.add(signal("kaladin", ModelClass::behavioural, "timing.cv", 0.9));
    aggregator.add(signal("kaladin", ModelClass::behavioural, "timing.rate", 0.9));
    EXPECT_EQ(action_of(aggregator), Action::monitor);
}

TEST(Aggregator, StatisticalNeedsASecondClassToo) {
    Aggregator aggregator({});
    aggregator.add(signal("stats", ModelClass::statistical, "aim", 0.95));
    EXPECT_EQ(action_of(aggregator), Action::monitor);
    aggregator.add(signal("kaladin", ModelClass::behavioural, "timing", 0.31));
    EXPECT_EQ(action_of(aggregator), Action::flag_for_review);
}

TEST(Aggregator, TripwireFromAnAllowedPluginReachesReviewAlone) {
    Aggregator aggregator({});
    auto s = signal("kaladin", ModelClass::behavioural, "rate.tripwire", 0.5);
    s.tripwire = true;
    s.tripwires_allowed = true;
    EXPECT_EQ(aggregator.add(s), Action::flag_for_review);
    EXPECT_TRUE(aggregator.assessment(kPlayer)->tripwire);
}

TEST(Aggregator, TripwireFromAPluginNotAllowedCountsAsAPlainSignal) {
    Aggregator aggregator({});
    auto s = signal("private", ModelClass::behavioural, "rate.tripwire", 0.5);
    s.tripwire = true;
    s.tripwires_allowed = false;
    aggregator.add(s);
    EXPECT_EQ(action_of(aggregator), Action::monitor);
    EXPECT_FALSE(aggregator.assessment(kPlayer)->tripwire);
}

TEST(Aggregator, ShadowRestrictOnlyWithEnforcement) {
    Aggregator observing({});
    observing.add(signal("ref", ModelClass::validation, "teleport", 1.0));
    EXPECT_EQ(action_of(observing), Action::flag_for_review);

    AggregationSettings enforcing;
    enforcing.enforcement = true;
    Aggregator aggregator(enforcing);
    aggregator.add(signal("ref", ModelClass::validation, "speed", 0.8));
    EXPECT_EQ(action_of(aggregator), Action::flag_for_review);  // below the restrict threshold
    aggregator.add(signal("ref", ModelClass::validation, "teleport", 1.0));
    EXPECT_EQ(action_of(aggregator), Action::shadow_restrict);
}

TEST(Aggregator, TheActionIsLatchedButScoresAreCurrent) {
    Aggregator aggregator({});
    aggregator.add(signal("ref", ModelClass::validation, "speed", 0.9));
    EXPECT_EQ(action_of(aggregator), Action::flag_for_review);
    // An operator raises the threshold mid-match: the action stays, the reasons say why.
    AggregationSettings stricter;
    stricter.monitor_threshold = 0.95;
    stricter.review_threshold = 0.99;
    stricter.restrict_threshold = 1.0;
    aggregator.set_settings(stricter);
    auto a = *aggregator.assessment(kPlayer);
    EXPECT_EQ(a.action, Action::flag_for_review);
    EXPECT_DOUBLE_EQ(a.class_scores.at(ModelClass::validation), 0.9);
    ASSERT_FALSE(a.reasons.empty());
    EXPECT_NE(a.reasons[0].find("review threshold 0.70"), std::string::npos);
}

TEST(Aggregator, EveryRuleIsASetting) {
    AggregationSettings settings;
    settings.validation_alone_reaches_review = false;
    Aggregator strict(settings);
    strict.add(signal("ref", ModelClass::validation, "speed", 0.9));
    EXPECT_EQ(action_of(strict), Action::monitor);

    settings = {};
    settings.second_class_required = {};
    Aggregator lenient(settings);
    lenient.add(signal("kaladin", ModelClass::behavioural, "timing", 0.9));
    EXPECT_EQ(action_of(lenient), Action::flag_for_review);

    settings = {};
    settings.tripwires_reach_review = false;
    Aggregator no_tripwires(settings);
    auto s = signal("kaladin", ModelClass::behavioural, "rate", 0.1);
    s.tripwire = s.tripwires_allowed = true;
    no_tripwires.add(s);
    EXPECT_EQ(action_of(no_tripwires), Action::clear);
}

TEST(Aggregator, OrderOfSignalsDoesNotMatter) {
    std::vector<SignalRecord> signals = {
        signal("kaladin", ModelClass::behavioural, "timing", 0.9),
        signal("ref", ModelClass::validation, "speed", 0.2),
        signal("ref", ModelClass::validation, "speed", 0.4),
        signal("ref", ModelClass::validation, "teleport", 0.1),
    };
    Aggregator forward({}), backward({});
    for (const auto& s : signals)
        forward.add(s);
    for (auto it = signals.rbegin(); it != signals.rend(); ++it)
        backward.add(*it);
    auto a = *forward.assessment(kPlayer), b = *backward.assessment(kPlayer);
    EXPECT_EQ(a.action, b.action);
    EXPECT_EQ(a.class_scores, b.class_scores);
    EXPECT_EQ(a.action, Action::flag_for_review);
}

TEST(Aggregator, PlayersAreKeptApartByMatch) {
    Aggregator aggregator({});
    auto s = signal("ref", ModelClass::validation, "teleport", 1.0);
    aggregator.add(s);
    aggregator.observe_player({"relay", 2, 7});
    auto all = aggregator.assessments();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].action, Action::flag_for_review);
    EXPECT_EQ(all[1].action, Action::clear);
}

}  // namespace

// A long-running server drops an ended match's players once their final assessments are
// out (issue 19); the other matches, of the same relay or another, stay whole.
TEST(Aggregator, AMatchIsReadAndForgottenAsARangeOfItsOwnPlayers) {
    Aggregator aggregator({});
    for (uint32_t player = 1; player <= 3; ++player) {
        aggregator.observe_player({"relay", 1, player});
        aggregator.observe_player({"relay", 2, player});
        aggregator.observe_player({"relay-b", 1, player});
    }
    auto s = signal("p", ModelClass::validation, "c", 0.9);
    s.player = {"relay", 1, 2};
    aggregator.add(s);
    const auto match = aggregator.match_assessments("relay", 1);
    ASSERT_EQ(match.size(), 3u);
    EXPECT_EQ(match[1].player.player, 2u);
    EXPECT_EQ(match[1].action, Action::flag_for_review);
    EXPECT_TRUE(aggregator.match_assessments("relay", 3).empty());

    EXPECT_EQ(aggregator.forget_match("relay", 1), 3u);
    EXPECT_EQ(aggregator.players(), 6u);
    EXPECT_TRUE(aggregator.match_assessments("relay", 1).empty());
    EXPECT_EQ(aggregator.match_assessments("relay", 2).size(), 3u);
    EXPECT_EQ(aggregator.match_assessments("relay-b", 1).size(), 3u);
    EXPECT_EQ(aggregator.forget_match("relay", 1), 0u);  // again: nothing
}
