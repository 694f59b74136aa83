// plugins/reference: validation checks (model class: validation). See
// docs/detection.md, "plugins/reference": movement (speed over a window of relay time, its
// change, sustained speed, teleports, airborne too long, below the terrain), hits, items, stats,
// sessions, the relay clock and aim (docs/aim.md), with the lag tolerance the design asks for.
//
// Each area has two files of its own: its checks as pure functions (movement.hpp, hits.hpp,
// ...) and the area itself (movement_area.hpp, hits_area.hpp, ...): its settings, its state
// per player and per match, its event handlers and its sections of the saved state. This
// class keeps the matches and players, hands each event to the areas it concerns, and lays
// the areas' sections out in the state blob. What the areas share lives here too: each
// player's reports (reports.hpp) and the silences the relay saw from it (arrivals.hpp).
//
// It keeps nothing across matches, so the host may shard it by match (shard_by_match). The
// one check that spans matches, one account in two places, is the accounts plugin's, built
// from these sources (accounts_analyzer.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include <arbiter/sdk.hpp>

#include "aim_area.hpp"
#include "arrivals.hpp"
#include "clock_area.hpp"
#include "hits_area.hpp"
#include "items_area.hpp"
#include "lag.hpp"
#include "lazy.hpp"
#include "movement_area.hpp"
#include "reports.hpp"
#include "sessions_area.hpp"
#include "stats_area.hpp"

namespace arbiter::reference {

// The seven areas, as the config sets them up. Read all at once, so that a bad config changes
// nothing.
struct Areas {
    MovementArea movement;
    HitsArea hits;
    ItemsArea items;
    StatsArea stats;
    SessionsArea sessions;
    ClockArea clock;
    AimArea aim;

    explicit Areas(const ConfigTable& config);
};

class ReferenceAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "reference",
        .version = "0.1.0",
        .contact = "the Arbiter project (see its README)",
        .description =
            "validation checks: movement, hits, items, stats, sessions and the relay clock",
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
    // The areas most players never use (a positions-only match uses none of them) are made
    // at a player's first event of theirs, and its reports at its first signal.
    struct Player {
        Lazy<Reports> reports;
        // When the relay heard from the player: the silences lag leaves.
        Arrivals arrivals;
        MovementArea::Player movement;
        Lazy<HitsArea::Player> hits;
        Lazy<ItemsArea::Player> items;
        Lazy<StatsArea::Player> stats;
        ClockArea::Player clock;
        Lazy<AimArea::Player> aim;  // at the player's first look or aim (schema 1.2)
    };
    using Players = std::unordered_map<uint32_t, Player>;
    struct Match {
        Players players;
        ClockArea::Match clock;
        StatsArea::Match stats;
        SessionsArea::Match sessions;
    };

    void on_event(Match& match, const fb::Event& event, Signals& signals);
    void on_hit(Match& match, Player& attacker, const fb::Event& event, Signals& signals);
    void on_match_end_event(Match& match, const fb::Event& event, Signals& signals);
    // Batches of the match were lost (schema 1.1): nothing measures across the gap.
    void on_input_lost(Match& match);
    void forget_old(Player& player, int64_t now_us) const;
    static LagSeen lag_seen(const Player& player);

    Areas areas_;
    std::map<MatchKey, Match> matches_;
    size_t last_blob_bytes_ = 0;  // of the state last saved or restored: save_state's guess
};

}  // namespace arbiter::reference
