// Where each account is connected, across every match one instance sees: the state behind
// "one account in two places" (the pure check is two_places, sessions.hpp), and its section
// of a saved state.
//
// Only an instance that sees every match can keep it, so it lives in the accounts plugin,
// which does not declare shard_by_match (ARCHITECTURE.md, "Threads"). The reference plugin,
// sharded, keeps none, but its state blob still carries the section (empty), so that a
// build from before the split reads the blobs of this one and the other way round.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <arbiter/sdk.hpp>

#include "sessions.hpp"

namespace arbiter::reference {

class LiveSessions {
  public:
    // `here` joins the account's sessions. Returns the sessions it is in two places with, as
    // they were before it joined; a session of the same player in the same match (a rejoin)
    // is replaced, never reported.
    std::vector<LiveSession> join(const std::string& account, const LiveSession& here);
    // The player's session in the match is over.
    void end(const std::string& account, const MatchKey& key, uint32_t player);

    bool empty() const { return by_account_.empty(); }
    // Accounts with a session.
    size_t accounts() const { return by_account_.size(); }

    // The section: a count of accounts, then each account and its sessions (the layout of
    // the reference plugin's state versions 3 to 5).
    void save(StateWriter& out) const;
    // Reads a section into this (empty) record; a damaged one throws StateError.
    void restore(StateReader& in);

  private:
    std::map<std::string, std::vector<LiveSession>> by_account_;
};

}  // namespace arbiter::reference
