#include "reference_analyzer.hpp"

#include <algorithm>
#include <utility>

#include "live_sessions.hpp"
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
//
// Since the accounts plugin took one account in two places, the live sessions section (the
// last, from version 3 on) is written empty and read only to be dropped, under the same
// version: a build from before the split and this one restore each other's blobs.
//
// Version 6 adds each player's aim tracks (AimArea::save_player) after the movement runs;
// version 5 and older blobs are still read (those players start with no aim samples).
constexpr uint32_t kStateVersion = 6;
}  // namespace

Areas::Areas(const ConfigTable& config)
    : movement(config),
      hits(config),
      items(config),
      stats(config),
      sessions(config),
      clock(config),
      aim(config) {
    config.reject_unknown_keys();
}

ReferenceAnalyzer::ReferenceAnalyzer(const Context& context)
    : Analyzer(context), areas_(context.config) {}

void ReferenceAnalyzer::configure(const Context& context) {
    // Parse everything first: a bad config throws here and changes nothing.
    areas_ = Areas(context.config);
}

LagSeen ReferenceAnalyzer::lag_seen(const Player& player) {
    return {player.arrivals, player.movement.track.rtts.view()};
}

void ReferenceAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    Match& match = matches_[batch.match()];
    // Past a few thousand players their tracks are out of the caches: each group of events
    // asks for its players' tracks before the first of them is handled.
    for_each_event_looking_ahead(
        batch.events(), match.players, [](const Player& player) { player.movement.prefetch(); },
        [&](const fb::Event& event) { on_event(match, event, signals); });
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
}

void ReferenceAnalyzer::on_event(Match& match, const fb::Event& event, Signals& signals) {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    switch (event.body_type()) {
        case fb::EventBody::MatchStart:
            areas_.clock.on_match_start(*event.body_as_MatchStart(), match.clock);
            return;
        case fb::EventBody::MatchEnd:
            on_match_end_event(match, event, signals);
            return;
        case fb::EventBody::InputLost:
            on_input_lost(match);
            return;
        default:
            break;
    }
    if (id == 0) return;
    Player& player = match.players[id];
    if (heard_from_client(event)) player.arrivals.heard(t_us);
    forget_old(player, t_us);
    Reporter out(host(), signals, player.reports);
    // Where the player looks or aims (schema 1.2), on positions, orders and hit claims.
    if (look_of(event) || aim_of(event)) areas_.aim.on_event(event, player.aim.get(), out);
    switch (event.body_type()) {
        case fb::EventBody::PositionUpdate:
            areas_.movement.on_position(event, player.arrivals, player.movement, out);
            break;
        case fb::EventBody::LatencySample:
            areas_.movement.on_latency(event, player.movement);
            break;
        case fb::EventBody::HitClaim:
            on_hit(match, player, event, signals);
            break;
        case fb::EventBody::KillClaim:
            areas_.hits.on_kill(event, lag_seen(player), player.hits.get(), out);
            break;
        case fb::EventBody::InventoryChange:
            areas_.items.on_inventory(event, lag_seen(player), player.items.get(), out);
            break;
        case fb::EventBody::StatChange:
            areas_.stats.on_stat(event, match.stats, player.stats.get(), out);
            break;
        case fb::EventBody::PlayerJoin:
            areas_.sessions.on_join(event, match.sessions, out);
            break;
        case fb::EventBody::Order:
            areas_.clock.on_order(event, player.clock, out);
            break;
        case fb::EventBody::PlayerLeave:
            out.report_held(id);
            match.players.erase(id);
            break;
        default:
            break;
    }
}

void ReferenceAnalyzer::on_hit(Match& match, Player& attacker, const fb::Event& event,
                               Signals& signals) {
    Reporter out(host(), signals, attacker.reports);
    areas_.hits.on_hit(event, areas_.clock.tick_s(match.clock), lag_seen(attacker),
                       attacker.hits.get(), out);
    // A damaging hit is also the target's: the stats area counts it as combat the target
    // came through unhurt or not. Only such a hit makes the target a record here.
    if (const uint32_t target_id = StatsArea::hurt_player(event); target_id != 0) {
        Player& target = match.players[target_id];
        Reporter target_out(host(), signals, target.reports);
        areas_.stats.on_hit_taken(target_id, event.relay_time_us(), match.stats, target.stats.get(),
                                  target_out);
    }
}

void ReferenceAnalyzer::on_match_end_event(Match& match, const fb::Event& event, Signals& signals) {
    // A claimed length belongs to one run: the player the event names, or the only one.
    const uint32_t runner =
        event.player() != 0 ? event.player() : areas_.sessions.only_player(match.sessions);
    if (auto signal = areas_.clock.check_run_length(event, match.clock, runner))
        Reporter(host(), signals, match.players[runner].reports).report(std::move(*signal));
}

void ReferenceAnalyzer::on_input_lost(Match& match) {
    // Every window and track starts again after the gap, and a silence the relay never saw
    // is no lag; what each event proved on its own stays (each area says what). The
    // reports and held rises stay with it.
    for (auto& [id, player] : match.players) {
        player.arrivals = {};
        areas_.movement.on_input_lost(player.movement);
        // An area never used has nothing to start again.
        if (auto* hits = player.hits.find()) areas_.hits.on_input_lost(*hits);
        if (auto* items = player.items.find()) areas_.items.on_input_lost(*items);
        if (auto* stats = player.stats.find()) areas_.stats.on_input_lost(*stats);
        areas_.clock.on_input_lost(player.clock);
        if (auto* aim = player.aim.find()) areas_.aim.on_input_lost(*aim);
    }
    host().count("input_lost");
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
    for (auto& [id, player] : players)
        Reporter(host(), signals, player->reports).report_held(id);
    matches_.erase(it);
}

