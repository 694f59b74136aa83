// plugins/lagpool: time budgets after Minetest's (Luanti's) LagPool (model class:
// validation). See docs/detection.md, "plugins/lagpool".
//
// Each player has one budget per kind of action (budget.hpp). Position updates charge
// the "movement" budget by distance over speed (cost.hpp), orders charge the budget of
// their kind by a fixed time per action, and StatChange events charge the budget named by
// their stat by the time the relay states (a dig's time, which depends on the node and the
// tool, as Luanti's server computes it); the relay's clock recharges every budget, and
// the relay's tick lag sets the capacity (server_lag.hpp). A failed grab outside a grace
// period is recorded (overdraw.hpp); the score of a budget grows with how often and by
// how much the player overdraws it over a window of relay time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <arbiter/sdk.hpp>

#include "budget.hpp"
#include "cost.hpp"
#include "kind_table.hpp"
#include "overdraw.hpp"
#include "server_lag.hpp"
#include "settings.hpp"

namespace arbiter::lagpool {

class LagpoolAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "lagpool",
        .version = "0.1.0",
        .contact = "https://github.com/arbiter-anticheat/arbiter",
        .description =
            "time budgets after Luanti's LagPool: movement and actions faster than the game allows",
        .model_class = ModelClass::validation,
        // Budgets and the lag estimate are per match.
        .shard_by_match = true,
    };

    explicit LagpoolAnalyzer(const Context& context);

    void on_batch(const Batch& batch, Signals& signals) override;
    void on_match_end(const MatchKey& match, Signals& signals);
    void configure(const Context& context);
    std::vector<uint8_t> save_state();                  // lagpool_state.cpp
    void restore_state(std::span<const uint8_t> blob);  // lagpool_state.cpp

  private:
    // One budget of one player.
    struct KindState {
        Budget budget{0.0};
        int64_t updated_us = 0;  // relay time the budget was last brought forward to
        int64_t reset_us = 0;    // the last join or server teleport: the grace runs from it
        OverdrawWindow overdraws;
        // The highest weighted score reported: a check reports again only when its score
        // rises, so a sustained cheat does not flood the host.
        std::optional<double> reported;
    };
    struct PlayerState {
        KindTable<KindState> kinds;
        std::optional<Vec3> position;  // the last position, where movement is measured from
        // The kinds_generation_ the kinds were last brought in line with the config at (0:
        // never, as after a restore): player_state compares kinds by name only when it
        // differs, not at every event.
        uint64_t kinds_of = 0;
    };
    struct MatchState {
        ServerLag lag;
        // Hashed: every position looks its player up, and a tree of 100,000 players is a
        // dozen cache misses deep. Saved in id order (lagpool_state.cpp).
        std::unordered_map<uint32_t, PlayerState> players;
    };
    // What a charge was for, for the evidence.
    struct Charge {
        double cost_s = 0;
        std::optional<MovementCost> movement;
        std::optional<double> stated_s;  // the time the relay stated ("stated" kinds)
        Vec3 from, to;
    };

    double capacity_at(const MatchState& match, int64_t t_us) const;
    KindState fresh_kind(const MatchState& match, int64_t t_us) const;
    // Recharges a budget by the relay time since it was last brought forward, up to the
    // capacity at t_us, and returns that capacity.
    double bring_forward(const MatchState& match, KindState& kind, int64_t t_us) const;
    void start_session(MatchState& match, uint32_t player_id, int64_t t_us);
    // Batches of the match were lost (schema 1.1): nothing is charged across the gap.
    void on_input_lost(MatchState& match, int64_t t_us);
    void on_event(MatchState& match, const fb::Event& event, Signals& signals);
    PlayerState& player_state(MatchState& match, uint32_t player_id, int64_t t_us);
    void on_position(MatchState& match, uint32_t player_id, int64_t t_us,
                     const fb::PositionUpdate& update, Signals& signals);
    void on_order(MatchState& match, uint32_t player_id, int64_t t_us, const fb::Order& order,
                  Signals& signals);
    void on_stat(MatchState& match, uint32_t player_id, int64_t t_us, const fb::StatChange& stat,
                 Signals& signals);
    void charge(MatchState& match, uint32_t player_id, const KindSettings& kind, KindState& state,
                int64_t t_us, const Charge& what, Signals& signals);
    void report(uint32_t player_id, const KindSettings& kind, KindState& state,
                const MatchState& match, int64_t t_us, const Overdraw& latest, const Charge& what,
                Signals& signals);

    LagpoolSettings settings_;
    uint64_t kinds_generation_ = 1;  // one more at each configure
    std::map<MatchKey, MatchState> matches_;
};

}  // namespace arbiter::lagpool
