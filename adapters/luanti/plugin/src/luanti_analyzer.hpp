// adapters/luanti/plugin: the checks that know Luanti's rules (model class: validation).
//
// The Luanti mod and bridge (adapters/luanti/) report every server step of every player,
// and what the server allows that player ("luanti.allowance"). Each check compares the
// player with their own allowance: luanti.speed (speed.hpp), luanti.fly (fly.hpp) and
// luanti.noclip (noclip.hpp). The engine's own anti-cheat reports ("luanti.cheat") are
// counted and kept as evidence, never scored (engine_reports.hpp).
//
// Only relay time measures. A silence in a player's updates longer than max_gap_s, lost
// input, a join, a teleport the server made, and a change of allowance restart every
// measurement; an attached player (moved by the engine) is not measured. A player whose
// allowance the plugin has not heard is not judged (counted as positions_without_allowance):
// the mod sends it at the join, and judging by a guessed one would flag a player the
// server lets fly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <arbiter/sdk.hpp>

#include "allowance.hpp"
#include "engine_reports.hpp"
#include "fly.hpp"
#include "noclip.hpp"
#include "settings.hpp"
#include "speed.hpp"

namespace arbiter::luanti {

class LuantiAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "luanti",
        .version = "0.1.0",
        .contact = "https://github.com/arbiter-anticheat/arbiter",
        .description =
            "Luanti's movement rules against each player's allowance: speed, fly, noclip",
        .model_class = ModelClass::validation,
        // Everything is per player of a match.
        .shard_by_match = true,
    };

    explicit LuantiAnalyzer(const Context& context);

    void on_batch(const Batch& batch, Signals& signals) override;
    void on_match_end(const MatchKey& match, Signals& signals);
    void configure(const Context& context);
    std::vector<uint8_t> save_state();                  // luanti_state.cpp
    void restore_state(std::span<const uint8_t> blob);  // luanti_state.cpp

  private:
    struct Position {
        double x = 0, y = 0, z = 0;
    };
    struct PlayerState {
        std::optional<Allowance> allowance;
        uint64_t steps = 0;  // positions heard: the noclip check's step numbers
        std::optional<Position> position;
        int64_t position_us = 0;
        SpeedTrack speed;
        FlyTrack fly;
        NoclipTrack noclip;
        std::string inside_node;  // the node of the latest "luanti.inside", for the evidence
        // The highest weighted score reported per check: a check reports again only when
        // its score rises.
        std::optional<double> speed_reported, fly_reported, noclip_reported;
        EngineReports engine;
    };
    struct MatchState {
        // Hashed by player id; saved in id order (luanti_state.cpp).
        std::unordered_map<uint32_t, PlayerState> players;
    };

    void on_event(MatchState& match, const fb::Event& event, Signals& signals);
    void on_position(uint32_t id, PlayerState& player, int64_t t_us,
                     const fb::PositionUpdate& update, Signals& signals);
    void on_extension(uint32_t id, PlayerState& player, int64_t t_us,
                      const fb::Extension& extension, Signals& signals);
    void on_allowance(uint32_t id, PlayerState& player, std::span<const uint8_t> data);
    void on_inside(uint32_t id, PlayerState& player, int64_t t_us, std::span<const uint8_t> data,
                   Signals& signals);
    void on_cheat(PlayerState& player, std::span<const uint8_t> data);
    // Forgets every measurement in progress (not the allowance, the reports or the
    // engine's counts): the next position starts afresh.
    static void restart_measurements(PlayerState& player);

    // Emits the signal when its weighted score rises past what was reported.
    void report(uint32_t id, std::string_view code, double score, double confidence,
                std::optional<double>& reported, Evidence evidence, const PlayerState& player,
                Signals& signals);

    LuantiSettings settings_;
    std::map<MatchKey, MatchState> matches_;
};

}  // namespace arbiter::luanti
