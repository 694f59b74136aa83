#include "settings.hpp"

#include <algorithm>

namespace arbiter::lagpool {

namespace {

// The default tolerance of every kind: the relay's receive times wander within a tick, so
// a player at exactly the game's limit sometimes looks a little faster; with some
// tolerance the budget of such a player grows instead of hovering at empty.
constexpr double kDefaultTolerance = 1.2;

// Kind names become signal codes ("<kind>.overdraw") and metric names, whose characters
// the host restricts.
bool valid_kind_name(const std::string& name) {
    if (name.empty() || name.size() > 32) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

std::vector<KindSettings> default_kinds() {
    KindSettings dig;
    dig.name = "dig";
    dig.cost = CostModel::fixed;
    dig.seconds = 0.15;
    dig.tolerance = kDefaultTolerance;
    KindSettings movement;
    movement.name = std::string(kMovementKind);
    movement.cost = CostModel::distance;
    movement.tolerance = movement.movement.tolerance;
    return {dig, movement};
}

KindSettings parse_kind(const std::string& name, const ConfigTable& table) {
    if (!valid_kind_name(name))
        throw ConfigError(table.path(), "a kind's name is 1 to 32 of [a-z0-9_]");
    KindSettings kind;
    kind.name = name;
    const bool is_movement = name == kMovementKind;
    const std::string cost = table.string("cost", is_movement ? "distance" : "fixed");
    const std::string cost_key = table.path() + ".cost";
    if (cost == "distance") {
        if (!is_movement)
            throw ConfigError(
                cost_key,
                "\"distance\" is for the kind \"movement\" alone (position updates feed it); "
                "an order kind costs \"fixed\"");
        kind.cost = CostModel::distance;
        MovementLimits& m = kind.movement;
        m.max_walk_speed = table.number("max_walk_speed", m.max_walk_speed, Range::positive());
        m.max_jump_speed = table.number("max_jump_speed", m.max_jump_speed, Range::positive());
        m.tolerance = table.number("tolerance", m.tolerance, Range::between(1.0, 10.0));
        kind.tolerance = m.tolerance;
    } else if (cost == "fixed") {
        if (is_movement)
            throw ConfigError(
                cost_key,
                "the kind \"movement\" is fed by position updates and costs \"distance\"");
        kind.cost = CostModel::fixed;
        if (!table.has("seconds"))
            throw ConfigError(table.path() + ".seconds", "required for cost = \"fixed\"");
        kind.seconds = table.number("seconds", 0.0, {0.0, 3600.0, true});
        kind.tolerance = table.number("tolerance", kDefaultTolerance, Range::between(1.0, 10.0));
    } else if (cost == "stated") {
        if (is_movement)
            throw ConfigError(
                cost_key,
                "the kind \"movement\" is fed by position updates and costs \"distance\"");
        // The relay states each action's time: there is no time per action to set.
        kind.cost = CostModel::stated;
        kind.tolerance = table.number("tolerance", kDefaultTolerance, Range::between(1.0, 10.0));
    } else {
        throw ConfigError(cost_key,
                          "expected \"distance\", \"fixed\" or \"stated\", got \"" + cost + "\"");
    }
    return kind;
}

}  // namespace

const KindSettings* LagpoolSettings::find(std::string_view name) const {
    for (const KindSettings& kind : kinds)
        if (kind.name == name) return &kind;
    return nullptr;
}

LagpoolSettings LagpoolSettings::parse(const ConfigTable& config) {
    LagpoolSettings s;
    s.min_capacity_s = config.number("min_capacity_s", s.min_capacity_s, {0.0, 3600.0, true});
    s.lag_factor = config.number("lag_factor", s.lag_factor, Range::between(1.0, 10.0));
    s.lag_halving_s = config.number("lag_halving_s", s.lag_halving_s, {0.0, 86400.0, true});
    s.teleport_grace_s =
        config.number("teleport_grace_s", s.teleport_grace_s, Range::between(0.0, 600.0));
    OverdrawSettings& o = s.overdraw;
    o.window_s = config.number("window_s", o.window_s, Range::between(1.0, 3600.0));
    o.burst_s = config.number("burst_s", o.burst_s, Range::between(0.0, 10.0));
    // At least 2: one failed grab never scores.
    o.min_episodes = config.integer("min_episodes", o.min_episodes, Range::between(2, 100000));
    o.confident_episodes =
        config.integer("confident_episodes", o.confident_episodes, Range::between(1, 100000));
    o.overdraw_scale_s = config.number("overdraw_scale_s", o.overdraw_scale_s, {0.0, 3600.0, true});

    if (config.has("kinds")) {
        const ConfigTable kinds = config.table("kinds");
        const std::vector<std::string> names = kinds.keys();  // sorted
        if (names.empty())
            throw ConfigError(
                "kinds", "names no kind; leave the table out for the defaults (movement, dig)");
        for (const std::string& name : names)
            s.kinds.push_back(parse_kind(name, kinds.table(name)));
    } else {
        s.kinds = default_kinds();
    }
    config.reject_unknown_keys();
    return s;
}

}  // namespace arbiter::lagpool
