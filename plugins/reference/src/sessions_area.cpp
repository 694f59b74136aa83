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

void SessionsArea::on_join(const fb::Event& event, Match& match, Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::PlayerJoin& join = *event.body_as_PlayerJoin();
    const std::string account = text(join.account_id());
    const std::string version = text(join.client_version());
    const std::string handshake = text(join.handshake());
    const Evidence what = join_evidence(event);
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

}  // namespace arbiter::reference
