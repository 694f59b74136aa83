// plugins/kaladin: input-timing behaviour (model class: behavioural). See docs/detection.md,
// "plugins/kaladin". It needs no game state: only orders, stimuli and round trips.
//
// Per player and match: distinct inputs (inputs.hpp), their sustained rate (rate.hpp),
// the trimmed CV (cv.hpp) and entropy (entropy.hpp) of their intervals over long windows,
// relay-timed reactions (reaction.hpp), and the spread of aimed orders over a long
// session (precision.hpp), and view changes quantised to a step finer than any mouse's
// (quantum.hpp). Limits are the fixed defaults of settings.hpp, or,
// with a baseline file (baseline.hpp), the far tail of the player's rating tier; the
// trip-wires are fixed either way, set far past anything a human was measured to do. The
// precision check has no baseline metric yet: its limit is always the fixed default.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <arbiter/sdk.hpp>

#include "baseline.hpp"
#include "inputs.hpp"
#include "precision.hpp"
#include "quantum.hpp"
#include "reaction.hpp"
#include "settings.hpp"

namespace arbiter::kaladin {

// The checks, each with its own signal code.
enum class Check : uint8_t {
    rate = 0,
    cv = 1,
    entropy = 2,
    reaction = 3,
    precision = 4,
    quantum = 5,  // view changes quantised to one tiny step (schema 1.2's look)
};
inline constexpr size_t kCheckCount = 6;
const char* check_code(Check check);

// The limit a check compares against, and where it came from, for the evidence.
struct Limit {
    double value = 0;
    bool from_baseline = false;
    std::string tier;       // the baseline tier used ("*" is every tier pooled)
    double percentile = 0;  // of that tier
    uint64_t samples = 0;   // the tier's sample size for this metric
};

class KaladinAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "kaladin",
        .version = "0.1.0",
        .contact = "https://github.com/arbiter-anticheat/arbiter",
        .description =
            "input timing: sustained rate, metronomic intervals, entropy, relay-timed reactions, "
            "fatigue-free precision",
        .model_class = ModelClass::behavioural,
        // Every window and pair is per player per match; baselines are gathered per match
        // too and merged at baseline_end, so matches may go to different instances.
        .shard_by_match = true,
    };

    explicit KaladinAnalyzer(const Context& context);

    void on_batch(const Batch& batch, Signals& signals) override;
    void on_match_end(const MatchKey& match, Signals& signals);
    void configure(const Context& context);
    std::vector<uint8_t> save_state();                  // kaladin_state.cpp
    void restore_state(std::span<const uint8_t> blob);  // kaladin_state.cpp
    void baseline_begin();
    std::vector<uint8_t> baseline_end();

    // The limit of a check for a player of `tier` (exposed for tests).
    Limit limit(Check check, const std::string& tier, double tick_rate_hz) const;
    const std::optional<BaselineFile>& baseline() const { return baseline_; }

  private:
    struct PlayerState {
        // Precision: the player's positions as received, their recent round trips, and the
        // spread of their aimed orders block by block. The positions come first: of the
        // record, a position update (most of a relay's events) reads the first 24 bytes.
        PositionTrack positions;
        RoundTrip rtt;
        PrecisionTracker precision;
        std::string tier;
        InputStream inputs;
        std::optional<int64_t> first_input_us;
        uint32_t since_window = 0;  // distinct inputs since the last CV window
        ReactionTracker reactions;
        // The view's yaw changes (schema 1.2), for the quantised-step check.
        QuantumTracker quantum;
        // The player's extremes, for a baseline.
        double peak_rate = -1;  // over full windows only
        double min_cv = -1, min_entropy = -1;
        // The strongest score reported per check; a check reports again only when its
        // score rises, so a steady bot does not flood the host. Trip-wires fire once.
        std::array<double, kCheckCount> reported{-1, -1, -1, -1, -1, -1};
        std::array<bool, kCheckCount> tripped{};
    };
    struct MatchState {
        double tick_rate_hz = 0;
        int64_t started_unix_us = 0;
        // Hashed: every position looks its player up, and a tree of 100,000 players is a
        // dozen cache misses deep. Walked in id order (in_key_order) wherever the order
        // shows: the saved state, the match-end reports, the baseline.
        std::unordered_map<uint32_t, PlayerState> players;
    };

    PlayerState& player(MatchState& match, uint32_t id);
    void on_event(MatchState& match, const fb::Event& event, Signals& signals);
    // Batches of the match were lost (schema 1.1): no interval spans the gap.
    void on_input_lost(MatchState& match);
    void on_input(MatchState& match, uint32_t id, PlayerState& p, Signals& signals);
    void check_reactions(uint32_t id, PlayerState& p, Signals& signals);
    void on_aim(MatchState& match, uint32_t id, PlayerState& p, const fb::Order& order,
                int64_t t_us, Signals& signals);
    void check_precision(uint32_t id, PlayerState& p, Signals& signals);
    // A look (schema 1.2) of a position, order or hit claim: the quantised-step check.
    void on_look(uint32_t id, PlayerState& p, const fb::Look& look, Signals& signals);
    void report(uint32_t id, PlayerState& p, Check check, double score, bool tripwire,
                const Limit& limit, Evidence evidence, Signals& signals);
    void fold_into_baseline(const MatchState& match);
    static void restore_precision(StateReader& in, PlayerState& p);  // kaladin_state.cpp
    void restore_quantum(StateReader& in, PlayerState& p) const;     // kaladin_state.cpp
    Evidence limit_evidence(const Limit& limit) const;

    Settings settings_;
    std::optional<BaselineFile> baseline_;
    std::optional<BaselineCollector> collecting_;
    std::map<MatchKey, MatchState> matches_;
};

}  // namespace arbiter::kaladin
