#include "lagpool_analyzer.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::lagpool {

namespace {
// A check reports again only when its weighted score rises by at least this much.
constexpr double kReportStep = 0.05;
// The failed grabs an evidence object lists one by one (the newest ones).
constexpr size_t kRecentInEvidence = 5;

Vec3 to_vec(const fb::Vec3* v) {
    return v ? Vec3{v->x(), v->y(), v->z()} : Vec3{};
}

double seconds_between(int64_t from_us, int64_t to_us) {
    return to_us > from_us ? static_cast<double>(to_us - from_us) / 1e6 : 0.0;
}

Evidence position_evidence(const Vec3& p) {
    return Evidence().add("x", p.x).add("y", p.y).add("z", p.z);
}
}  // namespace

LagpoolAnalyzer::LagpoolAnalyzer(const Context& context)
    : Analyzer(context), settings_(LagpoolSettings::parse(context.config)) {}

void LagpoolAnalyzer::configure(const Context& context) {
    // Parse everything first: a bad config throws here and changes nothing. Budgets of
    // kinds the new config drops are forgotten, and kinds it adds start empty, at the
    // next event of each player (see player_state()).
    settings_ = LagpoolSettings::parse(context.config);
    ++kinds_generation_;
}

void LagpoolAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    MatchState& match = matches_[batch.match()];
    // Past a few thousand players their budgets are out of the caches: each group of
    // events asks for its players' budgets before the first of them is handled.
    for_each_event_looking_ahead(
        batch.events(), match.players, [](const PlayerState& player) { player.kinds.prefetch(); },
        [&](const fb::Event& event) { on_event(match, event, signals); });
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
}

void LagpoolAnalyzer::on_event(MatchState& match, const fb::Event& event, Signals& signals) {
    const int64_t t_us = event.relay_time_us();
    const uint32_t id = event.player();
    switch (event.body_type()) {
        case fb::EventBody::TickBoundary:
            match.lag.observe(
                t_us, static_cast<double>(event.body_as_TickBoundary()->tick_lag_us()) / 1e6,
                settings_.lag_halving_s);
            break;
        case fb::EventBody::PlayerJoin:
            if (id != 0) start_session(match, id, t_us);
            break;
        case fb::EventBody::PlayerLeave:
            match.players.erase(id);
            break;
        case fb::EventBody::PositionUpdate:
            if (id != 0) on_position(match, id, t_us, *event.body_as_PositionUpdate(), signals);
            break;
        case fb::EventBody::Order:
            if (id != 0) on_order(match, id, t_us, *event.body_as_Order(), signals);
            break;
        case fb::EventBody::StatChange:
            if (id != 0) on_stat(match, id, t_us, *event.body_as_StatChange(), signals);
            break;
        case fb::EventBody::InputLost:
            on_input_lost(match, t_us);
            break;
        default:
            break;
    }
}

void LagpoolAnalyzer::on_match_end(const MatchKey& match, Signals&) {
    matches_.erase(match);
}

double LagpoolAnalyzer::capacity_at(const MatchState& match, int64_t t_us) const {
    return budget_capacity(match.lag.estimate_s(t_us, settings_.lag_halving_s),
                           settings_.min_capacity_s, settings_.lag_factor);
}

LagpoolAnalyzer::KindState LagpoolAnalyzer::fresh_kind(const MatchState& match,
                                                       int64_t t_us) const {
    KindState state;
    state.budget = Budget(capacity_at(match, t_us));  // empty, as Luanti's LagPool starts
    state.updated_us = t_us;
    // Luanti starts m_time_from_last_teleport at 0 too: a session begins with the grace
    // a server teleport gives, while the client settles.
    state.reset_us = t_us;
    return state;
}

void LagpoolAnalyzer::start_session(MatchState& match, uint32_t player_id, int64_t t_us) {
    PlayerState& player = match.players[player_id];
    player = PlayerState{};
    for (const KindSettings& kind : settings_.kinds)
        player.kinds.emplace(kind.name, fresh_kind(match, t_us));
    player.kinds_of = kinds_generation_;
}

double LagpoolAnalyzer::bring_forward(const MatchState& match, KindState& kind,
                                      int64_t t_us) const {
    const double capacity = capacity_at(match, t_us);
    kind.budget.advance(capacity, seconds_between(kind.updated_us, t_us));
    kind.updated_us = std::max(kind.updated_us, t_us);
    return capacity;
}

