// Input traces as operators have them: one action per row, in CSV or JSON Lines, with the
// column set of docs/recorded-matches.md ("The column set"). `arbiter import` turns them
// into event files; the simulator's human rhythm model reads the same rows.
//
// Required: source, game, player, t_seconds, action_kind.
// Optional: x, y, z, target_x, target_y, target_z, target_player, tick, claimed_tick,
//           repeat, profile, yaw, pitch, aim_x, aim_y, aim_relative.
//
// Every bad row is reported as "FILE:LINE: what was wrong"; the reader stops at the first
// one or goes on and collects them all, as the caller asks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::tools {

enum class TraceFormat { csv, jsonl };
const char* to_string(TraceFormat format);
// "csv", "jsonl" (or "ndjson"); nullopt for anything else.
std::optional<TraceFormat> trace_format_from_name(std::string_view name);
// From a file's extension (.csv, .jsonl, .ndjson); nullopt when it does not tell.
std::optional<TraceFormat> trace_format_from_path(const std::filesystem::path& path);

enum class OnBadRow { stop, skip };

// The columns, in the order of the documentation.
inline constexpr const char* kRequiredColumns[] = {"source", "game", "player", "t_seconds",
                                                   "action_kind"};
inline constexpr const char* kOptionalColumns[] = {"x",
                                                   "y",
                                                   "z",
                                                   "target_x",
                                                   "target_y",
                                                   "target_z",
                                                   "target_player",
                                                   "tick",
                                                   "claimed_tick",
                                                   "repeat",
                                                   "profile",
                                                   "yaw",
                                                   "pitch",
                                                   "aim_x",
                                                   "aim_y",
                                                   "aim_relative"};

// Bounds of the look and aim columns (docs/recorded-matches.md): a yaw beyond a million
// radians has lost its precision, a pitch is within [-pi/2, pi/2], and an aim point beyond
// ten million of the game's units is not one a float keeps to the unit.
inline constexpr double kMaxYawRadians = 1e6;
inline constexpr double kMaxAimUnits = 1e7;

struct TraceRow {
    uint64_t line = 0;  // in the input file, from 1
    std::string source, game, player, action_kind;
    double t_seconds = 0;
    std::optional<double> x, y, z;
    std::optional<double> target_x, target_y, target_z;
    std::optional<std::string> target_player;
    std::optional<uint64_t> tick, claimed_tick;
    std::optional<bool> repeat;
    std::optional<std::string> profile;
    std::optional<double> yaw, pitch;    // radians; together (schema 1.2's Look)
    std::optional<double> aim_x, aim_y;  // the game's units; together (AimPoint)
    std::optional<bool> aim_relative;    // only with aim_x and aim_y
};

struct RowProblem {
    uint64_t line = 0;  // 0: the file as a whole
    std::string what;
    // "FILE:LINE: what" (or "FILE: what").
    std::string str(const std::string& file) const;
};

struct TraceReadResult {
    std::vector<TraceRow> rows;        // the good rows, in file order
    std::vector<RowProblem> problems;  // bad rows, and problems of the whole file
    uint64_t rows_seen = 0;            // data rows, good and bad
    bool fatal = false;                // the file cannot be read at all (no rows are valid)
};

// Reads a whole trace file. With OnBadRow::stop the reading ends at the first problem.
// Never throws for bad input: an unreadable file is a fatal problem.
TraceReadResult read_trace_rows(const std::filesystem::path& path, TraceFormat format,
                                OnBadRow on_bad_row);
// The same for text in memory.
TraceReadResult parse_trace_rows(std::string_view text, TraceFormat format, OnBadRow on_bad_row);

}  // namespace arbiter::tools
