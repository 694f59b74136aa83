#include "reference_analyzer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "event_fields.hpp"
#include "relay_times.hpp"

namespace arbiter::reference {

namespace {
constexpr const char* kStateTag = "REF1";
// Version 2 added the held signals, version 3 the state of the hits, items, stats,
// sessions and clock checks, version 4 each player's sustained-speed run, airborne stretch
// and updates under the terrain; version 1 to 3 blobs are still read (those players start
// with none of the three). Version 5 writes each track's samples as one array (below,
// put_samples): half the bytes, one put instead of four per sample; version 4 blobs are
// still read.
constexpr uint32_t kStateVersion = 5;

Evidence position_evidence(const Sample& sample) {
    return Evidence()
        .add("t_us", sample.t_us)
        .add("x", sample.position.x)
        .add("y", sample.position.y)
        .add("z", sample.position.z);
}

MovementLimits parse_movement(const ConfigTable& config) {
    MovementLimits m;
    ConfigTable movement = config.table("movement");
    m.max_speed = movement.number("max_speed", m.max_speed, Range::positive());
    m.tolerance = movement.number("tolerance", m.tolerance, Range::between(1.0, 10.0));
    m.window_s = movement.number("window_s", m.window_s, Range::between(0.1, 60.0));
    m.max_lag_allowance_s =
        movement.number("max_lag_allowance_s", m.max_lag_allowance_s, Range::between(0.0, 10.0));
    m.teleport_distance =
        movement.number("teleport_distance", m.teleport_distance, Range::positive());
    m.min_samples = movement.integer("min_samples", m.min_samples, Range::between(1, 1000));
    m.burst_gap_s = movement.number("burst_gap_s", m.burst_gap_s, Range{0.0, 0.05, true});
    m.max_acceleration = movement.number("max_acceleration", m.max_acceleration, Range::positive());
    m.sustained_s = movement.number("sustained_s", m.sustained_s, Range::between(0.1, 3600.0));
    m.max_jump_time_s =
        movement.number("max_jump_time_s", m.max_jump_time_s, Range::between(0.1, 60.0));
    m.airborne_grace_s =
        movement.number("airborne_grace_s", m.airborne_grace_s, Range::between(0.0, 60.0));
    m.below_terrain_m =
        movement.number("below_terrain_m", m.below_terrain_m, Range{0.0, 100.0, true});
    return m;
}

}  // namespace

Areas::Areas(const ConfigTable& config)
    : movement(parse_movement(config)),
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
            case fb::EventBody::PositionUpdate:
                on_position(id, players[id], t_us, *event->body_as_PositionUpdate(), signals);
                break;
            case fb::EventBody::LatencySample: {
                Player& player = players[id];
                player.track.rtts.push_back({t_us, event->body_as_LatencySample()->rtt_us()});
                forget_old(player, t_us);
                break;
            }
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
    return {player.arrivals, player.track.rtts};
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
        fresh.track.rtts = std::move(player.track.rtts);
        fresh.stats = std::move(player.stats);
        fresh.clock = std::move(player.clock);
        player = std::move(fresh);
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

void ReferenceAnalyzer::on_position(uint32_t player_id, Player& player, int64_t t_us,
                                    const fb::PositionUpdate& update, Signals& signals) {
    Sample sample{t_us, to_vec(update.position())};
    Track& track = player.track;
    // A teleport the server made itself is exempt: start the track afresh from it, and the
    // runs and stretches of the other movement checks with it.
    if (update.server_teleport()) {
        track.samples.clear();
        player.spacing.cleared();
        track.samples.push_back(sample);
        player.spacing.pushed(track);
        player.sustained = {};
        player.airborne = {};
        player.below_updates = 0;
        return;
    }
    const MovementLimits& limits = areas_.movement;

    // One update's displacement: no tick of movement produces this much, nor does the
    // movement of a silence before it (the updates it held back lost).
    if (!track.samples.empty()) {
        const Sample& previous = track.samples.back();
        double jump = distance(previous.position, sample.position);
        // The reach is never under teleport_distance: only a longer jump needs it.
        const double reach_m = jump > limits.teleport_distance
                                   ? single_update_reach_m(track, sample, limits)
                                   : limits.teleport_distance;
        if (jump > reach_m) {
            report(player,
                   {.player = player_id,
                    .code = "movement.teleport",
                    .score = 1.0,
                    .confidence = 0.95,
                    .evidence = Evidence()
                                    .add("kind", "single_update")
                                    .add("distance_m", jump)
                                    .add("limit_m", reach_m)
                                    .add("from", position_evidence(previous))
                                    .add("to", position_evidence(sample))},
                   signals);
        }
    }
    const int64_t previous_us = track.samples.empty() ? -1 : track.samples.back().t_us;
    // The usual spacing before this update's gap: after a silence longer than the stretch
    // the spacing is measured over, the silence would be the only gap left, and a wait
    // measured against itself is no wait.
    const int64_t spacing_before_us =
        track.samples.empty() ? 0 : player.spacing.value(track, t_us - spacing_horizon_us());
    track.samples.push_back(sample);
    player.spacing.pushed(track);
    forget_old(player, t_us);
    const int64_t typical_us = player.spacing.value(track, t_us - spacing_horizon_us());
    track.in_order = player.spacing.in_order();
    check_ground(player_id, player, sample, update, previous_us, spacing_before_us, signals);
    check_windows(player_id, player, typical_us, signals);
}

void ReferenceAnalyzer::check_ground(uint32_t player_id, Player& player, const Sample& sample,
                                     const fb::PositionUpdate& update, int64_t previous_us,
                                     int64_t typical_us, Signals& signals) {
    const MovementLimits& limits = areas_.movement;
    std::optional<double> ground;
    if (auto h = update.ground_height(); h.has_value()) ground = static_cast<double>(*h);
    if (auto below = check_below_terrain(sample.position.z, ground, limits)) {
        if (player.below_updates++ == 0) player.below_since = sample;
        report(player,
               {.player = player_id,
                .code = "movement.below_terrain",
                .score = below->score,
                .confidence = std::min(1.0, static_cast<double>(player.below_updates) /
                                                static_cast<double>(limits.min_samples)),
                .evidence = Evidence()
                                .add("depth_m", below->depth_m)
                                .add("limit_m", below->limit_m)
                                .add("z", sample.position.z)
                                .add("ground_height", *ground)
                                .add("updates_below", player.below_updates)
                                .add("since", position_evidence(player.below_since))
                                .add("at", position_evidence(sample))},
               signals);
    } else {
        player.below_updates = 0;
    }

    std::optional<bool> on_ground;
    if (auto g = update.on_ground(); g.has_value()) on_ground = *g;
    player.airborne = extend_airborne(player.airborne, sample, on_ground, previous_us, typical_us);
    if (auto airborne = check_airborne(player.airborne, limits)) {
        report(player,
               {.player = player_id,
                .code = "movement.airborne",
                .score = airborne->score,
                .confidence = 0.9,
                .evidence = Evidence()
                                .add("airborne_s", airborne->airborne_s)
                                .add("limit_s", airborne->limit_s)
                                .add("max_jump_time_s", limits.max_jump_time_s)
                                .add("grace_s", limits.airborne_grace_s)
                                .add("elapsed_s", airborne->elapsed_s)
                                .add("lag_allowance_s", airborne->allowance_s)
                                .add("updates", player.airborne.updates)
                                .add("takeoff", position_evidence(player.airborne.takeoff))
                                .add("at", position_evidence(player.airborne.last))},
               signals);
    }
}

namespace {

// A window's lag allowance, widened to the silence the relay saw from the player before
// the window's start where the track does not hold it: a track starts empty at a session's
// start (and again at a server teleport), and the positions of a spike that began before
// them (the first of a burst, the rest lost, as a router's full queue drops them) are as
// old as the silence since the join is long. Only a silence that began before the track's
// first position counts: one the track holds is the track's to allow for (measure_window),
// so a client that falls silent mid-track gains nothing here. Capped like every movement
// allowance; no widening with a cap of 0.
void widen_by_silence(WindowMeasure& w, const Track& track, const Arrivals& arrivals,
                      const MovementLimits& limits) {
    if (track.samples.empty() || !(limits.max_lag_allowance_s > 0)) return;
    const int64_t first_us = track.samples.front().t_us;
    const int64_t look_back_us = static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) + 1'000'000;
    int64_t longest_us = 0;
    for (const Gap& g : arrivals.gaps)
        if (g.t_us >= w.start.t_us - look_back_us && g.t_us <= w.start.t_us &&
            g.t_us - g.gap_us < first_us)
            longest_us = std::max(longest_us, g.gap_us);
    const double silence =
        std::min(static_cast<double>(longest_us) / 1e6, limits.max_lag_allowance_s);
    if (!(silence > w.allowance_s)) return;
    w.allowance_s = silence;
    w.speed = w.horizontal_m / (w.elapsed_s + w.allowance_s);
}

}  // namespace

