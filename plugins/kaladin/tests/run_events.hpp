// Helpers for the tests on recorded and simulated matches.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <arbiter/sdk/testing.hpp>

#include "kaladin_analyzer.hpp"

namespace arbiter::kaladin::test {

// One player of one match, with what kaladin said about them.
struct PlayerSignals {
    std::string game;  // MatchStart.game and .map, "source / map"
    std::vector<testing::RecordedSignal> signals;
};
using MatchPlayer = std::pair<uint64_t, uint32_t>;  // match id, player

// Runs every batch of an event file through kaladin in the in-process harness (the
// signal level, before any aggregation). Fails the test on a damaged file.
std::map<MatchPlayer, PlayerSignals> run_file(const std::filesystem::path& events,
                                              const std::vector<uint8_t>& baseline = {});

// Runs `command` (through the shell), returning its exit status; output into `output`.
int run_command(const std::string& command, std::string& output);

// A fresh folder under the build tree for one test.
std::filesystem::path work_dir(const std::string& name);

}  // namespace arbiter::kaladin::test
