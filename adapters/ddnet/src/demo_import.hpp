// `arbiter import X.demo OUT.arbev`: a DDNet demo into an event file, one match, so that
// an operator can run a reported player's demo through the plugins (docs/games/ddnet.md).
//
// Units: one tile (32 game units) is one metre; Arbiter's x is the game's x and its z is
// up, the game's y turned over (x = X/32, y = 0, z = -Y/32). Relay time is the demo's tick
// at 50 ticks a second, from its first tick.
//
// What becomes what:
// - a player (a ClientInfo item) joins when first seen, with its name as the account, and
//   leaves when its item goes; a name seen again rejoins as the same player (reconnect);
// - a character's state is taken when the server computed it anew (its dead-reckoning
//   tick changes): a PositionUpdate at that tick, with the velocity; a character that
//   appears (spawn, respawn, into view again after being out of it), one killed since it
//   was last seen, and one that moved further than DDNet's physics moves a tee in the
//   ticks between (a teleporter) are marked `server_teleport`;
// - the inputs that show in a character's state become Orders at its tick: "direction"
//   (the left/right key changed), "jump" (a ground or air jump), "hook" (hook thrown),
//   "fire" (an attack), "weapon" (weapon switched), "aim" (the aim moved; an aim that
//   keeps moving from one state to the next is a `repeat`, so that a mouse in motion is
//   one input, not 25 a second). An order's target is the aim target: a point along the
//   aim (the tee's own target when the server sends DDNet's character item, else one
//   tile along its angle).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "demo_reader.hpp"

namespace arbiter::ddnet {

struct DemoImportOptions {
    std::string relay_id = "import";
    uint64_t match_id = 1;
    size_t batch_events = 4096;
    host::Progress* progress = nullptr;
};

struct DemoImportReport {
    DemoReadResult read;  // the header, the problems by offset, the chunk counts
    bool written = false;
    uint64_t players = 0, events = 0, orders = 0, positions = 0, server_teleports = 0;
    uint64_t batches = 0;
    uint64_t characters_without_player = 0;  // character items of a client never named
};

// Reads `in`, writes `out` (under a temporary name, moved into place when complete).
// A demo whose header cannot be read writes nothing; a damaged one writes what could be
// read, with the damage in read.problems. Throws std::invalid_argument for bad options
// and std::runtime_error when the output cannot be written.
DemoImportReport import_demo(const std::filesystem::path& in, const std::filesystem::path& out,
                             const DemoImportOptions& options);

// True for a path ending in .demo, or a file that starts with the demo marker.
bool looks_like_demo(const std::filesystem::path& path);

}  // namespace arbiter::ddnet
