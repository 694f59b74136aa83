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
    // Set by the host for its sinks: the player's account (from their join, where known)
    // and the relay time of the player's first event in the match.
    std::string account;
    std::optional<int64_t> player_first_seen_us;

    // score × confidence × weight, at most 1.
    double weighted() const;
};

// Batches of a match that never arrived.
struct LostStretch {
    uint64_t from_sequence = 0;  // the first missing batch
    uint64_t to_sequence = 0;    // the last missing batch, inclusive
    // The relay time of the last batch before the gap (none when the first batches of
    // the match are missing) and of the first batch after it.
    std::optional<int64_t> after_relay_us;
    int64_t before_relay_us = 0;
    // The rest of the match never arrived: the file it was read from was damaged after the
    // match's last batch, and the match ended without its own MatchEnd. to_sequence is
    // then unknown (equal to from_sequence) and before_relay_us is the last time heard.
    bool through_end = false;
    // What lost it, where the host knows: "damaged.arbev: bytes 4096 to 8191 damaged".
    std::string cause;

    // How many batches were lost; 0 when unknown (through_end).
    uint64_t batches() const { return through_end ? 0 : to_sequence - from_sequence + 1; }
    std::string describe() const;  // "batches 4..6 (relay time 12.000 s to 15.250 s)"
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
    // Stretches of the player's match whose batches never arrived (see SequenceLedger):
    // the checks above saw the match with these holes in it.
    std::vector<LostStretch> lost_input;
};

}  // namespace arbiter::host
