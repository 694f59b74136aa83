#include "live_sessions.hpp"

#include <algorithm>

namespace arbiter::reference {

std::vector<LiveSession> LiveSessions::join(const std::string& account, const LiveSession& here) {
    auto& sessions = by_account_[account];
    std::erase_if(sessions, [&](const LiveSession& s) { return !two_places(s, here); });
    std::vector<LiveSession> others = sessions;
    sessions.push_back(here);
    return others;
}

void LiveSessions::end(const std::string& account, const MatchKey& key, uint32_t player) {
    auto sessions = by_account_.find(account);
    if (sessions == by_account_.end()) return;
    std::erase_if(sessions->second, [&](const LiveSession& s) {
        return s.relay_id == key.relay_id && s.match_id == key.match_id && s.player == player;
    });
    // An account with no session left is forgotten: the map holds connected accounts only.
    if (sessions->second.empty()) by_account_.erase(sessions);
}

void LiveSessions::save(StateWriter& out) const {
    out.put<uint64_t>(by_account_.size());
    for (const auto& [account, sessions] : by_account_) {
        out.put_string(account);
        out.put<uint64_t>(sessions.size());
        for (const LiveSession& s : sessions) {
            out.put_string(s.relay_id);
            out.put<uint64_t>(s.match_id);
            out.put<uint32_t>(s.player);
            out.put<uint64_t>(s.address_hash);
            out.put<int64_t>(s.since_us);
        }
    }
}

void LiveSessions::restore(StateReader& in) {
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        std::string account = in.get_string();
        auto& sessions = by_account_[account];
        for (uint64_t k = in.get_count(36); k > 0; --k) {
            LiveSession s;
            s.relay_id = in.get_string();
            s.match_id = in.get<uint64_t>();
            s.player = in.get<uint32_t>();
            s.address_hash = in.get<uint64_t>();
            s.since_us = in.get_relay_time("session start");
            sessions.push_back(s);
        }
    }
}

}  // namespace arbiter::reference
