// `arbiter simulate`: a synthetic match as an event file, with the ground truth of every
// player in a sidecar file. Seeded and deterministic: the same options (and the same
// human rhythm model) give the same bytes.
//
// The match is written tick by tick as it is simulated, so memory stays bounded by one
// tick's events and the players' state: 10,000 players and millions of events are fine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/tools/human_rhythm.hpp"

namespace arbiter::tools {

struct PlayerMix {
    std::string profile;
    uint32_t count = 0;
};

// "honest=8,speed_hack=1,...": throws std::invalid_argument naming the bad part.
std::vector<PlayerMix> parse_player_mix(std::string_view text);

struct SimulationOptions {
    std::filesystem::path out;
    std::filesystem::path truth;  // empty: default_truth_path(out)
    uint64_t seed = 1;
    double duration_s = 60.0;
    double tick_rate_hz = 20.0;
    std::vector<PlayerMix> players;
    std::string relay_id = "sim-relay";
    uint64_t match_id = 1;
    std::string accounts;  // NAME: accounts NAME-000001, ...; "": the run's own (simulated_account)
    size_t batch_events = 4096;
    host::Progress* progress = nullptr;  // told the seconds of play simulated; none: silent
};

inline constexpr uint32_t kMaxSimulatedPlayers = 1'000'000;
inline constexpr double kMaxDurationS = 24 * 3600.0;
inline constexpr size_t kMaxBatchEvents = 65536;

struct SimulationSummary {
    std::filesystem::path out, truth;
    uint32_t players = 0;
    uint64_t ticks = 0;
    uint64_t events = 0;
    uint64_t batches = 0;
    uint64_t bytes = 0;
    uint64_t dropped_after_end = 0;  // packets still in flight when the match closed
    std::vector<std::pair<std::string, uint64_t>>
        events_by_kind;  // schema names, e.g. "PositionUpdate"
};

// The account of player `id` (1, 2, ...): sim-SEED-MATCH-000001@RELAY, so that separate runs
// (another seed, match or relay) never merge into one account in a store, and the same
// options give the same accounts; or NAME-000001 with `accounts` = NAME, for the same
// people in several runs (one person on two relays, say).
std::string simulated_account(const SimulationOptions& options, uint32_t id);

// Checks the options; throws std::invalid_argument naming what is wrong.
void check_options(const SimulationOptions& options);
// Simulates and writes the match and its truth file (each under a temporary name, moved
// into place when complete). Throws std::invalid_argument for bad options and
// std::runtime_error when a file cannot be written.
SimulationSummary simulate(const SimulationOptions& options, const HumanRhythm& rhythm);

}  // namespace arbiter::tools
