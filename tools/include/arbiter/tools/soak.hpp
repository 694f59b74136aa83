// `arbiter soak`: the false-positive soak. Many simulated honest players, over several
// seeds and match lengths, through the configured plugins, with the share of them each
// check took to Monitor and to FlagForReview.
//
// Streamed: one match at a time is simulated into a file, evaluated by a host of its own,
// and deleted before the next, so memory and disk hold one match however many players the
// soak covers. The figures are the sum of the matches' evaluations.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arbiter/host/host.hpp"
#include "arbiter/tools/evaluate.hpp"
#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/simulate.hpp"

namespace arbiter::tools {

struct SoakOptions {
    uint32_t players = 10'000;  // honest players in all, over every match
    uint32_t match_players = 250;
    // A match holds at most this many player-seconds (its file about 2 KB each), so that a
    // two-hour match has fewer players than a ten-minute one and no file grows past ~1 GB.
    double max_player_seconds = 500'000;
    std::vector<double> durations_s{600, 1800, 3600, 7200};  // the matches take turns
    uint64_t seed = 1;           // the first match's; each next one's is one more
    std::vector<PlayerMix> mix;  // weights; empty: every honest profile alike
    double tick_rate_hz = 20.0;
    std::filesystem::path work_dir;  // where each match is written while it is evaluated
};

// One match of the soak, as planned.
struct SoakMatch {
    uint64_t seed = 0;
    double duration_s = 0;
    std::vector<PlayerMix> players;  // the mix's profiles, split by weight
    uint32_t total() const;
};

// Checks the options; throws std::invalid_argument naming what is wrong (a cheating
// profile in the mix among them: the soak is about honest players).
void check_options(const SoakOptions& options);

// The matches that cover options.players, in order: durations in turn, each with as many
// players as match_players and max_player_seconds allow, the last with what is left.
std::vector<SoakMatch> plan_soak(const SoakOptions& options);

// Told after each match: its plan, its evaluation, and how many are done.
using SoakListener =
    std::function<void(const SoakMatch&, const EvaluationReport&, size_t done, size_t of)>;

// Simulates, evaluates (with a fresh host from make_host each time) and deletes each
// match in turn, and returns the sum of the evaluations. Throws what simulate throws.
EvaluationReport soak(const SoakOptions& options, const HumanRhythm& rhythm,
                      const std::function<std::unique_ptr<host::Host>()>& make_host,
                      const SoakListener& listener = {});

}  // namespace arbiter::tools
