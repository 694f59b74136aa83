// Aggregation: signals in, one latched assessment per player per match out, by the
// rules of ARCHITECTURE.md ("Aggregation"), each a setting of [aggregation].
//
// Every quantity here only grows with new signals (each check keeps its highest, the
// class combination is monotonic, the action is latched), so the result for a stream
// does not depend on how it was cut into batches, nor on the order in which plugins'
// signals of one batch arrive.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/config.hpp"

namespace arbiter::host {

class Aggregator {
  public:
    explicit Aggregator(AggregationSettings settings);

    // Makes a player known (so it is assessed even with no signal), with its account id
    // when the relay gave one.
    void observe_player(const PlayerKey& player, const std::string& account_id = "");

    // Takes one signal; returns the player's action when the signal raised it.
    std::optional<Action> add(const SignalRecord& signal);

    // Every known player, ordered by relay, match and player.
    std::vector<Assessment> assessments() const;
    std::optional<Assessment> assessment(const PlayerKey& player) const;
    // The players of one match, in order: a range of the map, not a walk of every player.
    std::vector<Assessment> match_assessments(const std::string& relay_id, uint64_t match_id) const;
    // Drops the players of one match (a server, once their final assessments went out),
    // so that memory follows the matches in play, not every match ever seen.
    size_t forget_match(const std::string& relay_id, uint64_t match_id);
    size_t players() const { return players_.size(); }

    // New rules apply to the signals already held; actions stay latched.
    void set_settings(AggregationSettings settings);
    const AggregationSettings& settings() const { return settings_; }

  private:
    struct CheckKey {
        std::string plugin;
        std::string code;
        auto operator<=>(const CheckKey&) const = default;
    };
    struct PlayerState {
        std::string account_id;
        std::map<CheckKey, SignalRecord> best;  // strongest signal per check
        Action latched = Action::clear;
        std::vector<std::string> latched_reasons;
        bool tripwire = false;
    };

    // The action the current scores reach, with its reasons.
    Assessment evaluate(const PlayerKey& key, const PlayerState& state) const;
    // evaluate(), with the latched action if that is higher.
    Assessment current(const PlayerKey& key, const PlayerState& state) const;
    void relatch(const PlayerKey& key, PlayerState& state);

    AggregationSettings settings_;
    std::map<PlayerKey, PlayerState> players_;
};

}  // namespace arbiter::host
