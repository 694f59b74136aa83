// `arbiter import X.osr|FOLDER... OUT.arbev`: osu! replays into an event file, so that the
// replays a community server receives (or a labelled set of them) run through the plugins
// (docs/games/osu.md).
//
// One match, a player per replay (one replay: one player), all starting together: each
// replay's relay time 0 is its first cursor frame. What becomes what:
// - a replay's player joins at time 0 (the account is the player's name for one replay,
//   the replay's file, relative to the folder given, for several: one person's replays
//   played at once would otherwise be one account in many places) and leaves after its
//   last frame;
// - each cursor frame is a PositionUpdate at its time (relay tick = milliseconds: 1000 Hz);
//   the player stands still at (0, 0, 0), since osu! has no avatar, and the cursor is its
//   `aim` (event schema 1.2: a point of the playfield, in its pixels, not relative);
// - each key newly pressed (left: M1/K1, right: M2/K2) is an Order "key_press" with the
//   cursor as its `aim`, and as its target too (for plugins before schema 1.2: playfield
//   pixels as the unit, x and y on the ground plane, z 0);
// - time is the frames' own (the map's clock: 1.5 times the wall clock with DT/NC, 0.75
//   with HT). osu! stable's two placeholder frames are left out, and so are frames of a
//   negative delta (osu!'s own player skips them; the frames after one count from it), as
//   osu!'s LegacyScoreDecoder does; a frame earlier than the one before it is placed at
//   that one's time, so that relay time never goes back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "osr_reader.hpp"

namespace arbiter::osu {

struct OsrImportOptions {
    std::string relay_id = "osu";
    uint64_t match_id = 1;
    size_t batch_events = 4096;
    bool skip_bad_replays = false;  // false: one bad replay stops the import, nothing written
    // Labels of the replays (CSV with columns file, label, kind; kind honest or cheat; file
    // relative to the folder given), for `labels_out`. Empty: every replay is "honest".
    std::filesystem::path labels_csv;
    std::filesystem::path labels_out;  // a truth file to write too; empty for none
    host::Progress* progress = nullptr;
};

struct OsrInput {
    std::filesystem::path path;
    std::string name;  // relative to the folder given, or the path as given
};

struct OsrReplayReport {
    std::string name;                    // OsrInput::name
    std::optional<std::string> problem;  // why it was refused (OsrError's text)
    uint32_t player = 0;                 // 0: not imported
    std::string account, player_name, label = "honest";
    bool cheater = false;
    int32_t version = 0;
    uint32_t mods = 0;
    uint64_t frames = 0;        // read (the seed frame aside)
    uint64_t positions = 0;     // cursor frames imported
    uint64_t presses = 0;       // key presses imported (orders)
    uint64_t left_out = 0;      // placeholders and frames of a negative delta
    uint64_t held_back = 0;     // frames placed at the time of the one before (went back)
    int64_t first_time_ms = 0;  // the replay's time of relay time 0
    int64_t last_time_ms = 0;
    // circleguard's snaps (snaps.hpp) in the replay's frames, for a reviewer: times in the
    // replay's own clock, as circleguard gives them.
    std::vector<int64_t> snap_times_ms;
};

struct OsrImportReport {
    std::vector<OsrReplayReport> replays;
    std::vector<std::string> problems;  // of the whole import (labels), one line each
    bool written = false;
    uint64_t players = 0, refused = 0, events = 0, positions = 0, orders = 0, batches = 0;
};

// The replays named: files as given, folders searched (recursively) for .osr files, in
// name order. Throws std::runtime_error for a path that is neither, and for two replays of
// one name (a name is an account).
std::vector<OsrInput> list_replays(const std::vector<std::filesystem::path>& paths);

// The labels file: file -> (label, cheater). Throws std::runtime_error naming the line.
std::map<std::string, std::pair<std::string, bool>> read_labels_csv(
    const std::filesystem::path& csv);

// Reads the replays, writes `out` (and the labels) under temporary names, moved into place
// when complete. Throws std::invalid_argument for bad options, std::runtime_error when an
// output cannot be written or the labels cannot be used.
OsrImportReport import_replays(const std::vector<OsrInput>& inputs,
                               const std::filesystem::path& out, const OsrImportOptions& options);

// osu!'s mod acronyms for a replay's mod bits ("HD,DT"), for reports.
std::string mods_text(uint32_t mods);

}  // namespace arbiter::osu
