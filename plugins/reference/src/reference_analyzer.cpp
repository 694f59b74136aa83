#include "reference_analyzer.hpp"

#include <algorithm>
#include <utility>

#include "relay_times.hpp"

namespace arbiter::reference {

namespace {
constexpr const char* kStateTag = "REF1";
// Version 2 added the held signals, version 3 the state of the hits, items, stats,
// sessions and clock checks, version 4 each player's sustained-speed run, airborne stretch
// and updates under the terrain; version 1 to 3 blobs are still read (those players start
// with none of the three). Version 5 writes each track's samples as one array
// (MovementArea::save_track): half the bytes, one put instead of four per sample; version 4
// blobs are still read.
constexpr uint32_t kStateVersion = 5;
}  // namespace

Areas::Areas(const ConfigTable& config)
    : movement(config),
      hits(config),
      items(config),
      stats(config),
      sessions(config),
      clock(config) {
    config.reject_unknown_keys();
}

ReferenceAnalyzer::ReferenceAnalyzer(const Context& context)
    : Analyzer(context), areas_(context.config) {}

void ReferenceAnalyzer::configure(const Context& context) {
    // Parse everything first: a bad config throws here and changes nothing.
    areas_ = Areas(context.config);
}

void ReferenceAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    const MatchKey key = batch.match();
    Match& match = matches_[key];
    Players& players = match.players;
    for (const fb::Event* event : batch.events()) {
        const uint32_t id = event->player();
        const int64_t t_us = event->relay_time_us();
        switch (event->body_type()) {
            case fb::EventBody::MatchStart:
                areas_.clock.on_match_start(*event->body_as_MatchStart(), match.clock);
                continue;
            case fb::EventBody::MatchEnd:
                on_match_end_event(match, *event, signals);
                continue;
            case fb::EventBody::InputLost:
                on_input_lost(key, match);
                continue;
            default:
                break;
        }
        if (id == 0) continue;
        if (heard_from_client(*event)) players[id].arrivals.heard(t_us);
        forget_old(players[id], t_us);
        switch (event->body_type()) {
            case fb::EventBody::PositionUpdate: {
                Reporter out(host(), signals, players[id].reports);
                areas_.movement.on_position(*event, players[id].arrivals, players[id].movement,
                                            out);
                break;
            }
            case fb::EventBody::LatencySample:
                areas_.movement.on_latency(*event, players[id].movement);
                break;
            case fb::EventBody::HitClaim:
                on_hit(match, players[id], *event, signals);
                break;
            case fb::EventBody::KillClaim: {
                Reporter out(host(), signals, players[id].reports);
                areas_.hits.on_kill(*event, lag_seen(players[id]), players[id].hits, out);
                break;
            }
            case fb::EventBody::InventoryChange: {
                Reporter out(host(), signals, players[id].reports);
                areas_.items.on_inventory(*event, lag_seen(players[id]), players[id].items, out);
                break;
            }
            case fb::EventBody::StatChange: {
                Reporter out(host(), signals, players[id].reports);
                areas_.stats.on_stat(*event, match.stats, players[id].stats, out);
                break;
            }
            case fb::EventBody::PlayerJoin: {
                Reporter out(host(), signals, players[id].reports);
                areas_.sessions.on_join(key, *event, match.sessions, live_, out);
                break;
            }
            case fb::EventBody::Order: {
                Reporter out(host(), signals, players[id].reports);
                areas_.clock.on_order(*event, players[id].clock, out);
                break;
            }
            case fb::EventBody::PlayerLeave:
                areas_.sessions.end_session(key, match.sessions, live_, id);
                if (auto it = players.find(id); it != players.end()) {
                    report_held(id, it->second, signals);
                    players.erase(it);
                }
                break;
            default:
                break;
        }
    }
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
}

LagSeen ReferenceAnalyzer::lag_seen(const Player& player) {
    return {player.arrivals, player.movement.track.rtts};
}

void ReferenceAnalyzer::on_hit(Match& match, Player& attacker, const fb::Event& event,
                               Signals& signals) {
    Reporter out(host(), signals, attacker.reports);
    areas_.hits.on_hit(event, areas_.clock.tick_s(match.clock), lag_seen(attacker), attacker.hits,
                       out);
    // A damaging hit is also the target's: the stats area counts it as combat the target
    // came through unhurt or not. Only such a hit makes the target a record here.
    if (const uint32_t target_id = StatsArea::hurt_player(event); target_id != 0) {
        Player& target = match.players[target_id];
        Reporter target_out(host(), signals, target.reports);
        areas_.stats.on_hit_taken(target_id, event.relay_time_us(), match.stats, target.stats,
                                  target_out);
    }
}

void ReferenceAnalyzer::on_input_lost(const MatchKey& key, Match& match) {
    for (auto& [id, player] : match.players) {
        // Every window and track starts again after the gap: a speed from the last position
        // before it to the first after it is no speed (the lost batches may hold a respawn),
        // and a silence the relay never saw is no lag. What each event proved on its own
        // stays: the reports and held rises, the counts of claims that failed a check, and
        // the measured round trips.
        Player fresh;
        fresh.reports = std::move(player.reports);
        fresh.hits = std::move(player.hits);
        fresh.movement = std::move(player.movement);
        fresh.stats = std::move(player.stats);
        fresh.clock = std::move(player.clock);
        player = std::move(fresh);
        areas_.movement.on_input_lost(player.movement);
        areas_.hits.on_input_lost(player.hits);
        areas_.stats.on_input_lost(player.stats);
        areas_.clock.on_input_lost(player.clock);
    }
    areas_.sessions.end_sessions(key, match.sessions, live_);
    host().count("input_lost");
}

