#include "hits_area.hpp"

#include "event_fields.hpp"

namespace arbiter::reference {

namespace {
Evidence vec_evidence(const fb::Vec3* v) {
    const Vec3 p = to_vec(v);
    return Evidence().add("x", p.x).add("y", p.y).add("z", p.z);
}

// What a reviewer needs to see a hit or kill claim: who, with what, from where, when.
template <class Claim>
Evidence claim_evidence(const fb::Event& event, const Claim& claim,
                        const std::string& weapon_name) {
    Evidence evidence = Evidence()
                            .add("t_us", event.relay_time_us())
                            .add("tick", event.tick())
                            .add("target_player", claim.target_player())
                            .add("weapon", weapon_name)
                            .add("attacker", vec_evidence(claim.attacker_position()))
                            .add("target", vec_evidence(claim.target_position()))
                            .add("range_m", static_cast<double>(claim.range_m()));
    if constexpr (requires { claim.damage(); })
        evidence.add("damage", static_cast<double>(claim.damage()));
    return evidence;
}
}  // namespace

HitsArea::HitsArea(const ConfigTable& config) {
    ConfigTable hits = config.table("hits");
    HitLimits& h = limits_;
    h.default_range_m = hits.number("default_range_m", h.default_range_m, Range::positive());
    h.range_tolerance =
        hits.number("range_tolerance", h.range_tolerance, Range::between(1.0, 10.0));
    h.timing_window_s =
        hits.number("timing_window_s", h.timing_window_s, Range::between(0.0, 10.0));
    h.max_rtt_allowance_s =
        hits.number("max_rtt_allowance_s", h.max_rtt_allowance_s, Range::between(0.0, 10.0));
    h.max_lag_allowance_s =
        hits.number("max_lag_allowance_s", h.max_lag_allowance_s, Range::between(0.0, 10.0));
    h.fire_window_s = hits.number("fire_window_s", h.fire_window_s, Range::between(0.1, 60.0));
    h.fire_tolerance = hits.number("fire_tolerance", h.fire_tolerance, Range::between(1.0, 10.0));
    h.confident_count = hits.integer("confident_count", h.confident_count, Range::between(1, 1000));
    ConfigTable weapons = hits.table("weapons");
    for (const std::string& name : weapons.keys()) {
        ConfigTable w = weapons.table(name);
        WeaponLimits weapon;
        weapon.range_m = w.number("range_m", h.default_range_m, Range::positive());
        weapon.max_damage = w.number("max_damage", 0.0, Range::positive());
        const bool interval = w.has("fire_interval_s");
        if (interval && w.has("rounds_per_minute"))
            throw ConfigError(w.path() + ".rounds_per_minute",
                              "give fire_interval_s or rounds_per_minute, not both");
        weapon.fire_interval_s = w.number("fire_interval_s", 0.0, Range::between(0.001, 3600.0));
        const double rpm = w.number("rounds_per_minute", 0.0, Range::between(0.01, 60000.0));
        if (!interval && rpm > 0) weapon.fire_interval_s = 60.0 / rpm;
        h.weapons[name] = weapon;
    }
}

void HitsArea::check_rate(uint32_t id, const LagSeen& lag, std::deque<int64_t>& times, int64_t t_us,
                          const std::string& weapon_name, const WeaponLimits& weapon,
                          const char* kind, const char* count_key, Reporter& out) const {
    times.push_back(t_us);
    trim(times, micros(limits_.fire_window_s));
    if (weapon.fire_interval_s <= 0) return;
    const double allowance = lag_allowance(lag, times.front(), t_us, limits_.max_lag_allowance_s,
                                           limits_.max_rtt_allowance_s)
                                 .used_s;
    auto rate = check_fire_rate(times, weapon, allowance, limits_);
    if (!rate) return;
    out.report({.player = id,
                .code = "hits.fire_rate",
                .score = rate->score,
                .confidence = 0.9,
                .evidence = Evidence()
                                .add("kind", kind)
                                .add("weapon", weapon_name)
                                .add(count_key, rate->shots)
                                .add("allowed", rate->allowed)
                                .add("fire_interval_s", weapon.fire_interval_s)
                                .add("tolerance", limits_.fire_tolerance)
                                .add("window_s", rate->window_s)
                                .add("lag_allowance_s", rate->allowance_s)
                                .add("first_t_us", rate->first_us)
                                .add("last_t_us", rate->last_us)});
}

void HitsArea::on_hit(const fb::Event& event, double tick_s, const LagSeen& lag, Player& player,
                      Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::HitClaim& hit = *event.body_as_HitClaim();
    const std::string weapon_name = text(hit.weapon());
    const WeaponLimits weapon = limits_.weapon(weapon_name);
    const Evidence claim = claim_evidence(event, hit, weapon_name);

    if (auto range = check_range(hit.range_m(), weapon, limits_)) {
        out.report({.player = id,
                    .code = "hits.range",
                    .score = range->score,
                    .confidence = 0.9,
                    .evidence = Evidence()
                                    .add("range_m", range->value)
                                    .add("limit_m", range->limit)
                                    .add("weapon_range_m", weapon.range_m)
                                    .add("tolerance", limits_.range_tolerance)
                                    .add("claim", claim)});
    }
    if (!hit.line_of_sight()) {
        ++player.blocked_hits;
        out.report({.player = id,
                    .code = "hits.line_of_sight",
                    .score = 1.0,
                    .confidence = count_confidence(player.blocked_hits, limits_.confident_count),
                    .evidence = Evidence()
                                    .add("hits_without_line_of_sight", player.blocked_hits)
                                    .add("confident_count", limits_.confident_count)
                                    .add("claim", claim)});
    }
    if (!hit.target_alive() || !hit.target_damageable()) {
        ++player.dead_target_hits;
        out.report(
            {.player = id,
             .code = "hits.target_state",
             .score = 1.0,
             .confidence = count_confidence(player.dead_target_hits, limits_.confident_count),
             .evidence = Evidence()
                             .add("target_alive", hit.target_alive())
                             .add("target_damageable", hit.target_damageable())
                             .add("hits_on_such_targets", player.dead_target_hits)
                             .add("confident_count", limits_.confident_count)
                             .add("claim", claim)});
    }
    if (auto damage = check_damage(hit.damage(), weapon)) {
        out.report({.player = id,
                    .code = "hits.damage",
                    .score = damage->score,
                    .confidence = 0.95,
                    .evidence = Evidence()
                                    .add("damage", damage->value)
                                    .add("limit", damage->limit)
                                    .add("claim", claim)});
    }
    if (auto claimed = hit.claimed_tick(); claimed.has_value()) {
        const LagAllowance allowance = lag_allowance(lag, t_us, t_us, limits_.max_lag_allowance_s,
                                                     limits_.max_rtt_allowance_s);
        if (auto timing = check_timing(event.tick(), *claimed, tick_s, allowance.used_s, limits_)) {
            out.report({.player = id,
                        .code = "hits.timing",
                        .score = timing->score,
                        .confidence = 0.9,
                        .evidence = Evidence()
                                        .add("offset_s", timing->offset_s)
                                        .add("limit_s", timing->limit_s)
                                        .add("window_s", limits_.timing_window_s)
                                        .add("lag_allowance_s", timing->allowance_s)
                                        .add("silence_s", allowance.silence_s)
                                        .add("measured_rtt_s", allowance.rtt_s)
                                        .add("relay_tick", event.tick())
                                        .add("claimed_tick", *claimed)
                                        .add("tick_s", tick_s)
                                        .add("claim", claim)});
        }
    }
    // Fire rate: every claim is one shot of its weapon.
    check_rate(id, lag, player.shots[weapon_name], t_us, weapon_name, weapon, "hits", "shots", out);
}

void HitsArea::on_kill(const fb::Event& event, const LagSeen& lag, Player& player,
                       Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::KillClaim& kill = *event.body_as_KillClaim();
    const std::string weapon_name = text(kill.weapon());
    const WeaponLimits weapon = limits_.weapon(weapon_name);
    const Evidence claim = claim_evidence(event, kill, weapon_name);
    if (auto range = check_range(kill.range_m(), weapon, limits_)) {
        out.report({.player = id,
                    .code = "hits.range",
                    .score = range->score,
                    .confidence = 0.9,
                    .evidence = Evidence()
                                    .add("kind", "kill")
                                    .add("range_m", range->value)
                                    .add("limit_m", range->limit)
                                    .add("claim", claim)});
    }
    if (!kill.line_of_sight()) {
        ++player.blocked_hits;
        out.report({.player = id,
                    .code = "hits.line_of_sight",
                    .score = 1.0,
                    .confidence = count_confidence(player.blocked_hits, limits_.confident_count),
                    .evidence = Evidence()
                                    .add("kind", "kill")
                                    .add("hits_without_line_of_sight", player.blocked_hits)
                                    .add("claim", claim)});
    }
    // A kill needs at least one shot: more kills than shots the weapon fires is impossible.
    check_rate(id, lag, player.kills[weapon_name], t_us, weapon_name, weapon, "kills", "kills",
               out);
}

void HitsArea::on_input_lost(Player& player) const {
    player.shots.clear();
    player.kills.clear();
}

void HitsArea::save_player(StateWriter& out, const Player& player) const {
    put_times_by_name(out, player.shots);
    put_times_by_name(out, player.kills);
    out.put<int64_t>(player.blocked_hits);
    out.put<int64_t>(player.dead_target_hits);
}

void HitsArea::restore_player(StateReader& in, Player& player) const {
    player.shots = get_times_by_name(in);
    player.kills = get_times_by_name(in);
    player.blocked_hits = in.get_counter("blocked hit");
    player.dead_target_hits = in.get_counter("dead-target hit");
}

}  // namespace arbiter::reference
