#include "luanti_analyzer.hpp"

#include <string_view>

#include "extension_data.hpp"

namespace arbiter::luanti {

namespace {

// A check reports again only when its weighted score rises by at least this much.
constexpr double kReportStep = 0.05;
// The positions are the server's own, but what supports a player and what is inside a
// node is the mod's reading of the map around them.
constexpr double kConfidence = 0.9;

constexpr std::string_view kAllowanceType = "luanti.allowance";
constexpr std::string_view kInsideType = "luanti.inside";
constexpr std::string_view kCheatType = "luanti.cheat";

Evidence point(double x, double y, double z) {
    return Evidence().add("x", x).add("y", y).add("z", z);
}

std::span<const uint8_t> bytes_of(const fb::Extension& extension) {
    const auto* data = extension.data();
    return data ? std::span<const uint8_t>(data->data(), data->size()) : std::span<const uint8_t>();
}

}  // namespace

LuantiAnalyzer::LuantiAnalyzer(const Context& context)
    : Analyzer(context), settings_(LuantiSettings::parse(context.config)) {}

void LuantiAnalyzer::configure(const Context& context) {
    // Parsed whole first: a bad table throws here and changes nothing. Measurements in
    // progress go on under the new limits.
    settings_ = LuantiSettings::parse(context.config);
}

void LuantiAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    MatchState& match = matches_[batch.match()];
    for (const fb::Event* event : batch.events())
        on_event(match, *event, signals);
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
}

void LuantiAnalyzer::on_match_end(const MatchKey& match, Signals&) {
    matches_.erase(match);
}

void LuantiAnalyzer::restart_measurements(PlayerState& player) {
    player.position.reset();
    player.speed = SpeedTrack{};
    player.fly = FlyTrack{};
    player.noclip = NoclipTrack{};
}

void LuantiAnalyzer::on_event(MatchState& match, const fb::Event& event, Signals& signals) {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    switch (event.body_type()) {
        case fb::EventBody::PlayerJoin:
            // A new session: its allowance comes with it (the mod sends it after the join).
            if (id != 0) match.players[id] = PlayerState{};
            break;
        case fb::EventBody::PlayerLeave:
            match.players.erase(id);
            break;
        case fb::EventBody::PositionUpdate:
            if (id != 0)
                on_position(id, match.players[id], t_us, *event.body_as_PositionUpdate(), signals);
            break;
        case fb::EventBody::Extension:
            if (id != 0)
                on_extension(id, match.players[id], t_us, *event.body_as_Extension(), signals);
            break;
        case fb::EventBody::InputLost:
            // The lost batches may hold a teleport, a leave and a join, or a change of
            // allowance: nothing measures across them. The allowance stays (the mod sends
            // it only when it changes, so forgetting it would stop judging the player).
            for (auto& [player_id, player] : match.players)
                restart_measurements(player);
            host().count("input_lost");
            break;
        default:
            break;
    }
}

void LuantiAnalyzer::on_position(uint32_t id, PlayerState& player, int64_t t_us,
                                 const fb::PositionUpdate& update, Signals& signals) {
    if (!player.allowance) {
        host().count("positions_without_allowance");
        return;
    }
    const fb::Vec3* at = update.position();
    if (!at) return;
    const Position here{at->x(), at->y(), at->z()};

    // A silence longer than max_gap_s: what happened in it is unknown, so the windows
    // restart here rather than reading the distance across it as speed.
    if (player.position &&
        static_cast<double>(t_us - player.position_us) / 1e6 > settings_.max_gap_s) {
        restart_measurements(player);
        host().count("gaps");
    }
    if (update.server_teleport()) {
        // The server put the player here: nothing before it measures against this.
        restart_measurements(player);
        host().count("server_teleports");
    }
    ++player.steps;
    player.position = here;
    player.position_us = t_us;

    const Allowance& allowance = *player.allowance;
    if (allowance.attached) {  // riding: the engine moves the player, at its own speed
        player.speed = SpeedTrack{};
        player.fly = FlyTrack{};
        player.noclip = NoclipTrack{};
        return;
    }

    const double limit_mps = speed_limit(allowance, settings_.speed);
    if (auto found =
            add_speed_position(player.speed, t_us, here.x, here.y, limit_mps, settings_.speed)) {
        Evidence evidence;
        evidence.add("speed_mps", found->mean_mps)
            .add("fastest_window_mps", found->fastest_mps)
            .add("limit_mps", found->limit_mps)
            .add("base_speed_mps",
                 allowance.fast ? settings_.speed.fast_speed : settings_.speed.walk_speed)
            .add("tolerance", settings_.speed.tolerance)
            .add("sustained_s", found->sustained_s)
            .add("required_sustained_s", settings_.speed.sustained_s)
            .add("required_windows", kMinRunWindows)
            .add("window_s", settings_.speed.window_s)
            .add("windows", found->windows)
            .add("distance_m", found->distance_m)
            .add("from_us", found->from_us)
            .add("to_us", found->to_us)
            .add("allowance", allowance_evidence(allowance));
        report(id, "luanti.speed", speed_score(*found), kConfidence, player.speed_reported,
               std::move(evidence), player, signals);
    }

    const auto on_ground = update.on_ground();
    if (allowance.fly || !on_ground) {  // allowed to fly, or support unknown: not measured
        player.fly = FlyTrack{};
    } else {
        const double limit_s = hover_limit_s(allowance, settings_.fly);
        if (auto found = add_fly_position(player.fly, t_us, here.x, here.y, here.z, *on_ground,
                                          limit_s, settings_.fly)) {
            Evidence evidence;
            evidence.add("unsupported_not_falling_s", found->hover_s)
                .add("limit_s", found->limit_s)
                .add("rise_s", rise_time_s(allowance, settings_.fly))
                .add("hover_grace_s", settings_.fly.hover_grace_s)
                .add("fall_look_s", settings_.fly.fall_look_s)
                .add("fall_drop_m", settings_.fly.fall_drop_m)
                .add("from_us", found->from_us)
                .add("to_us", found->to_us)
                .add("from", point(found->start_x, found->start_y, found->start_z))
                .add("to", point(found->x, found->y, found->z))
                .add("top_z", found->top_z)
                .add("allowance", allowance_evidence(allowance));
            report(id, "luanti.fly", fly_score(*found), kConfidence, player.fly_reported,
                   std::move(evidence), player, signals);
        }
    }
    // A step the mod did not report inside ends a noclip stretch: add_inside_step sees
    // the step numbers skip.
}