void ReferenceAnalyzer::check_windows(uint32_t player_id, Player& player, int64_t typical_us,
                                      Signals& signals) {
    const MovementLimits& limits = areas_.movement;
    const Track& track = player.track;
    const size_t end = track.samples.size() - 1;
    auto window = measure_window(track, end, limits, typical_us);
    if (!window) {
        player.sustained = {};
        return;
    }
    widen_by_silence(*window, track, player.arrivals, limits);
    const double confidence = std::min(
        1.0, static_cast<double>(window->samples) / static_cast<double>(limits.min_samples));
    auto window_evidence = [](const WindowMeasure& w) {
        return Evidence()
            .add("speed_mps", w.speed)
            .add("window_s", w.elapsed_s)
            .add("lag_allowance_s", w.allowance_s)
            .add("from", position_evidence(w.start))
            .add("to", position_evidence(w.end));
    };

    const double speed_limit = limits.max_speed * limits.tolerance;
    if (double score = excess_score(window->speed, speed_limit); score > 0) {
        report(player,
               {.player = player_id,
                .code = "movement.speed",
                .score = score,
                .confidence = confidence,
                .evidence = Evidence()
                                .add("speed_mps", window->speed)
                                .add("limit_mps", speed_limit)
                                .add("max_speed_mps", limits.max_speed)
                                .add("tolerance", limits.tolerance)
                                .add("distance_m", window->horizontal_m)
                                .add("window_s", window->elapsed_s)
                                .add("lag_allowance_s", window->allowance_s)
                                .add("updates", window->samples)
                                .add("from", position_evidence(window->start))
                                .add("to", position_evidence(window->end))},
               signals);
    }

    // Over the limit window after window, for longer than sustained_s.
    player.sustained = extend_run(player.sustained, *window, limits);
    if (auto sustained = check_sustained(player.sustained, limits)) {
        const SustainedRun& run = player.sustained;
        report(player,
               {.player = player_id,
                .code = "movement.sustained_speed",
                .score = sustained->score,
                .confidence = 0.95,
                .evidence = Evidence()
                                .add("duration_s", sustained->duration_s)
                                .add("limit_s", sustained->limit_s)
                                .add("mean_speed_mps", sustained->mean_mps)
                                .add("lowest_speed_mps", sustained->lowest_mps)
                                .add("highest_speed_mps", run.highest_mps)
                                .add("limit_mps", sustained->speed_limit_mps)
                                .add("windows", run.windows)
                                .add("from", position_evidence(run.first_from))
                                .add("first_over", position_evidence(run.first_to))
                                .add("to", position_evidence(run.last_to))},
               signals);
    }

    // The change of windowed speed from the window before this one.
    if (auto accel =
            measure_acceleration(track, *window, window->start_index, limits, typical_us)) {
        const double accel_limit = limits.max_acceleration * limits.tolerance;
        if (double score = excess_score(accel->acceleration, accel_limit); score > 0) {
            report(player,
                   {.player = player_id,
                    .code = "movement.acceleration",
                    .score = score,
                    .confidence = confidence,
                    .evidence = Evidence()
                                    .add("acceleration_mps2", accel->acceleration)
                                    .add("limit_mps2", accel_limit)
                                    .add("max_acceleration_mps2", limits.max_acceleration)
                                    .add("tolerance", limits.tolerance)
                                    .add("change_mps", accel->change_mps)
                                    .add("separation_s", accel->separation_s)
                                    .add("lag_allowance_s", accel->allowance_s)
                                    .add("before", window_evidence(accel->before))
                                    .add("after", window_evidence(accel->after))},
                   signals);
        }
    }

    // A window's displacement that even twice the top speed cannot cover.
    const double reach = limits.max_speed * 2.0 * (window->elapsed_s + window->allowance_s);
    if (window->distance_m > reach) {
        report(player,
               {.player = player_id,
                .code = "movement.teleport",
                .score = 1.0,
                .confidence = 0.9,
                .evidence = Evidence()
                                .add("kind", "window")
                                .add("distance_m", window->distance_m)
                                .add("limit_m", reach)
                                .add("window_s", window->elapsed_s)
                                .add("lag_allowance_s", window->allowance_s)
                                .add("from", position_evidence(window->start))
                                .add("to", position_evidence(window->end))},
               signals);
    }
}

