// plugins/reference: validation checks (model class: validation). See
// DETECTION.md, "plugins/reference". This release covers movement: speed over a
// window of relay time and teleports, with the lag tolerance the design asks for.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <arbiter/sdk.hpp>

#include "movement.hpp"

namespace arbiter::reference {

struct ReferenceSettings {
    MovementLimits movement;

    static ReferenceSettings parse(const ConfigTable& config);
};

class ReferenceAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "reference",
        .version = "0.1.0",
        .contact = "the Arbiter project (see its README)",
        .description = "validation checks: movement speed over relay-time windows, teleports",
        .model_class = ModelClass::validation,
        .shard_by_match = true,
    };

    explicit ReferenceAnalyzer(const Context& context);

    void on_batch(const Batch& batch, Signals& signals) override;
    void on_match_end(const MatchKey& match, Signals& signals);
    void configure(const Context& context);
    std::vector<uint8_t> save_state();
    void restore_state(std::span<const uint8_t> blob);

  private:
    // The strongest signal of a check not yet reported.
    struct Held {
        double score = 0;
        double confidence = 0;
        Evidence evidence;
    };
    struct Player {
        Track track;
        // The highest weighted score reported per check: a check reports again only when
        // its score rises by a step, so a sustained cheat does not flood the host...
        std::map<std::string, double> reported;
        // ...and a rise smaller than the step is held, and reported when the player
        // leaves or the match ends, so that the host still gets each check's maximum.
        std::map<std::string, Held> held;
    };
    using Players = std::unordered_map<uint32_t, Player>;

    void on_position(uint32_t player_id, Player& player, int64_t t_us,
                     const fb::PositionUpdate& update, Signals& signals);
    void report(Player& player, Signal signal, Signals& signals);
    void report_held(uint32_t player_id, Player& player, Signals& signals);
    void forget_old(Player& player, int64_t now_us) const;

    ReferenceSettings settings_;
    std::map<MatchKey, Players> matches_;
};

}  // namespace arbiter::reference