void LuantiAnalyzer::on_extension(uint32_t id, PlayerState& player, int64_t t_us,
                                  const fb::Extension& extension, Signals& signals) {
    const std::string_view type = str(extension.type_name());
    if (type == kAllowanceType)
        on_allowance(id, player, bytes_of(extension));
    else if (type == kInsideType)
        on_inside(id, player, t_us, bytes_of(extension), signals);
    else if (type == kCheatType)
        on_cheat(player, bytes_of(extension));
    // Other extensions are other games' (or a newer mod's): not ours to judge.
}

void LuantiAnalyzer::on_allowance(uint32_t id, PlayerState& player, std::span<const uint8_t> data) {
    auto parsed = parse_allowance(data);
    if (auto* problem = std::get_if<std::string>(&parsed)) {
        host().count("bad_allowances");
        host().warn("player " + std::to_string(id) +
                    ": a luanti.allowance the plugin cannot read (" + *problem +
                    "); the previous allowance holds");
        return;
    }
    const Allowance& allowance = std::get<Allowance>(parsed);
    if (player.allowance && *player.allowance == allowance) return;  // said again: no change
    // What was measured under the old allowance says nothing under the new one.
    if (player.allowance) host().count("allowance_changes");
    player.allowance = allowance;
    player.speed = SpeedTrack{};
    player.fly = FlyTrack{};
    player.noclip = NoclipTrack{};
}

void LuantiAnalyzer::on_inside(uint32_t id, PlayerState& player, int64_t t_us,
                               std::span<const uint8_t> data, Signals& signals) {
    if (auto node = json_string_member(data, "node"))
        player.inside_node = std::move(*node);
    else
        host().count("bad_inside_reports");  // still a step inside: the event says so
    if (!player.allowance || !player.position) return;
    if (player.allowance->noclip || player.allowance->attached) {
        player.noclip = NoclipTrack{};
        return;
    }
    const Position& here = *player.position;
    auto found = add_inside_step(player.noclip, player.steps, t_us, here.x, here.y, here.z,
                                 settings_.noclip);
    if (!found) return;
    Evidence evidence;
    evidence.add("distance_inside_m", found->distance_m)
        .add("limit_m", found->limit_m)
        .add("steps_inside", found->steps)
        .add("node", player.inside_node)
        .add("from_us", found->from_us)
        .add("to_us", found->to_us)
        .add("from", point(found->start_x, found->start_y, found->start_z))
        .add("to", point(found->x, found->y, found->z))
        .add("allowance", allowance_evidence(*player.allowance));
    report(id, "luanti.noclip", noclip_score(*found), kConfidence, player.noclip_reported,
           std::move(evidence), player, signals);
}

void LuantiAnalyzer::on_cheat(PlayerState& player, std::span<const uint8_t> data) {
    const auto type = json_string_member(data, "type");
    if (!type) host().count("bad_cheat_reports");
    const std::string name = metric_part(type.value_or("other"));
    player.engine.add(name);
    host().count("engine_cheats." + name);
}

void LuantiAnalyzer::report(uint32_t id, std::string_view code, double score, double confidence,
                            std::optional<double>& reported, Evidence evidence,
                            const PlayerState& player, Signals& signals) {
    if (!(score > 0)) return;
    const double weighted = score * confidence;
    if (reported && weighted < *reported + kReportStep) return;
    reported = weighted;
    // What the engine's own anti-cheat said about the player, beside Arbiter's reading.
    evidence.add("engine_reports", player.engine.evidence());
    signals.emit({.player = id,
                  .code = code,
                  .score = score,
                  .confidence = confidence,
                  .evidence = std::move(evidence)});
    host().count("signals." + std::string(code));
}

}  // namespace arbiter::luanti
