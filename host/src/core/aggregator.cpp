#include "arbiter/host/aggregator.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace arbiter::host {

const char* to_string(Action action) {
    switch (action) {
        case Action::clear:
            return "Clear";
        case Action::monitor:
            return "Monitor";
        case Action::flag_for_review:
            return "FlagForReview";
        case Action::shadow_restrict:
            return "ShadowRestrict";
    }
    return "Unknown";
}

double SignalRecord::weighted() const {
    return std::clamp(score * confidence * weight, 0.0, 1.0);
}

Aggregator::Aggregator(AggregationSettings settings) : settings_(std::move(settings)) {}

void Aggregator::observe_player(const PlayerKey& player, const std::string& account_id) {
    auto& state = players_[player];
    if (!account_id.empty()) state.account_id = account_id;
}

std::optional<Action> Aggregator::add(const SignalRecord& signal) {
    auto& state = players_[signal.player];
    CheckKey check{signal.plugin, signal.code};
    auto it = state.best.find(check);
    // A check that fires again is not new evidence: keep its strongest signal only.
    // Ties keep the first, so the result does not depend on batching.
    if (it == state.best.end()) {
        state.best.emplace(check, signal);
    } else if (signal.weighted() > it->second.weighted() ||
               (signal.tripwire && !it->second.tripwire)) {
        bool had_tripwire = it->second.tripwire;
        it->second = signal;
        it->second.tripwire = it->second.tripwire || had_tripwire;
    }
    if (signal.tripwire && signal.tripwires_allowed) state.tripwire = true;

    Action before = state.latched;
    relatch(signal.player, state);
    if (state.latched > before) return state.latched;
    return std::nullopt;
}

void Aggregator::relatch(const PlayerKey& key, PlayerState& state) {
    Assessment now = evaluate(key, state);
    if (now.action > state.latched) {
        state.latched = now.action;
        state.latched_reasons = now.reasons;
    }
}

void Aggregator::set_settings(AggregationSettings settings) {
    settings_ = std::move(settings);
    for (auto& [key, state] : players_)
        relatch(key, state);
}

Assessment Aggregator::evaluate(const PlayerKey& key, const PlayerState& state) const {
    const AggregationSettings& rules = settings_;
    Assessment assessment;
    assessment.player = key;
    assessment.account_id = state.account_id;

    // Distinct checks of one class combine as 1 − Π(1 − s): independent weak evidence
    // adds up but never passes 1.
    std::map<ModelClass, double> remaining;  // Π(1 − s) per class
    for (const auto& [check, signal] : state.best) {
        auto [it, inserted] = remaining.emplace(signal.model_class, 1.0);
        it->second *= 1.0 - signal.weighted();
        assessment.checks.push_back(signal);
    }
    double all_remaining = 1.0;
    for (const auto& [model_class, rest] : remaining) {
        assessment.class_scores[model_class] = 1.0 - rest;
        all_remaining *= rest;
    }
    assessment.combined_score = 1.0 - all_remaining;
    std::stable_sort(
        assessment.checks.begin(), assessment.checks.end(),
        [](const SignalRecord& a, const SignalRecord& b) { return a.weighted() > b.weighted(); });

    auto needs_second_class = [&](ModelClass model_class) {
        if (model_class == ModelClass::validation && !rules.validation_alone_reaches_review)
            return true;
        return std::find(rules.second_class_required.begin(), rules.second_class_required.end(),
                         model_class) != rules.second_class_required.end();
    };

    Action action = Action::clear;
    std::vector<std::string> reasons;
    double strongest = 0.0;
    for (const auto& [model_class, score] : assessment.class_scores) {
        strongest = std::max(strongest, score);
        if (score < rules.monitor_threshold) continue;
        if (score < rules.review_threshold) {
            action = std::max(action, Action::monitor);
            reasons.push_back(fmt::format("{} score {:.2f} >= monitor threshold {:.2f}",
                                          to_string(model_class), score, rules.monitor_threshold));
            continue;
        }
        if (!needs_second_class(model_class)) {
            action = std::max(action, Action::flag_for_review);
            reasons.push_back(fmt::format("{} score {:.2f} >= review threshold {:.2f}",
                                          to_string(model_class), score, rules.review_threshold));
            continue;
        }
        std::string second;
        for (const auto& [other, other_score] : assessment.class_scores)
            if (other != model_class && other_score >= rules.monitor_threshold)
                second = to_string(other);
        if (!second.empty()) {
            action = std::max(action, Action::flag_for_review);
            reasons.push_back(fmt::format(
                "{} score {:.2f} >= review threshold {:.2f}, with {} evidence at monitor "
                "level or above",
                to_string(model_class), score, rules.review_threshold, second));
        } else {
            action = std::max(action, Action::monitor);
            reasons.push_back(
                fmt::format("{} score {:.2f} >= review threshold {:.2f}, but no second class of "
                            "evidence: Monitor only",
                            to_string(model_class), score, rules.review_threshold));
        }
    }
    if (state.tripwire) {
        assessment.tripwire = true;
        if (rules.tripwires_reach_review) {
            action = std::max(action, Action::flag_for_review);
            reasons.push_back("a trip-wire fired (an extreme no human reaches)");
        }
    }
    if (rules.enforcement && action == Action::flag_for_review &&
        (strongest >= rules.restrict_threshold || state.tripwire)) {
        action = Action::shadow_restrict;
        reasons.push_back(
            fmt::format("enforcement is on and the evidence reaches the restrict threshold {:.2f}",
                        rules.restrict_threshold));
    }
    assessment.action = action;
    assessment.reasons = std::move(reasons);
    return assessment;
}

Assessment Aggregator::current(const PlayerKey& key, const PlayerState& state) const {
    Assessment assessment = evaluate(key, state);
    // The action is latched: it never falls back, and its reasons are the ones that
    // raised it; the scores beside it are current.
    if (state.latched > assessment.action) {
        assessment.action = state.latched;
        assessment.reasons = state.latched_reasons;
    }
    return assessment;
}

std::vector<Assessment> Aggregator::assessments() const {
    std::vector<Assessment> out;
    out.reserve(players_.size());
    for (const auto& [key, state] : players_)
        out.push_back(current(key, state));
    return out;
}

std::vector<Assessment> Aggregator::match_assessments(const std::string& relay_id,
                                                      uint64_t match_id) const {
    std::vector<Assessment> out;
    for (auto it = players_.lower_bound({relay_id, match_id, 0});
         it != players_.end() && it->first.relay_id == relay_id && it->first.match_id == match_id; ++it)
        out.push_back(current(it->first, it->second));
    return out;
}

size_t Aggregator::forget_match(const std::string& relay_id, uint64_t match_id) {
    auto first = players_.lower_bound({relay_id, match_id, 0});
    auto last = first;
    size_t count = 0;
    while (last != players_.end() && last->first.relay_id == relay_id && last->first.match_id == match_id) {
        ++last;
        ++count;
    }
    players_.erase(first, last);
    return count;
}

std::optional<Assessment> Aggregator::assessment(const PlayerKey& player) const {
    auto it = players_.find(player);
    if (it == players_.end()) return std::nullopt;
    return current(it->first, it->second);
}

}  // namespace arbiter::host
