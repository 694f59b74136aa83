// The ground truth of labelled matches: who each player is and whether they cheat.
// `arbiter simulate` writes it beside the match (MATCH.truth.json), `arbiter import
// --labels` writes it for imported traces, `arbiter evaluate` reads it.
//
//   {
//     "format": "arbiter-truth", "version": 1,
//     "generator": {"command": "simulate", "seed": "42", ...},
//     "matches": [
//       {"relay_id": "sim", "match_id": 1,
//        "players": [{"player": 1, "account": "sim-42-1-000001@sim", "profile": "honest",
//                     "cheater": false, "params": {"rtt_ms": 48.2}}, ...]}
//     ]
//   }
//
// docs/recorded-matches.md describes every field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace arbiter::tools {

struct TruthPlayer {
    uint32_t player = 0;
    std::string account;
    std::string profile;
    bool cheater = false;
    // The profile's parameters as drawn for this player (speeds, periods...), for reading.
    std::vector<std::pair<std::string, double>> params;
};

struct TruthMatch {
    std::string relay_id;
    uint64_t match_id = 0;
    std::string source, game;  // import: the (source, game) pair the match came from
    std::vector<TruthPlayer> players;
};

struct Truth {
    std::vector<std::pair<std::string, std::string>> generator;  // how it was made, for reading
    std::vector<TruthMatch> matches;
};

// A truth file that cannot be used: "FILE: what".
class TruthError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Writes the file under a temporary name and moves it into place; throws std::runtime_error.
void write_truth(const std::filesystem::path& path, const Truth& truth);
// Reads and checks a truth file; throws TruthError naming the file and what was wrong.
Truth read_truth(const std::filesystem::path& path);

}  // namespace arbiter::tools