void LagpoolAnalyzer::on_input_lost(MatchState& match, int64_t t_us) {
    for (auto& [id, player] : match.players) {
        // The lost batches may hold a server teleport (a respawn) or a leave and a join:
        // the next position is measured from nothing, and every budget is treated as after
        // a server teleport (brought forward, and the grace runs from here), since the
        // client may still be catching up with what the server did in the gap. Overdraws
        // already recorded stay: each was measured within heard input.
        player.position.reset();
        for (auto& [name, kind] : player.kinds) {
            bring_forward(match, kind, t_us);
            kind.reset_us = t_us;
        }
    }
    host().count("input_lost");
}

LagpoolAnalyzer::PlayerState& LagpoolAnalyzer::player_state(MatchState& match, uint32_t player_id,
                                                            int64_t t_us) {
    auto it = match.players.find(player_id);
    // A player seen before their join (the plugin started mid-match) begins a session now.
    if (it == match.players.end()) {
        start_session(match, player_id, t_us);
        return match.players.at(player_id);
    }
    PlayerState& player = it->second;
    // Keep the budgets in step with the config after a reconfigure (or a restore).
    if (player.kinds_of == kinds_generation_) return player;
    player.kinds_of = kinds_generation_;
    if (player.kinds.size() != settings_.kinds.size() ||
        !std::all_of(settings_.kinds.begin(), settings_.kinds.end(), [&](const KindSettings& kind) {
            return player.kinds.count(kind.name) != 0;
        })) {
        player.kinds.erase_if(
            [&](const auto& entry) { return settings_.find(entry.first) == nullptr; });
        for (const KindSettings& kind : settings_.kinds)
            if (!player.kinds.count(kind.name))
                player.kinds.emplace(kind.name, fresh_kind(match, t_us));
    }
    return player;
}

void LagpoolAnalyzer::on_position(MatchState& match, uint32_t player_id, int64_t t_us,
                                  const fb::PositionUpdate& update, Signals& signals) {
    PlayerState& state = player_state(match, player_id, t_us);
    const Vec3 to = to_vec(update.position());
    const KindSettings* kind = settings_.find(kMovementKind);
    if (!kind) {
        state.position = to;
        return;
    }
    KindState& moves = state.kinds.at(kind->name);
    if (update.server_teleport()) {
        // Luanti's PlayerSAO::setPos / moveTo: the move is valid, the move budget is
        // emptied and the grace period starts again.
        bring_forward(match, moves, t_us);
        moves.budget.empty();
        moves.reset_us = t_us;
        state.position = to;
        host().count("server_teleports");
        return;
    }
    if (!state.position) {  // the first position of a session costs nothing
        state.position = to;
        return;
    }
    Charge c;
    c.from = *state.position;
    c.to = to;
    c.movement = movement_cost(c.from, c.to, kind->movement);
    c.cost_s = c.movement->seconds;
    // Luanti measures from the last *good* position and, on a failed grab, puts the
    // player back there. Arbiter only observes: the relay keeps the position the client
    // sent, so the next move is measured from where the player now is; otherwise one
    // refused step would make every later step look like a teleport.
    state.position = to;
    charge(match, player_id, *kind, moves, t_us, c, signals);
}

void LagpoolAnalyzer::on_order(MatchState& match, uint32_t player_id, int64_t t_us,
                               const fb::Order& order, Signals& signals) {
    const KindSettings* kind = settings_.find(str(order.kind()));
    if (!kind || kind->cost != CostModel::fixed) return;
    PlayerState& state = player_state(match, player_id, t_us);
    Charge c;
    c.cost_s = fixed_cost(kind->seconds, kind->tolerance);
    charge(match, player_id, *kind, state.kinds.at(kind->name), t_us, c, signals);
}

void LagpoolAnalyzer::on_stat(MatchState& match, uint32_t player_id, int64_t t_us,
                              const fb::StatChange& stat, Signals& signals) {
    const KindSettings* kind = settings_.find(str(stat.stat()));
    if (!kind || kind->cost != CostModel::stated) return;
    const double stated_s = stat.delta();
    // A time that is not finite or is negative is no time: charging it would empty or
    // refill the budget by nonsense. Counted, so that an operator sees a relay sending it.
    if (!std::isfinite(stated_s) || stated_s < 0) {
        host().count("stated_ignored." + kind->name);
        return;
    }
    PlayerState& state = player_state(match, player_id, t_us);
    Charge c;
    c.stated_s = stated_s;
    c.cost_s = stated_s / kind->tolerance;
    charge(match, player_id, *kind, state.kinds.at(kind->name), t_us, c, signals);
}

