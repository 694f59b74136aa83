// The clock area of the analyzer: each player's orders and the trend of its clock, the
// match's tick length and start, the [clock] settings, and the area's sections of the saved
// state. The checks themselves are the pure functions of clock.hpp.
#pragma once

#include <cstdint>
#include <optional>

#include <arbiter/sdk.hpp>

#include "clock.hpp"
#include "lazy.hpp"
#include "reports.hpp"

namespace arbiter::reference {

class ClockArea {
  public:
    struct Player {
        int64_t ahead_orders = 0;  // orders stamped ahead of the relay's tick
        // Client against relay time, in the window. Every player has this record and many
        // games send no client time: a pointer until the first (a Ring alone is 24 bytes
        // while empty).
        Lazy<Ring<ClockSample>> trend;
    };
    struct Match {
        double tick_s = 0;             // from MatchStart; 0 until then (the config's rate)
        int64_t started_unix_us = -1;  // from MatchStart; -1 until then
    };

    // Reads the [clock] table.
    explicit ClockArea(const ConfigTable& config);
    const ClockLimits& limits() const { return limits_; }

    // The length of the match's ticks: its own, once a MatchStart gave it.
    double tick_s(const Match& match) const;

    void on_match_start(const fb::MatchStart& start, Match& match) const;
    void on_order(const fb::Event& event, Player& player, Reporter& out) const;
    // A MatchEnd's claimed run length against the relay's wall time, as a signal about
    // `runner`, the player whose run it is (0: nobody's, no signal). Returned, not
    // reported: the runner may have left, and the analyzer makes it a record only for this.
    std::optional<Signal> check_run_length(const fb::Event& event, const Match& match,
                                           uint32_t runner) const;
    // Input was lost: the trend spans the gap, so it starts again; each order ahead of the
    // tick was ahead on its own, so their count stays.
    void on_input_lost(Player& player) const;

    // Version 3 on: a player's orders ahead and trend, and the match's ticks and start.
    void save_player(StateWriter& out, const Player& player) const;
    void restore_player(StateReader& in, Player& player) const;
    void save_match(StateWriter& out, const Match& match) const;
    void restore_match(StateReader& in, Match& match) const;

  private:
    ClockLimits limits_;
};

}  // namespace arbiter::reference
