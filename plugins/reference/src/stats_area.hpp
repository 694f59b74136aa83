// The stats area of the analyzer: each player's experience gains, hits and damage taken and
// resources, the [stats] settings, and the area's sections of the saved state. The checks
// themselves are the pure functions of stats.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <arbiter/sdk.hpp>

#include "reports.hpp"
#include "stats.hpp"

namespace arbiter::reference {

class StatsArea {
  public:
    struct Player {
        Ring<StatGain> experience;  // experience gains in the window
        // Damaging hits taken and damage registered, in the combat window.
        Ring<int64_t> hits_taken;
        Ring<int64_t> damage_taken;
        std::map<std::string, double> resources;  // each resource's last value
        int64_t unspent = 0;                      // resource spends that did not spend

        bool empty() const {
            return experience.empty() && hits_taken.empty() && damage_taken.empty() &&
                   resources.empty() && unspent == 0;
        }
    };
    struct Match {
        bool damage_reported = false;  // the game reports the damage stat at all
    };

    // Reads the [stats] table.
    explicit StatsArea(const ConfigTable& config);

    void on_stat(const fb::Event& event, Match& match, Player& player, Reporter& out) const;
    // The player a hit claim hurt: another player, alive and damageable, and damage done;
    // 0 if none. Hits taken are the invulnerability check's evidence of combat.
    static uint32_t hurt_player(const fb::Event& hit_claim);
    // `player_id` took such a hit at relay time t_us.
    void on_hit_taken(uint32_t player_id, int64_t t_us, const Match& match, Player& player,
                      Reporter& out) const;
    // Input was lost: the windows and the resources' last values span the gap, so they start
    // again; each spend that did not spend showed it on its own, so their count stays.
    void on_input_lost(Player& player) const;

    // Version 3 on: a player's gains, hits and damage taken, resources and spends, and
    // whether the match reports damage.
    void save_player(StateWriter& out, const Player& player) const;
    void restore_player(StateReader& in, Player& player) const;
    void save_match(StateWriter& out, const Match& match) const;
    void restore_match(StateReader& in, Match& match) const;

  private:
    StatLimits limits_;
};

}  // namespace arbiter::reference
