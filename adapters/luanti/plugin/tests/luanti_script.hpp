// Builds Luanti matches as the bridge sends them: one batch per server step (0.09 s),
// each player's PositionUpdate, then a "luanti.inside" where the body is in a walkable
// node; the join and the allowance before the first step. Deterministic.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

namespace luanti_test {

namespace build = arbiter::build;

inline constexpr int64_t kSecond = 1'000'000;
inline constexpr int64_t kStepUs = 90'000;  // Luanti's dedicated_server_step
inline constexpr double kStepS = 0.09;

// What the server saw of a player on one step.
struct Step {
    double x = 0, y = 0, z = 0;  // feet; z up
    bool on_ground = true;       // supported
    bool inside = false;         // feet or head in a walkable node
    bool teleport = false;       // the server put the player there
    bool silent = false;         // no update this step (lag, a lost packet)
};

struct Player {
    uint32_t id = 1;
    std::string name = "player";
    std::string allowance = "{}";  // the JSON the mod sends at the join; "" sends none
    std::function<Step(double t_s)> path = [](double) { return Step{}; };
    // Extensions sent on the step at or after a relay time: {t_us, type, JSON}.
    struct Extra {
        int64_t t_us;
        std::string type;
        std::string json;
    };
    std::vector<Extra> extras{};
};

inline build::Extension extension(const std::string& type, const std::string& json) {
    return build::Extension{.type_name = type,
                            .data = std::vector<uint8_t>(json.begin(), json.end())};
}

// The match: MatchStart, the joins and allowances, then one batch per step up to length_us,
// then MatchEnd. Player ids ascend (the server writes its players in turn within a step).
inline std::vector<std::vector<uint8_t>> luanti_match(const std::vector<Player>& players,
                                                      int64_t length_us,
                                                      const std::string& relay = "luanti-relay",
                                                      uint64_t match_id = 1) {
    arbiter::BatchBuilder builder(relay, match_id);
    std::vector<std::vector<uint8_t>> batches;
    builder.add(0, 0, 0,
                build::MatchStart{
                    .game = "luanti", .map = "world", .rules = "survival", .tick_rate_hz = 11.1f});
    // In relay-time order, as ingest requires: the joins, then the allowances.
    for (const Player& p : players) {
        build::PlayerJoin join;
        join.account_id = p.name;
        builder.add(1000 + p.id, 0, p.id, join);
    }
    for (const Player& p : players)
        if (!p.allowance.empty())
            builder.add(2000 + p.id, 0, p.id, extension("luanti.allowance", p.allowance));
    batches.push_back(builder.finish());
    std::vector<size_t> next_extra(players.size(), 0);
    uint64_t tick = 1;
    for (int64_t t = kStepUs; t <= length_us; t += kStepUs, ++tick) {
        for (size_t i = 0; i < players.size(); ++i) {
            const Player& p = players[i];
            const int64_t at = t + p.id;  // the server writes its players in turn
            while (next_extra[i] < p.extras.size() && p.extras[next_extra[i]].t_us <= at) {
                const auto& extra = p.extras[next_extra[i]++];
                builder.add(at, tick, p.id, extension(extra.type, extra.json));
            }
            const Step s = p.path(static_cast<double>(t) / 1e6);
            if (s.silent) continue;
            builder.add(
                at, tick, p.id,
                build::Position{.position = {static_cast<float>(s.x), static_cast<float>(s.y),
                                             static_cast<float>(s.z)},
                                .on_ground = s.on_ground,
                                .server_teleport = s.teleport});
            if (s.inside)
                builder.add(at, tick, p.id,
                            extension("luanti.inside", R"({"node":"default:stone"})"));
        }
        batches.push_back(builder.finish());
    }
    builder.add(length_us + kStepUs, tick, 0, build::MatchEnd{});
    batches.push_back(builder.finish());
    return batches;
}

// Walks at `speed` m/s round a square of side `side` metres, on the ground.
inline Step walking(double t_s, double speed, double side = 40.0) {
    const double along = std::fmod(speed * t_s, 4 * side);
    const int leg = static_cast<int>(along / side);
    const double d = along - leg * side;
    Step s;
    switch (leg) {
        case 0:
            s.x = d;
            break;
        case 1:
            s.x = side;
            s.y = d;
            break;
        case 2:
            s.x = side - d;
            s.y = side;
            break;
        default:
            s.y = side - d;
            break;
    }
    return s;
}

// Height of a jump at 6.5 m/s under 9.81 m/s^2, tau seconds after leaving the ground; 0
// once landed.
inline double jump_height(double tau) {
    const double z = 6.5 * tau - 0.5 * 9.81 * tau * tau;
    return tau > 0 && z > 0 ? z : 0.0;
}

}  // namespace luanti_test
