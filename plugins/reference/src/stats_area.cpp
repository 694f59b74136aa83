#include "stats_area.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "event_fields.hpp"
#include "relay_times.hpp"

namespace arbiter::reference {

StatsArea::StatsArea(const ConfigTable& config) {
    ConfigTable stats = config.table("stats");
    StatLimits& s = limits_;
    s.experience_stat = stats.string("experience_stat", s.experience_stat);
    s.max_experience_per_hour =
        stats.number("max_experience_per_hour", s.max_experience_per_hour, Range::positive());
    s.experience_window_s =
        stats.number("experience_window_s", s.experience_window_s, Range::between(1.0, 86400.0));
    s.damage_stat = stats.string("damage_stat", s.damage_stat);
    s.combat_window_s =
        stats.number("combat_window_s", s.combat_window_s, Range::between(1.0, 3600.0));
    s.min_hits_taken = stats.integer("min_hits_taken", s.min_hits_taken, Range::between(1, 10000));
    s.resource_prefix = stats.string("resource_prefix", s.resource_prefix);
    s.confident_count =
        stats.integer("confident_count", s.confident_count, Range::between(1, 1000));
}

void StatsArea::on_stat(const fb::Event& event, Match& match, Player& player, Reporter& out) const {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::StatChange& change = *event.body_as_StatChange();
    const std::string stat = text(change.stat());
    if (stat == limits_.experience_stat) {
        if (change.delta() > 0) {
            player.experience.push_back({t_us, change.delta()});
            while (player.experience.front().t_us <= t_us - micros(limits_.experience_window_s))
                player.experience.pop_front();
            if (auto rate = check_experience_rate(player.experience, limits_)) {
                out.report({.player = id,
                            .code = "stats.xp_rate",
                            .score = rate->score,
                            .confidence = 0.9,
                            .evidence = Evidence()
                                            .add("stat", stat)
                                            .add("per_hour", rate->per_hour)
                                            .add("limit_per_hour", rate->limit_per_hour)
                                            .add("gained", rate->gained)
                                            .add("window_s", rate->window_s)
                                            .add("changes", rate->changes)
                                            .add("first_t_us", rate->first_us)
                                            .add("last_t_us", rate->last_us)});
            }
        }
    } else if (stat == limits_.damage_stat) {
        match.damage_reported = true;
        if (change.delta() > 0) {
            player.damage_taken.push_back(t_us);
            trim(player.damage_taken, micros(limits_.combat_window_s));
        }
    } else if (!limits_.resource_prefix.empty() && stat.starts_with(limits_.resource_prefix)) {
        auto previous = player.resources.find(stat);
        std::optional<double> before;
        if (previous != player.resources.end()) before = previous->second;
        if (resource_not_spent(before, change.delta(), change.value_after())) {
            ++player.unspent;
            out.report({.player = id,
                        .code = "stats.resource",
                        .score = 1.0,
                        .confidence = count_confidence(player.unspent, limits_.confident_count),
                        .evidence = Evidence()
                                        .add("stat", stat)
                                        .add("before", *before)
                                        .add("delta", change.delta())
                                        .add("value_after", change.value_after())
                                        .add("spends_not_spent", player.unspent)
                                        .add("t_us", t_us)});
        }
        player.resources[stat] = change.value_after();
    }
}

uint32_t StatsArea::hurt_player(const fb::Event& hit_claim) {
    const fb::HitClaim& hit = *hit_claim.body_as_HitClaim();
    const uint32_t target = hit.target_player();
    if (target != 0 && target != hit_claim.player() && hit.damage() > 0 && hit.target_alive() &&
        hit.target_damageable())
        return target;
    return 0;
}

void StatsArea::on_hit_taken(uint32_t player_id, int64_t t_us, const Match& match, Player& player,
                             Reporter& out) const {
    player.hits_taken.push_back(t_us);
    trim(player.hits_taken, micros(limits_.combat_window_s));
    // Only a game that reports damage at all can show a player who takes none.
    if (!match.damage_reported || player.hits_taken.empty()) return;
    const int64_t from = player.hits_taken.back() - micros(limits_.combat_window_s);
    const auto damage = std::count_if(player.damage_taken.begin(), player.damage_taken.end(),
                                      [&](int64_t t) { return t >= from; });
    const auto hits = static_cast<int64_t>(player.hits_taken.size());
    if (auto unhurt = check_invulnerable(hits, damage, limits_)) {
        out.report({.player = player_id,
                    .code = "stats.invulnerable",
                    .score = unhurt->score,
                    .confidence = unhurt->confidence,
                    .evidence = Evidence()
                                    .add("hits_taken", unhurt->hits_taken)
                                    .add("damage_registered", static_cast<int64_t>(damage))
                                    .add("min_hits_taken", limits_.min_hits_taken)
                                    .add("window_s", unhurt->window_s)
                                    .add("first_t_us", player.hits_taken.front())
                                    .add("last_t_us", player.hits_taken.back())});
    }
}

void StatsArea::on_input_lost(Player& player) const {
    Player fresh;
    fresh.unspent = player.unspent;
    player = std::move(fresh);
}

void StatsArea::save_player(StateWriter& out, const Player& player) const {
    out.put<uint64_t>(player.experience.size());
    for (const StatGain& g : player.experience) {
        out.put<int64_t>(g.t_us);
        out.put<double>(g.delta);
    }
    put_times(out, player.hits_taken);
    put_times(out, player.damage_taken);
    out.put<uint64_t>(player.resources.size());
    for (const auto& [stat, value] : player.resources) {
        out.put_string(stat);
        out.put<double>(value);
    }
    out.put<int64_t>(player.unspent);
}

void StatsArea::restore_player(StateReader& in, Player& player) const {
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        StatGain g;
        g.t_us = in.get_relay_time("experience gain time");
        g.delta = in.get_finite("experience gain");
        player.experience.push_back(g);
    }
    player.hits_taken = get_times<Ring<int64_t>>(in);
    player.damage_taken = get_times<Ring<int64_t>>(in);
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        std::string stat = in.get_string();
        player.resources[stat] = in.get_finite("resource");
    }
    player.unspent = in.get_counter("unspent resource");
}

void StatsArea::save_match(StateWriter& out, const Match& match) const {
    out.put<uint8_t>(match.damage_reported ? 1 : 0);
}

void StatsArea::restore_match(StateReader& in, Match& match) const {
    match.damage_reported = in.get<uint8_t>() != 0;
}

}  // namespace arbiter::reference
