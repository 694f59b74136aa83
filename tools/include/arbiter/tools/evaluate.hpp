// `arbiter evaluate`: labelled matches through the configured plugins, and how well the
// detection did, per profile: how many players reached each action, the recall at
// FlagForReview (cheaters) and the false-positive rate (honest players).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "arbiter/host/host.hpp"
#include "arbiter/host/progress.hpp"
#include "arbiter/tools/truth.hpp"

namespace arbiter::tools {

struct ProfileResult {
    std::string profile;
    bool cheater = false;
    uint64_t players = 0;
    // Players whose highest action in the match was Clear, Monitor, FlagForReview,
    // ShadowRestrict (indexed by host::Action).
    std::array<uint64_t, 4> actions{};

    uint64_t at_least(host::Action action) const;
    // Cheaters: the share at FlagForReview or above. Honest players: the false-positive
    // rates at FlagForReview or above, and at Monitor or above. Players == 0: 0.
    double share_at_least(host::Action action) const;
};

// Honest players that reached an action, counted under each check their assessment holds.
struct CheckCount {
    uint64_t monitor_or_above = 0;
    uint64_t flag_or_above = 0;
};

// One labelled player: its label and the highest action the host gave it.
struct PlayerResult {
    host::PlayerKey player;
    std::string account;  // as the truth file names it
    std::string profile;
    bool cheater = false;
    bool seen = true;  // false: the host never assessed it (counted as Clear)
    host::Action action = host::Action::clear;
    double score = 0.0;  // the assessment's combined score
    // The strongest checks of its assessment, strongest first: "plugin:code 0.90".
    std::vector<std::string> top_checks;
};

struct EvaluationReport {
    std::vector<ProfileResult> profiles;  // honest first, then in the simulator's order
    ProfileResult all_cheaters{"all cheaters", true};
    ProfileResult all_honest{"all honest", false};
    // The honest players at Monitor or above, by the checks in their assessments ("plugin
    // code"; a player counts once under each): where the false positives come from.
    std::map<std::string, CheckCount> honest_by_check;
    // Every labelled player, by relay, match and player id (`arbiter evaluate --players`).
    std::vector<PlayerResult> players;
    // The input as read.
    uint64_t files = 0, unreadable_files = 0, batches = 0, events = 0, damaged = 0, refused = 0;
    uint64_t unlabelled = 0;            // assessed players that no truth file names
    uint64_t missing = 0;               // labelled players the host never saw (counted as Clear)
    std::vector<std::string> problems;  // what went wrong with the input, one line each
};

// Truth for a list of match files: the named truth files, or MATCH.truth.json beside each
// match file. Throws TruthError when one cannot be read or two label the same match.
Truth load_truths(const std::vector<std::filesystem::path>& match_files,
                  const std::vector<std::filesystem::path>& truth_files);

// Runs the files through the host (then closes it) and scores its assessments.
// `progress` is told the bytes read; none: silent.
EvaluationReport evaluate(host::Host& host, const std::vector<std::filesystem::path>& match_files,
                          const Truth& truth, host::Progress* progress = nullptr);

// Adds `from` to `into`: the same profiles' counts summed, new ones appended in the
// simulator's order, the input counters summed and the problems appended.
void merge(EvaluationReport& into, const EvaluationReport& from);

void print_report(std::ostream& out, const EvaluationReport& report);
// A line per labelled player: relay, match, player, account, label, truth, action, score
// and its strongest checks (for a data set of one player per recording: a line per file).
void print_players(std::ostream& out, const EvaluationReport& report);
// One JSON object: {"profiles": [...], "all_cheaters": {...}, "all_honest": {...},
// "honest_by_check": [...], "input": {...}}, and with `players` "players": [...] too.
std::string report_json(const EvaluationReport& report, bool players = false);

}  // namespace arbiter::tools
