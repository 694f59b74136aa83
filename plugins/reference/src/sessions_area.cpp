#include "sessions_area.hpp"

#include "event_fields.hpp"
#include "relay_times.hpp"

namespace arbiter::reference {

SessionsArea::SessionsArea(const ConfigTable& config) {
    ConfigTable sessions = config.table("sessions");
    SessionLimits& s = limits_;
    s.max_reconnects =
        sessions.integer("max_reconnects", s.max_reconnects, Range::between(0, 1000));
    s.reconnect_window_s =
        sessions.number("reconnect_window_s", s.reconnect_window_s, Range::between(1.0, 3600.0));
    s.client_versions = sessions.strings("client_versions");
    s.handshakes = sessions.strings("handshakes");
}

void SessionsArea::on_join(const MatchKey& key, const fb::Event& event, Match& match,
                           LiveSessions& live, Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::PlayerJoin& join = *event.body_as_PlayerJoin();
    const std::string account = text(join.account_id());
    const std::string version = text(join.client_version());
    const std::string handshake = text(join.handshake());
    const Evidence what = Evidence()
                              .add("t_us", t_us)
                              .add("account_id", account)
                              .add("client_version", version)
                              .add("handshake", handshake)
                              .add("connection_id", join.connection_id())
                              .add("address_hash", join.address_hash())
                              .add("reconnect", join.reconnect());
    if (unexpected(version, limits_.client_versions)) {
        out.report({.player = id,
                    .code = "sessions.client_version",
                    .score = 0.9,
                    .confidence = 0.9,
                    .evidence = Evidence().add("client_version", version).add("join", what)});
    }
    if (unexpected(handshake, limits_.handshakes)) {
        out.report({.player = id,
                    .code = "sessions.handshake",
                    .score = 0.9,
                    .confidence = 0.9,
                    .evidence = Evidence().add("handshake", handshake).add("join", what)});
    }
    // A reconnect: the relay says so, or the player id joined this match before.
    const bool seen = match.accounts.count(id) > 0;
    if (join.reconnect() || seen) {
        auto& times = match.reconnects[id];
        times.push_back(t_us);
        trim(times, micros(limits_.reconnect_window_s));
        if (auto spam = check_reconnects(times, limits_)) {
            out.report({.player = id,
                        .code = "sessions.reconnect_spam",
                        .score = spam->score,
                        .confidence = 0.9,
                        .evidence = Evidence()
                                        .add("reconnects", spam->reconnects)
                                        .add("limit", limits_.max_reconnects)
                                        .add("window_s", limits_.reconnect_window_s)
                                        .add("first_t_us", spam->first_us)
                                        .add("last_t_us", spam->last_us)});
        }
    }
    match.accounts[id] = account;
    if (account.empty()) return;
    const LiveSession here{key.relay_id, key.match_id, id, join.address_hash(), t_us};
    auto& sessions = live[account];
    std::erase_if(sessions, [&](const LiveSession& s) { return !two_places(s, here); });
    for (const LiveSession& other : sessions) {
        out.report({.player = id,
                    .code = "sessions.two_places",
                    .score = 1.0,
                    .confidence = other.address_hash != here.address_hash ? 0.95 : 0.8,
                    .evidence = Evidence()
                                    .add("account_id", account)
                                    .add("join", what)
                                    .add("other", Evidence()
                                                      .add("relay_id", other.relay_id)
                                                      .add("match_id", other.match_id)
                                                      .add("player", other.player)
                                                      .add("address_hash", other.address_hash)
                                                      .add("since_t_us", other.since_us))});
    }
    sessions.push_back(here);
}

void SessionsArea::end_session(const MatchKey& key, const Match& match, LiveSessions& live,
                               uint32_t player_id) const {
    auto account = match.accounts.find(player_id);
    if (account == match.accounts.end()) return;
    auto sessions = live.find(account->second);
    if (sessions == live.end()) return;
    std::erase_if(sessions->second, [&](const LiveSession& s) {
        return s.relay_id == key.relay_id && s.match_id == key.match_id && s.player == player_id;
    });
    if (sessions->second.empty()) live.erase(sessions);
}

void SessionsArea::end_sessions(const MatchKey& key, const Match& match, LiveSessions& live) const {
    for (const auto& [id, account] : match.accounts)
        end_session(key, match, live, id);
}

uint32_t SessionsArea::only_player(const Match& match) const {
    return match.accounts.size() == 1 ? match.accounts.begin()->first : 0;
}

void SessionsArea::save_match(StateWriter& out, const Match& match) const {
    out.put<uint64_t>(match.reconnects.size());
    for (const auto& [id, times] : match.reconnects) {
        out.put<uint32_t>(id);
        put_times(out, times);
    }
    out.put<uint64_t>(match.accounts.size());
    for (const auto& [id, account] : match.accounts) {
        out.put<uint32_t>(id);
        out.put_string(account);
    }
}

void SessionsArea::restore_match(StateReader& in, Match& match) const {
    for (uint64_t n = in.get_count(12); n > 0; --n) {
        const auto id = in.get<uint32_t>();
        match.reconnects[id] = get_times(in);
    }
    for (uint64_t n = in.get_count(12); n > 0; --n) {
        const auto id = in.get<uint32_t>();
        match.accounts[id] = in.get_string();
    }
}

void SessionsArea::save_live(StateWriter& out, const LiveSessions& live) const {
    out.put<uint64_t>(live.size());
    for (const auto& [account, sessions] : live) {
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

void SessionsArea::restore_live(StateReader& in, LiveSessions& live) const {
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        std::string account = in.get_string();
        auto& sessions = live[account];
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