void ReferenceAnalyzer::report(Player& player, Signal signal, Signals& signals) {
    Reporter(host(), signals, player.reports).report(std::move(signal));
}

void ReferenceAnalyzer::report_held(uint32_t player_id, Player& player, Signals& signals) {
    Reporter(host(), signals, player.reports).report_held(player_id);
}

int64_t ReferenceAnalyzer::spacing_horizon_us() const {
    const MovementLimits& limits = areas_.movement;
    // A window, the longest lag allowance and the second its look-back adds, and a second
    // of slack.
    return micros(limits.window_s + limits.max_lag_allowance_s + 1.0) + kSecondUs;
}

void ReferenceAnalyzer::forget_old(Player& player, int64_t now_us) const {
    const MovementLimits& limits = areas_.movement;
    // Keep two windows (the acceleration check compares consecutive ones) and what a
    // window's lag allowance looks back over.
    const int64_t keep_us = micros(limits.window_s) + spacing_horizon_us();
    auto& samples = player.track.samples;
    // Keep one sample older than the horizon: it may be the start of a window.
    while (samples.size() > 2 && samples[1].t_us < now_us - keep_us) {
        player.spacing.popping_front(player.track);
        samples.pop_front();
    }
    auto& rtts = player.track.rtts;
    while (!rtts.empty() && rtts.front().t_us < now_us - keep_us)
        rtts.pop_front();
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

namespace {
void put_sample(StateWriter& out, const Sample& s) {
    out.put<int64_t>(s.t_us);
    out.put<double>(s.position.x);
    out.put<double>(s.position.y);
    out.put<double>(s.position.z);
}

Sample get_sample(StateReader& in) {
    Sample s;
    s.t_us = in.get_relay_time("sample time");
    s.position = {in.get_finite("position"), in.get_finite("position"), in.get_finite("position")};
    return s;
}

// A track's samples as one array (version 5). Compact when every gap fits 32 bits and every
// coordinate is a float (it is: positions arrive as floats): the first receive time, then
// per sample the gap since the one before and x, y, z as floats, 16 bytes. Otherwise each
// sample whole, 32 bytes. Either way the samples read back are the ones written.
constexpr size_t kCompactSample = 4 + 3 * 4;
constexpr size_t kWholeSample = 8 + 3 * 8;

bool is_float(double v) {
    return static_cast<double>(static_cast<float>(v)) == v;
}

template <class T>
void put_raw(uint8_t*& at, T value) {
    std::memcpy(at, &value, sizeof value);
    at += sizeof value;
}

template <class T>
T get_raw(const uint8_t*& at) {
    T value;
    std::memcpy(&value, at, sizeof value);
    at += sizeof value;
    return value;
}

void put_samples(StateWriter& out, const std::deque<Sample>& samples) {
    bool compact = true;
    int64_t previous_us = samples.empty() ? 0 : samples.front().t_us;
    for (const Sample& s : samples) {
        const int64_t gap = s.t_us - previous_us;
        previous_us = s.t_us;
        if (gap < INT32_MIN || gap > INT32_MAX || !is_float(s.position.x) ||
            !is_float(s.position.y) || !is_float(s.position.z)) {
            compact = false;
            break;
        }
    }
    out.put<uint64_t>(samples.size());
    out.put<uint8_t>(compact ? 1 : 0);
    std::vector<uint8_t> bytes(compact ? 8 + samples.size() * kCompactSample
                                       : samples.size() * kWholeSample);
    uint8_t* at = bytes.data();
    if (compact) {
        previous_us = samples.empty() ? 0 : samples.front().t_us;
        put_raw<int64_t>(at, previous_us);
        for (const Sample& s : samples) {
            put_raw<int32_t>(at, static_cast<int32_t>(s.t_us - previous_us));
            previous_us = s.t_us;
            put_raw<float>(at, static_cast<float>(s.position.x));
            put_raw<float>(at, static_cast<float>(s.position.y));
            put_raw<float>(at, static_cast<float>(s.position.z));
        }
    } else {
        for (const Sample& s : samples) {
            put_raw<int64_t>(at, s.t_us);
            put_raw<double>(at, s.position.x);
            put_raw<double>(at, s.position.y);
            put_raw<double>(at, s.position.z);
        }
    }
    out.put_bytes(bytes);
}

std::deque<Sample> get_samples(StateReader& in) {
    const uint64_t count = in.get_count(kCompactSample);
    const auto flag = in.get<uint8_t>();
    if (flag > 1) throw StateError("state blob has a sample encoding of " + std::to_string(flag));
    const bool compact = flag == 1;
    const std::vector<uint8_t> bytes = in.get_bytes();
    const uint64_t expected = compact ? 8 + count * kCompactSample : count * kWholeSample;
    if (bytes.size() != expected)
        throw StateError("state blob has " + std::to_string(bytes.size()) + " bytes for " +
                         std::to_string(count) + " samples, expected " + std::to_string(expected));
    std::deque<Sample> samples;
    const uint8_t* at = bytes.data();
    // What a sample must be for the checks to measure it: a bounded relay time (the
    // compact form adds 32-bit steps, so each sum is checked) and a finite position.
    auto checked = [](const Sample& s) {
        StateReader::checked_relay_time(s.t_us, "sample time");
        if (!std::isfinite(s.position.x) || !std::isfinite(s.position.y) ||
            !std::isfinite(s.position.z))
            throw StateError("state blob has a sample with a non-finite position");
        return s;
    };
    if (compact) {
        int64_t t_us = StateReader::checked_relay_time(get_raw<int64_t>(at), "first sample time");
        for (uint64_t i = 0; i < count; ++i) {
            Sample s;
            t_us += get_raw<int32_t>(at);  // bounded before, and checked after each step
            s.t_us = t_us;
            s.position.x = get_raw<float>(at);
            s.position.y = get_raw<float>(at);
            s.position.z = get_raw<float>(at);
            samples.push_back(checked(s));
        }
    } else {
        for (uint64_t i = 0; i < count; ++i) {
            Sample s;
            s.t_us = get_raw<int64_t>(at);
            s.position.x = get_raw<double>(at);
            s.position.y = get_raw<double>(at);
            s.position.z = get_raw<double>(at);
            samples.push_back(checked(s));
        }
    }
    return samples;
}

// A flag byte that must be 0 or 1: anything else is not a blob this plugin wrote.
bool get_flag(StateReader& in) {
    const auto flag = in.get<uint8_t>();
    if (flag > 1) throw StateError("state blob has a flag byte of " + std::to_string(flag));
    return flag == 1;
}
}  // namespace

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
            put_samples(out, player.track.samples);
            out.put<uint64_t>(player.track.rtts.size());
            for (const RttSample& r : player.track.rtts) {
                out.put<int64_t>(r.t_us);
                out.put<uint32_t>(r.rtt_us);
            }
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
            const SustainedRun& run = player.sustained;
            out.put<uint8_t>(run.active ? 1 : 0);
            put_sample(out, run.first_from);
            put_sample(out, run.first_to);
            put_sample(out, run.last_to);
            out.put<double>(run.lowest_mps);
            out.put<double>(run.highest_mps);
            out.put<double>(run.sum_mps);
            out.put<int64_t>(run.windows);
            const AirborneStretch& air = player.airborne;
            out.put<uint8_t>(air.active ? 1 : 0);
            put_sample(out, air.takeoff);
            put_sample(out, air.last);
            out.put<int64_t>(air.updates);
            out.put<int64_t>(air.longest_wait_us);
            out.put<int64_t>(player.below_updates);
            put_sample(out, player.below_since);
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
            if (in.version() >= 5) {
                player.track.samples = get_samples(in);
            } else {
                uint64_t samples = in.get_count(32);
                for (uint64_t i = 0; i < samples; ++i) {
                    Sample s;
                    s.t_us = in.get_relay_time("sample time");
                    s.position = {in.get_finite("position"), in.get_finite("position"),
                                  in.get_finite("position")};
                    player.track.samples.push_back(s);
                }
            }
            uint64_t rtts = in.get_count(12);
            for (uint64_t i = 0; i < rtts; ++i) {
                RttSample r;
                r.t_us = in.get_relay_time("round-trip time");
                r.rtt_us = in.get<uint32_t>();
                player.track.rtts.push_back(r);
            }
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
            SustainedRun& run = player.sustained;
            run.active = get_flag(in);
            run.first_from = get_sample(in);
            run.first_to = get_sample(in);
            run.last_to = get_sample(in);
            run.lowest_mps = in.get_finite("speed");
            run.highest_mps = in.get_finite("speed");
            run.sum_mps = in.get_finite("speed");
            run.windows = in.get_counter("sustained window");
            AirborneStretch& air = player.airborne;
            air.active = get_flag(in);
            air.takeoff = get_sample(in);
            air.last = get_sample(in);
            air.updates = in.get_counter("airborne update");
            air.longest_wait_us = in.get_relay_time("airborne wait");
            player.below_updates = in.get_counter("below-terrain update");
            player.below_since = get_sample(in);
        }
        if (in.version() < 3) continue;
        areas_.clock.restore_match(in, match.clock);
        areas_.stats.restore_match(in, match.stats);
        areas_.sessions.restore_match(in, match.sessions);
    }
    if (in.version() >= 3) areas_.sessions.restore_live(in, live);
    in.finish();
    // A blob may hold receive times that go back (the plugin keeps what it was sent): the
    // look-backs binary-search only tracks that are in order.
    for (auto& [key, match] : matches)
        for (auto& [id, player] : match.players) {
            const auto& samples = player.track.samples;
            player.track.in_order =
                std::is_sorted(samples.begin(), samples.end(),
                               [](const Sample& a, const Sample& b) { return a.t_us < b.t_us; });
        }
    // Only a blob read whole replaces the state.
    matches_ = std::move(matches);
    live_ = std::move(live);
}

}  // namespace arbiter::reference
