// The sessions area of the analyzer: the joins and reconnects of each match, where each
// account is connected, the [sessions] settings, and the area's sections of the saved state.
// The checks themselves are the pure functions of sessions.hpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

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
        std::map<uint32_t, std::string> accounts;  // every player id that joined
    };
    // Where each account is connected, across every match this instance sees. "One account
    // in two places" spans matches, so it needs one instance to see them all: it holds
    // while the host does not shard plugins by match (it does not yet); a sharded host
    // would see only the two-places-within-one-match case.
    using LiveSessions = std::map<std::string, std::vector<LiveSession>>;

    // Reads the [sessions] table.
    explicit SessionsArea(const ConfigTable& config);

    void on_join(const MatchKey& key, const fb::Event& event, Match& match, LiveSessions& live,
                 Reporter& out) const;
    // The player's session in the match is over: it left, or the match ended, or input was
    // lost (a leave in the lost batches would leave its session live, and the account's
    // next join, here or in another match, would look like one account in two places).
    void end_session(const MatchKey& key, const Match& match, LiveSessions& live,
                     uint32_t player_id) const;
    // The same for every player that joined the match.
    void end_sessions(const MatchKey& key, const Match& match, LiveSessions& live) const;
    // The only player that joined the match, or 0 if none or several did.
    uint32_t only_player(const Match& match) const;

    // Version 3 on: the match's reconnects and accounts, and the live sessions.
    void save_match(StateWriter& out, const Match& match) const;
    void restore_match(StateReader& in, Match& match) const;
    void save_live(StateWriter& out, const LiveSessions& live) const;
    void restore_live(StateReader& in, LiveSessions& live) const;

  private:
    SessionLimits limits_;
};

}  // namespace arbiter::reference