void ReferenceAnalyzer::on_match_end_event(Match& match, const fb::Event& event, Signals& signals) {
    // A claimed length belongs to one run: the player the event names, or the only one.
    const uint32_t runner =
        event.player() != 0 ? event.player() : areas_.sessions.only_player(match.sessions);
    if (auto signal = areas_.clock.check_run_length(event, match.clock, runner))
        report(match.players[runner], std::move(*signal), signals);
}

void ReferenceAnalyzer::report(Player& player, Signal signal, Signals& signals) {
    Reporter(host(), signals, player.reports).report(std::move(signal));
}

void ReferenceAnalyzer::report_held(uint32_t player_id, Player& player, Signals& signals) {
    Reporter(host(), signals, player.reports).report_held(player_id);
}

void ReferenceAnalyzer::forget_old(Player& player, int64_t now_us) const {
    areas_.movement.forget_old(player.movement, now_us);
    // Silences matter to the longest window that allows for them, and a second before it.
    const double longest_s =
        std::max({areas_.hits.limits().fire_window_s, areas_.items.settings().window_s,
                  areas_.clock.limits().rate_window_s, 1.0});
    player.arrivals.forget_before(now_us - micros(longest_s + 10.0) - 2 * kSecondUs);
}

void ReferenceAnalyzer::on_match_end(const MatchKey& match, Signals& signals) {
    auto it = matches_.find(match);
    if (it == matches_.end()) return;
    // Sorted, so that the order of the final signals does not depend on hashing.
    std::map<uint32_t, Player*> players;
    for (auto& [id, player] : it->second.players)
        players[id] = &player;
    areas_.sessions.end_sessions(match, it->second.sessions, live_);
    for (auto& [id, player] : players)
        report_held(id, *player, signals);
    matches_.erase(it);
}

std::vector<uint8_t> ReferenceAnalyzer::save_state() {
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        const Players& players = match.players;
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        // Sorted by player id, so that the same state always makes the same blob.
        std::vector<uint32_t> ids;
        for (const auto& [id, player] : players)
            ids.push_back(id);
        std::sort(ids.begin(), ids.end());
        out.put<uint64_t>(ids.size());
        for (uint32_t id : ids) {
            const Player& player = players.at(id);
            out.put<uint32_t>(id);
            areas_.movement.save_track(out, player.movement);
            save_reports(out, player.reports);
            // Version 3: the other areas.
            out.put<int64_t>(player.arrivals.last_us);
            out.put<uint64_t>(player.arrivals.gaps.size());
            for (const Gap& g : player.arrivals.gaps) {
                out.put<int64_t>(g.t_us);
                out.put<int64_t>(g.gap_us);
            }
            areas_.hits.save_player(out, player.hits);
            areas_.items.save_player(out, player.items);
            areas_.stats.save_player(out, player.stats);
            areas_.clock.save_player(out, player.clock);
            // Version 4: the movement runs and stretches.
            areas_.movement.save_runs(out, player.movement);
        }
        areas_.clock.save_match(out, match.clock);
        areas_.stats.save_match(out, match.stats);
        areas_.sessions.save_match(out, match.sessions);
    }
    areas_.sessions.save_live(out, live_);
    return out.finish();
}

void ReferenceAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, Match> matches;
    SessionsArea::LiveSessions live;
    uint64_t match_count = in.get_count(16);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        Match& match = matches[key];
        Players& players = match.players;
        uint64_t player_count = in.get_count(4);
        for (uint64_t p = 0; p < player_count; ++p) {
            Player& player = players[in.get<uint32_t>()];
            areas_.movement.restore_track(in, player.movement);
            restore_reports(in, player.reports);
            if (in.version() < 3) continue;
            player.arrivals.last_us = in.get_relay_time("last arrival");
            for (uint64_t n = in.get_count(16); n > 0; --n) {
                Gap g;
                g.t_us = in.get_relay_time("silence end");
                g.gap_us = in.get_relay_time("silence");
                player.arrivals.gaps.push_back(g);
            }
            areas_.hits.restore_player(in, player.hits);
            areas_.items.restore_player(in, player.items);
            areas_.stats.restore_player(in, player.stats);
            areas_.clock.restore_player(in, player.clock);
            if (in.version() < 4) continue;
            areas_.movement.restore_runs(in, player.movement);
        }
        if (in.version() < 3) continue;
        areas_.clock.restore_match(in, match.clock);
        areas_.stats.restore_match(in, match.stats);
        areas_.sessions.restore_match(in, match.sessions);
    }
    if (in.version() >= 3) areas_.sessions.restore_live(in, live);
    in.finish();
    // Only a blob read whole replaces the state.
    matches_ = std::move(matches);
    live_ = std::move(live);
}

}  // namespace arbiter::reference