namespace {
void save_arrivals(StateWriter& out, const Arrivals& arrivals) {
    out.put<int64_t>(arrivals.last_us);
    const Ring<Gap>& gaps = arrivals.gaps.view();
    out.put<uint64_t>(gaps.size());
    for (const Gap& g : gaps) {
        out.put<int64_t>(g.t_us);
        out.put<int64_t>(g.gap_us);
    }
}

// A section read into an empty record, kept only if it holds anything: a blob holds every
// area of every player, empty or not.
template <class T, class Read>
void restore_lazy(Lazy<T>& lazy, Read read) {
    T value;
    read(value);
    const bool empty = value.empty();
    lazy.assign(std::move(value), empty);
}

void restore_arrivals(StateReader& in, Arrivals& arrivals) {
    arrivals.last_us = in.get_relay_time("last arrival");
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        Gap g;
        g.t_us = in.get_relay_time("silence end");
        g.gap_us = in.get_relay_time("silence");
        arrivals.gaps.get().push_back(g);
    }
}
}  // namespace

namespace {
// How many players ahead the save asks for a player's track (save_state).
constexpr size_t kSaveLookAhead = 2;
}  // namespace

// The blob: for each match its key, its players and then its own state; then the live
// sessions, none (kStateVersion says why). Each player's sections come in the order the
// versions added them, which is why the movement area has two.
std::vector<uint8_t> ReferenceAnalyzer::save_state() {
    StateWriter out(kStateTag, kStateVersion);
    // Room for about the last blob's size at once (or, before the first, for 2.5 KiB a
    // player, a little over what a player in steady state takes): growing a state of
    // hundreds of megabytes by doubling copies and zeroes it over again while the stream
    // waits.
    size_t room = last_blob_bytes_ + last_blob_bytes_ / 8;
    if (room == 0)
        for (const auto& [key, match] : matches_)
            room += match.players.size() * 2560;
    out.reserve(room);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        // In player id order, so that the same state always makes the same blob.
        out.put<uint64_t>(match.players.size());
        const auto players = in_key_order(match.players);
        for (size_t p = 0; p < players.size(); ++p) {
            const auto& [id, player] = *players[p];
            // The save reads each player's track from memory, a block at a time: the next
            // few are asked for ahead, so that the save waits for one player at most.
            if (p + kSaveLookAhead < players.size())
                players[p + kSaveLookAhead]->second.movement.prefetch();
            out.put<uint32_t>(id);
            areas_.movement.save_track(out, player.movement);
            save_reports(out, player.reports.view());
            // Version 3: the other areas.
            save_arrivals(out, player.arrivals);
            areas_.hits.save_player(out, player.hits.view());
            areas_.items.save_player(out, player.items.view());
            areas_.stats.save_player(out, player.stats.view());
            areas_.clock.save_player(out, player.clock);
            // Version 4: the movement runs and stretches.
            areas_.movement.save_runs(out, player.movement);
            // Version 6: the aim tracks.
            areas_.aim.save_player(out, player.aim.view());
        }
        areas_.clock.save_match(out, match.clock);
        areas_.stats.save_match(out, match.stats);
        areas_.sessions.save_match(out, match.sessions);
    }
    LiveSessions().save(out);
    std::vector<uint8_t> blob = out.finish();
    last_blob_bytes_ = blob.size();
    return blob;
}

void ReferenceAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, Match> matches;
    uint64_t match_count = in.get_count(16);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        Match& match = matches[key];
        uint64_t player_count = in.get_count(4);
        // Buckets for them all at once, not rehashed a dozen times on the way to 100,000; a
        // damaged count asks for at most a million (get_count already bounds it by the blob).
        match.players.reserve(std::min<uint64_t>(player_count, uint64_t{1} << 20));
        for (uint64_t p = 0; p < player_count; ++p) {
            Player& player = match.players[in.get<uint32_t>()];
            areas_.movement.restore_track(in, player.movement);
            restore_lazy(player.reports,
                         [&in](Reports& r) { restore_reports(in, r, in.version() >= 2); });
            if (in.version() < 3) continue;
            restore_arrivals(in, player.arrivals);
            restore_lazy(player.hits,
                         [&](HitsArea::Player& h) { areas_.hits.restore_player(in, h); });
            restore_lazy(player.items,
                         [&](ItemsArea::Player& i) { areas_.items.restore_player(in, i); });
            restore_lazy(player.stats,
                         [&](StatsArea::Player& s) { areas_.stats.restore_player(in, s); });
            areas_.clock.restore_player(in, player.clock);
            if (in.version() < 4) continue;
            areas_.movement.restore_runs(in, player.movement);
            if (in.version() < 6) continue;
            restore_lazy(player.aim, [&](AimArea::Player& a) { areas_.aim.restore_player(in, a); });
        }
        if (in.version() < 3) continue;
        areas_.clock.restore_match(in, match.clock);
        areas_.stats.restore_match(in, match.stats);
        areas_.sessions.restore_match(in, match.sessions);
    }
    // Read whole, so that a damaged section is refused like any other, and dropped.
    if (in.version() >= 3) LiveSessions().restore(in);
    in.finish();
    // Only a blob read whole replaces the state.
    matches_ = std::move(matches);
    last_blob_bytes_ = blob.size();
}

}  // namespace arbiter::reference
