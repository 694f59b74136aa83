// `arbiter import`: input traces operators already have (CSV or JSON Lines, the column set
// of trace_rows.hpp) into an event file, one match per (source, game) pair.
//
// A bad row is reported as "FILE:LINE: what was wrong". With OnBadRow::stop nothing is
// written when any row is bad; with OnBadRow::skip the bad rows are left out, each
// reported and counted. The event file (and the labels file) are written under temporary
// names and moved into place only when complete, so a half-valid file is never left.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/tools/trace_rows.hpp"

namespace arbiter::tools {

struct ImportOptions {
    TraceFormat format = TraceFormat::csv;
    OnBadRow on_bad_row = OnBadRow::stop;
    double tick_rate_hz = 20.0;       // relay ticks per second, for rows without a tick
    std::string relay_id = "import";  // the relay id of every imported match
    size_t batch_events = 4096;
    std::filesystem::path labels;  // a truth file to write too; empty for none
    host::Progress* progress = nullptr;  // told the rows written; none: silent
};

struct ImportReport {
    std::vector<RowProblem> problems;  // by line
    bool written = false;              // the event file (and labels) were moved into place
    uint64_t rows_seen = 0;
    uint64_t rows_imported = 0;
    uint64_t rows_skipped = 0;
    uint64_t matches = 0;
    uint64_t players = 0;
    uint64_t events = 0;
    uint64_t orders = 0;
    uint64_t positions = 0;
    uint64_t batches = 0;
};

// Checks the options; throws std::invalid_argument naming what is wrong.
void check_options(const ImportOptions& options);
// Reads `in`, writes `out` (and options.labels). Bad input is reported in the result;
// throws std::invalid_argument for bad options and std::runtime_error when an output
// cannot be written.
ImportReport import_traces(const std::filesystem::path& in, const std::filesystem::path& out,
                           const ImportOptions& options);

}  // namespace arbiter::tools
