// The sessions area of the analyzer: the joins and reconnects of each match, the [sessions]
// settings, and the area's sections of the saved state. The checks themselves are the pure
// functions of sessions.hpp.
//
// Everything here stays within one match, as a plugin sharded by match must (the host gives
// each shard only its own matches). One account in two places spans matches: the accounts
// plugin holds it (accounts_analyzer.hpp), which the host runs unsharded.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include <arbiter/sdk.hpp>

#include "reports.hpp"
#include "sessions.hpp"

namespace arbiter::reference {

class SessionsArea {
  public:
    // No state per player: a player's reconnects outlive its leaves, so the match keeps them.
    struct Match {
        // Reconnects of each player id, kept across leaves, in the window.
        std::map<uint32_t, std::deque<int64_t>> reconnects;
        // The account of every player id that joined: a second join of an id is a
        // reconnect, and a match one player joined has its run (only_player).
        std::map<uint32_t, std::string> accounts;
    };

    // Reads the [sessions] table.
    explicit SessionsArea(const ConfigTable& config);

    void on_join(const fb::Event& event, Match& match, Reporter& out) const;
    // The only player that joined the match, or 0 if none or several did.
    uint32_t only_player(const Match& match) const;

    // Version 3 on: the match's reconnects and accounts. (The blob's live sessions, after
    // every match, are the analyzer's to write empty and to drop: live_sessions.hpp.)
    void save_match(StateWriter& out, const Match& match) const;
    void restore_match(StateReader& in, Match& match) const;

  private:
    SessionLimits limits_;
};

}  // namespace arbiter::reference
