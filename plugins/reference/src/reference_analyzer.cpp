#include "reference_analyzer.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::reference {

namespace {
constexpr const char* kStateTag = "REF1";
// Version 2 added the held signals; version 1 blobs are still read.
constexpr uint32_t kStateVersion = 2;
// A check reports again only when its score rises by at least this much.
constexpr double kReportStep = 0.05;

Vec3 to_vec(const fb::Vec3* v) {
    return v ? Vec3{v->x(), v->y(), v->z()} : Vec3{};
}

Evidence position_evidence(const Sample& sample) {
    return Evidence()
        .add("t_us", sample.t_us)
        .add("x", sample.position.x)
        .add("y", sample.position.y)
        .add("z", sample.position.z);
}
}  // namespace

ReferenceSettings ReferenceSettings::parse(const ConfigTable& config) {
    ReferenceSettings s;
    ConfigTable movement = config.table("movement");
    MovementLimits& m = s.movement;
    m.max_speed = movement.number("max_speed", m.max_speed, Range::positive());
    m.tolerance = movement.number("tolerance", m.tolerance, Range::between(1.0, 10.0));
    m.window_s = movement.number("window_s", m.window_s, Range::between(0.1, 60.0));
    m.max_lag_allowance_s =
        movement.number("max_lag_allowance_s", m.max_lag_allowance_s, Range::between(0.0, 10.0));
    m.teleport_distance =
        movement.number("teleport_distance", m.teleport_distance, Range::positive());
    m.min_samples = movement.integer("min_samples", m.min_samples, Range::between(1, 1000));
    m.burst_gap_s = movement.number("burst_gap_s", m.burst_gap_s, Range{0.0, 0.05, true});
    config.reject_unknown_keys();
    return s;
}

ReferenceAnalyzer::ReferenceAnalyzer(const Context& context)
    : Analyzer(context), settings_(ReferenceSettings::parse(context.config)) {}

void ReferenceAnalyzer::configure(const Context& context) {
    // Parse everything first: a bad config throws here and changes nothing.
    settings_ = ReferenceSettings::parse(context.config);
}

void ReferenceAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    Players& players = matches_[batch.match()];
    for (const fb::Event* event : batch.events()) {
        const uint32_t id = event->player();
        if (id == 0) continue;
        switch (event->body_type()) {
            case fb::EventBody::PositionUpdate:
                on_position(id, players[id], event->relay_time_us(),
                            *event->body_as_PositionUpdate(), signals);
                break;
            case fb::EventBody::LatencySample: {
                Player& player = players[id];
                player.track.rtts.push_back(
                    {event->relay_time_us(), event->body_as_LatencySample()->rtt_us()});
                forget_old(player, event->relay_time_us());
                break;
            }
            case fb::EventBody::PlayerLeave:
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

void ReferenceAnalyzer::on_position(uint32_t player_id, Player& player, int64_t t_us,
                                    const fb::PositionUpdate& update, Signals& signals) {
    Sample sample{t_us, to_vec(update.position())};
    Track& track = player.track;
    // A teleport the server made itself is exempt: start the track afresh from it.
    if (update.server_teleport()) {
        track.samples.clear();
        track.samples.push_back(sample);
        return;
    }
    const MovementLimits& limits = settings_.movement;

    // One update's displacement: no tick of movement produces this much, whatever the lag.
    if (!track.samples.empty()) {
        const Sample& previous = track.samples.back();
        double jump = distance(previous.position, sample.position);
        if (jump > limits.teleport_distance) {
            report(player,
                   {.player = player_id,
                    .code = "movement.teleport",
                    .score = 1.0,
                    .confidence = 0.95,
                    .evidence = Evidence()
                                    .add("kind", "single_update")
                                    .add("distance_m", jump)
                                    .add("limit_m", limits.teleport_distance)
                                    .add("from", position_evidence(previous))
                                    .add("to", position_evidence(sample))},
                   signals);
        }
    }
    track.samples.push_back(sample);
    forget_old(player, t_us);

    auto window = measure_window(track, limits);
    if (!window) return;
    const double confidence = std::min(
        1.0, static_cast<double>(window->samples) / static_cast<double>(limits.min_samples));

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
    const std::string code(signal.code);
    const double weighted = signal.score * signal.confidence;
    auto reported = player.reported.find(code);
    // The epsilon keeps a rise of exactly one step (0.90 to 0.95) a rise in floating point.
    if (reported != player.reported.end() && weighted < reported->second + kReportStep - 1e-9) {
        if (weighted <= reported->second) return;
        auto held = player.held.find(code);
        if (held == player.held.end() || weighted > held->second.score * held->second.confidence)
            player.held[code] = {signal.score, signal.confidence, signal.evidence};
        return;
    }
    player.reported[code] = weighted;
    player.held.erase(code);
    signals.emit(signal);
    host().count("signals." + code);
}

void ReferenceAnalyzer::report_held(uint32_t player_id, Player& player, Signals& signals) {
    for (auto& [code, held] : player.held) {
        signals.emit({.player = player_id,
                      .code = code,
                      .score = held.score,
                      .confidence = held.confidence,
                      .evidence = held.evidence});
        player.reported[code] = held.score * held.confidence;
        host().count("signals." + code);
    }
    player.held.clear();
}

void ReferenceAnalyzer::forget_old(Player& player, int64_t now_us) const {
    const MovementLimits& limits = settings_.movement;
    // Keep a window, the longest lag allowance, and a second of slack.
    const int64_t keep_us =
        static_cast<int64_t>((limits.window_s + limits.max_lag_allowance_s + 1.0) * 1e6) +
        1'000'000;
    auto& samples = player.track.samples;
    // Keep one sample older than the horizon: it may be the start of a window.
    while (samples.size() > 2 && samples[1].t_us < now_us - keep_us)
        samples.pop_front();
    auto& rtts = player.track.rtts;
    while (!rtts.empty() && rtts.front().t_us < now_us - keep_us)
        rtts.pop_front();
}

void ReferenceAnalyzer::on_match_end(const MatchKey& match, Signals& signals) {
    auto it = matches_.find(match);
    if (it == matches_.end()) return;
    // Sorted, so that the order of the final signals does not depend on hashing.
    std::map<uint32_t, Player*> players;
    for (auto& [id, player] : it->second)
        players[id] = &player;
    for (auto& [id, player] : players)
        report_held(id, *player, signals);
    matches_.erase(it);
}

std::vector<uint8_t> ReferenceAnalyzer::save_state() {
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, players] : matches_) {
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
            out.put<uint64_t>(player.track.samples.size());
            for (const Sample& s : player.track.samples) {
                out.put<int64_t>(s.t_us);
                out.put<double>(s.position.x);
                out.put<double>(s.position.y);
                out.put<double>(s.position.z);
            }
            out.put<uint64_t>(player.track.rtts.size());
            for (const RttSample& r : player.track.rtts) {
                out.put<int64_t>(r.t_us);
                out.put<uint32_t>(r.rtt_us);
            }
            out.put<uint64_t>(player.reported.size());
            for (const auto& [code, score] : player.reported) {
                out.put_string(code);
                out.put<double>(score);
            }
            out.put<uint64_t>(player.held.size());
            for (const auto& [code, held] : player.held) {
                out.put_string(code);
                out.put<double>(held.score);
                out.put<double>(held.confidence);
                out.put_string(held.evidence.str());
            }
        }
    }
    return out.finish();
}

void ReferenceAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, Players> matches;
    uint64_t match_count = in.get_count(16);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        Players& players = matches[key];
        uint64_t player_count = in.get_count(4);
        for (uint64_t p = 0; p < player_count; ++p) {
            Player& player = players[in.get<uint32_t>()];
            uint64_t samples = in.get_count(32);
            for (uint64_t i = 0; i < samples; ++i) {
                Sample s;
                s.t_us = in.get<int64_t>();
                s.position = {in.get<double>(), in.get<double>(), in.get<double>()};
                player.track.samples.push_back(s);
            }
            uint64_t rtts = in.get_count(12);
            for (uint64_t i = 0; i < rtts; ++i) {
                RttSample r;
                r.t_us = in.get<int64_t>();
                r.rtt_us = in.get<uint32_t>();
                player.track.rtts.push_back(r);
            }
            uint64_t reported = in.get_count(16);
            for (uint64_t i = 0; i < reported; ++i) {
                std::string code = in.get_string();
                player.reported[code] = in.get<double>();
            }
            if (in.version() < 2) continue;
            for (uint64_t held = in.get_count(40); held > 0; --held) {
                std::string code = in.get_string();
                Held& h = player.held[code];
                h.score = in.get<double>();
                h.confidence = in.get<double>();
                h.evidence = Evidence::from_str(in.get_string());
            }
        }
    }
    in.finish();
    matches_ = std::move(matches);  // only a blob read whole replaces the state
}

}  // namespace arbiter::reference
