// `arbiter import X.teehistorian OUT.arbev`: a finished teehistorian file (or one a server
// is still writing, as far as it goes) into an event file of one match
// (teehistorian_events.hpp says what becomes what; docs/games/ddnet.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "teehistorian_events.hpp"
#include "teehistorian_reader.hpp"

namespace arbiter::ddnet {

struct ThImportOptions {
    std::string relay_id = "import";
    host::Progress* progress = nullptr;
};

struct ThImportReport {
    bool header_ok = false;
    std::string header_problem;
    std::string header_json;
    std::vector<ThProblem> problems;  // damage, by offset
    uint64_t records = 0, bytes = 0;
    int32_t first_tick = -1, last_tick = -1;
    bool finished = false;  // the server's FINISH record was read
    ThEventCounts counts;
    uint64_t batches = 0;
    bool written = false;
};

// Reads `in`, writes `out` (under a temporary name, moved into place when complete). A file
// whose header cannot be read writes nothing; a damaged one writes what could be read, with
// the damage in problems. Throws std::invalid_argument for bad options and
// std::runtime_error when a file cannot be opened or written.
ThImportReport import_teehistorian(const std::filesystem::path& in,
                                   const std::filesystem::path& out,
                                   const ThImportOptions& options);

// True for a path ending in .teehistorian, or a file that starts with the teehistorian UUID.
bool looks_like_teehistorian(const std::filesystem::path& path);

}  // namespace arbiter::ddnet
