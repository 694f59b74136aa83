// The hits area of the analyzer: each player's recent shots and kills and its claims that
// failed a check, the [hits] settings, and the area's section of the saved state. The checks
// themselves are the pure functions of hits.hpp.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <arbiter/sdk.hpp>

#include "hits.hpp"
#include "lag.hpp"
#include "relay_times.hpp"
#include "reports.hpp"

namespace arbiter::reference {

class HitsArea {
  public:
    struct Player {
        // Relay times of the shots and kills of each weapon, in the fire window.
        TimesByName shots;
        TimesByName kills;
        // Claims that failed line of sight, and target state.
        int64_t blocked_hits = 0;
        int64_t dead_target_hits = 0;

        bool empty() const {
            return shots.empty() && kills.empty() && blocked_hits == 0 && dead_target_hits == 0;
        }
    };

    // Reads the [hits] table.
    explicit HitsArea(const ConfigTable& config);
    const HitLimits& limits() const { return limits_; }

    // tick_s: the match's tick length, for the claimed tick's timing.
    void on_hit(const fb::Event& event, double tick_s, const LagSeen& lag, Player& player,
                Reporter& out) const;
    void on_kill(const fb::Event& event, const LagSeen& lag, Player& player, Reporter& out) const;
    // Input was lost: the fire windows span the gap, so they start again; each claim that
    // failed a check failed it on its own, so their counts stay.
    void on_input_lost(Player& player) const;

    // Version 3 on: a player's shots, kills and failed claims.
    void save_player(StateWriter& out, const Player& player) const;
    void restore_player(StateReader& in, Player& player) const;

  private:
    // Counts one shot (or kill) of a weapon and reports when the count outruns its fire rate.
    void check_rate(uint32_t id, const LagSeen& lag, std::deque<int64_t>& times, int64_t t_us,
                    const std::string& weapon_name, const WeaponLimits& weapon, const char* kind,
                    const char* count_key, Reporter& out) const;

    HitLimits limits_;
};

}  // namespace arbiter::reference
