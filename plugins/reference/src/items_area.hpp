// The items area of the analyzer: each player's recent acquisitions, the [items] settings,
// and the area's section of the saved state. The checks themselves are the pure functions of
// items.hpp.
#pragma once

#include <arbiter/sdk.hpp>

#include "items.hpp"
#include "lag.hpp"
#include "relay_times.hpp"
#include "reports.hpp"

namespace arbiter::reference {

class ItemsArea {
  public:
    struct Player {
        // Relay times of the rate-limited acquisitions of each item, in the window.
        TimesByName acquisitions;

        bool empty() const { return acquisitions.empty(); }
    };

    // Reads the [items] table.
    explicit ItemsArea(const ConfigTable& config);
    const ItemSettings& settings() const { return settings_; }

    void on_inventory(const fb::Event& event, const LagSeen& lag, Player& player,
                      Reporter& out) const;
    // Input was lost: the acquisition windows span the gap, so they start again.
    void on_input_lost(Player& player) const;

    // Version 3 on: a player's acquisitions.
    void save_player(StateWriter& out, const Player& player) const;
    void restore_player(StateReader& in, Player& player) const;

  private:
    ItemSettings settings_;
};

}  // namespace arbiter::reference
