// What the host concludes about a player: the vocabulary shared by aggregation and the
// sinks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"

namespace arbiter::host {

// Ordered: a higher action includes the lower ones.
enum class Action : uint8_t { clear = 0, monitor = 1, flag_for_review = 2, shadow_restrict = 3 };
const char* to_string(Action action);

struct PlayerKey {
    std::string relay_id;
    uint64_t match_id = 0;
    uint32_t player = 0;
    auto operator<=>(const PlayerKey&) const = default;
};

// A signal in context: which plugin sent it, about whom, and how the operator's config
// weighs it.
struct SignalRecord {
    std::string plugin;
    ModelClass model_class = ModelClass::validation;
    double weight = 1.0;
    bool tripwires_allowed = false;
    PlayerKey player;
    std::string code;
    double score = 0.0;
    double confidence = 0.0;
    bool tripwire = false;
    std::string evidence_json;
    int64_t reported_at_us = 0;  // relay time of the batch in hand when it was reported

    // score × confidence × weight, at most 1.
    double weighted() const;
};

struct Assessment {
    PlayerKey player;
    std::string account_id;  // from the player's join, where known
    Action action = Action::clear;
    double combined_score = 0.0;  // 1 − Π(1 − class score), for display
    std::map<ModelClass, double> class_scores;
    bool tripwire = false;             // an allowed trip-wire fired
    std::vector<std::string> reasons;  // why the action, in words
    std::vector<SignalRecord> checks;  // the strongest signal of each check, strongest first
};

}  // namespace arbiter::host