void LagpoolAnalyzer::charge(MatchState& match, uint32_t player_id, const KindSettings& kind,
                             KindState& state, int64_t t_us, const Charge& what, Signals& signals) {
    const double capacity = bring_forward(match, state, t_us);
    const double available = state.budget.available();
    if (state.budget.grab(what.cost_s)) return;

    // Luanti reports a failed move only once the time since the last teleport exceeds
    // the capacity (PlayerSAO::checkMovementCheat): the grace grows with the lag, since a
    // lagging client learns of the teleport late and keeps sending where it was.
    const double grace_s = std::max(settings_.teleport_grace_s, capacity);
    if (seconds_between(state.reset_us, t_us) <= grace_s) {
        host().count("failed_grabs_in_grace." + kind.name);
        return;
    }
    host().count("failed_grabs." + kind.name);
    const Overdraw overdraw{
        .t_us = t_us, .cost_s = what.cost_s, .available_s = available, .capacity_s = capacity};
    state.overdraws.add(overdraw, settings_.overdraw.window_s);
    report(player_id, kind, state, match, t_us, overdraw, what, signals);
}

void LagpoolAnalyzer::report(uint32_t player_id, const KindSettings& kind, KindState& state,
                             const MatchState& match, int64_t t_us, const Overdraw& latest,
                             const Charge& what, Signals& signals) {
    const OverdrawSummary summary = state.overdraws.summary(settings_.overdraw.burst_s);
    const OverdrawScore score = score_overdraws(summary, settings_.overdraw);
    if (score.score <= 0) return;
    const double weighted = score.score * score.confidence;
    if (state.reported && weighted < *state.reported + kReportStep) return;
    state.reported = weighted;

    Evidence last;
    last.add("t_us", latest.t_us)
        .add("cost_s", latest.cost_s)
        .add("available_s", latest.available_s)
        .add("deficit_s", latest.deficit_s());
    if (what.movement) {
        last.add("horizontal_m", what.movement->horizontal_m)
            .add("climb_m", what.movement->climb_m)
            .add("from", position_evidence(what.from))
            .add("to", position_evidence(what.to));
    }
    if (what.stated_s) last.add("stated_s", *what.stated_s);
    std::vector<Evidence> recent;
    const auto& items = state.overdraws.items();
    for (size_t i = items.size() > kRecentInEvidence ? items.size() - kRecentInEvidence : 0;
         i < items.size(); ++i)
        recent.push_back(Evidence()
                             .add("t_us", items[i].t_us)
                             .add("deficit_s", items[i].deficit_s())
                             .add("cost_s", items[i].cost_s));

    Evidence evidence;
    evidence.add("budget", kind.name)
        .add("overdrawn_s", summary.overdrawn_s)
        .add("failed_grabs", summary.failed_grabs)
        .add("episodes", summary.episodes)
        .add("largest_deficit_s", summary.largest_deficit_s)
        .add("window_s", settings_.overdraw.window_s)
        .add("first_failure_us", summary.first_us)
        .add("last_failure_us", summary.last_us)
        .add("capacity_s", latest.capacity_s)
        .add("lag_estimate_s", match.lag.estimate_s(t_us, settings_.lag_halving_s))
        .add("min_capacity_s", settings_.min_capacity_s)
        .add("tolerance", kind.tolerance);
    if (kind.cost == CostModel::distance) {
        evidence.add("max_walk_speed_mps", kind.movement.max_walk_speed)
            .add("max_jump_speed_mps", kind.movement.max_jump_speed);
    } else if (kind.cost == CostModel::fixed) {
        evidence.add("seconds_per_action", kind.seconds);
    } else {
        // Each action's own time is in "latest" (stated_s); the kind says where it came from.
        evidence.add("cost", "stated");
    }
    evidence.add("latest", last).add("recent", std::span<const Evidence>(recent));

    const std::string code = kind.name + ".overdraw";
    signals.emit({.player = player_id,
                  .code = code,
                  .score = score.score,
                  .confidence = score.confidence,
                  .evidence = std::move(evidence)});
    host().count("signals." + code);
}

}  // namespace arbiter::lagpool
