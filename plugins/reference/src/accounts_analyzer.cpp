#include "accounts_analyzer.hpp"

#include <utility>

#include "event_fields.hpp"

namespace arbiter::reference {

namespace {
// Its own tag: the blob is not the reference plugin's, and the host hands a blob only to
// the plugin that saved it. Version 1 is the first.
constexpr const char* kStateTag = "ACC1";
constexpr uint32_t kStateVersion = 1;
}  // namespace

// The plugin has no settings: it takes a table so that the operator's config is checked
// like any other, and refuses every key in it (a key meant for another plugin, misplaced).
AccountsAnalyzer::AccountsAnalyzer(const Context& context) : Analyzer(context) {
    context.config.reject_unknown_keys();
}

void AccountsAnalyzer::configure(const Context& context) {
    context.config.reject_unknown_keys();
}

void AccountsAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    const MatchKey key = batch.match();
    for (const fb::Event* event : batch.events()) {
        switch (event->body_type()) {
            case fb::EventBody::InputLost:
                // The whole match's, whatever player it names.
                if (auto it = matches_.find(key); it != matches_.end())
                    end_sessions(key, it->second);
                continue;
            case fb::EventBody::PlayerJoin:
                // A match is tracked from its first join: most batches carry none, and
                // this instance sees every match of every relay.
                if (event->player() != 0) on_join(key, *event, matches_[key], signals);
                continue;
            case fb::EventBody::PlayerLeave:
                if (auto it = matches_.find(key); it != matches_.end() && event->player() != 0)
                    on_leave(key, it->second, event->player(), signals);
                continue;
            default:
                continue;
        }
    }
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
    host().gauge("live_accounts", static_cast<double>(live_.accounts()));
}

void AccountsAnalyzer::on_join(const MatchKey& key, const fb::Event& event, Match& match,
                               Signals& signals) {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::PlayerJoin& join = *event.body_as_PlayerJoin();
    const std::string account = text(join.account_id());
    match.accounts[id] = account;
    if (account.empty()) return;
    const LiveSession here{key.relay_id, key.match_id, id, join.address_hash(), t_us};
    const std::vector<LiveSession> others = live_.join(account, here);
    if (others.empty()) return;
    // The join as the reference analyzer's session checks describe it (event_fields.hpp), so
    // that a reviewer reads the same evidence as before the check moved here.
    const Evidence what = join_evidence(event);
    Reporter out(host(), signals, match.reports[id]);
    for (const LiveSession& other : others) {
        out.report({.player = id,
                    .code = "sessions.two_places",
                    .score = 1.0,
                    // From the same address it may be one client whose old session the
                    // relay has not closed yet; from another, it is two connections.
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
}

void AccountsAnalyzer::on_leave(const MatchKey& key, Match& match, uint32_t player,
                                Signals& signals) {
    if (auto account = match.accounts.find(player); account != match.accounts.end())
        live_.end(account->second, key, player);
    if (auto reports = match.reports.find(player); reports != match.reports.end()) {
        Reporter(host(), signals, reports->second).report_held(player);
        match.reports.erase(reports);
    }
}

void AccountsAnalyzer::end_sessions(const MatchKey& key, const Match& match) {
    for (const auto& [id, account] : match.accounts)
        live_.end(account, key, id);
}

void AccountsAnalyzer::on_match_end(const MatchKey& match, Signals& signals) {
    auto it = matches_.find(match);
    if (it == matches_.end()) return;
    end_sessions(match, it->second);
    // By player id (the map's order), so that the final signals come in a fixed order.
    for (auto& [id, reports] : it->second.reports)
        Reporter(host(), signals, reports).report_held(id);
    matches_.erase(it);
}

// The blob: for each match its key, the accounts of its players and their reports; then
// the live sessions, in the section the reference plugin's blob has too (live_sessions.hpp).
std::vector<uint8_t> AccountsAnalyzer::save_state() {
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        out.put<uint64_t>(match.accounts.size());
        for (const auto& [id, account] : match.accounts) {
            out.put<uint32_t>(id);
            out.put_string(account);
        }
        out.put<uint64_t>(match.reports.size());
        for (const auto& [id, reports] : match.reports) {
            out.put<uint32_t>(id);
            save_reports(out, reports.view());
        }
    }
    live_.save(out);
    return out.finish();
}

void AccountsAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, Match> matches;
    LiveSessions live;
    for (uint64_t m = in.get_count(16); m > 0; --m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        Match& match = matches[key];
        for (uint64_t n = in.get_count(12); n > 0; --n) {
            const auto id = in.get<uint32_t>();
            match.accounts[id] = in.get_string();
        }
        for (uint64_t n = in.get_count(20); n > 0; --n) {
            const auto id = in.get<uint32_t>();
            Reports reports;
            restore_reports(in, reports, /*with_held=*/true);
            // A record kept only if it holds anything: a player's is made at its first signal.
            if (!reports.empty()) match.reports[id].assign(std::move(reports), false);
        }
    }
    live.restore(in);
    in.finish();
    // Only a blob read whole replaces the state.
    matches_ = std::move(matches);
    live_ = std::move(live);
}

}  // namespace arbiter::reference
