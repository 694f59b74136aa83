// The lines the Luanti mod writes (adapters/luanti/LINES.md), read and checked one at a time.
// A line comes from a file any mod of the world could also write to, so nothing in it is
// trusted: every field is checked for its type and range, and a line that fails is refused
// with the reason, never half taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace arbiter::luanti {

// The longest line the bridge reads; a longer one is refused and skipped.
inline constexpr size_t kMaxLineBytes = 64 * 1024;

// A position in Luanti's coordinates: y is up, one node is one metre.
struct NodeVec {
    double x = 0, y = 0, z = 0;
};

enum class LineKind {
    start,      // the server began a run: a new match
    join,       // a player joined
    leave,      // a player left
    allow,      // what the server allows a player (sent when it changes)
    pos,        // a player's position at a server step
    dig_start,  // a player began to dig a node (punched it)
    dig,        // a player dug a node
    place,      // a player placed a node
    punch,      // a player punched another
    item,       // a player's main inventory gained or lost items
    die,        // a player died
    respawn,    // a player respawned
    cheat,      // the engine's own anti-cheat reported a player
    step,       // a server step ended: the lines before it belong to it
    lost,       // the mod could not write some steps (the bridge was too far behind)
    end,        // the server shut down
};

std::string_view name_of(LineKind kind);

struct Allowance {
    double speed = 1, jump = 1, gravity = 1;
    bool fast = false, fly = false, noclip = false, attached = false;
    bool operator==(const Allowance&) const = default;
};

struct Line {
    LineKind kind = LineKind::step;
    int64_t t_us = 0;    // the server's monotonic clock
    std::string player;  // the player's name ("" for start, step, lost, end)

    // start
    std::string session, game, world, version;
    int64_t unix_s = 0;
    double step_s = 0.09;
    // join
    uint64_t address_hash = 0;
    int64_t protocol = 0;
    bool reconnect = false;
    // leave
    bool timed_out = false;
    // allow
    Allowance allowance;
    // pos
    NodeVec position, velocity;
    double yaw = 0, pitch = 0;  // radians, as get_look_horizontal and get_look_vertical say
    bool has_look = false;      // the line had both (every line of the mod does)
    uint32_t controls = 0;
    std::optional<bool> supported;  // null: unknown (the client has not taken up a server move)
    std::string inside;             // the solid node the body is in, if any
    bool server_move = false;
    // dig_start, dig, place: the node and where it is; dig: its time
    std::string node, tool;
    NodeVec at;
    std::optional<double> dig_time_s;  // dig: none when the node is not diggable with it
    // punch
    std::string target;
    double range_m = 0, damage = 0;
    // item
    std::string item, source;
    int64_t delta = 0, count = 0;
    // die, cheat: the reason or the cheat's type; end: the reason
    std::string reason;
    // step
    uint64_t step = 0;
    int64_t lag_us = 0;
    // lost
    uint64_t lost_steps = 0;
};

// A line parsed, or why it was refused.
using ParsedLine = std::variant<Line, std::string>;

// `text` without its newline.
ParsedLine parse_line(std::string_view text);

}  // namespace arbiter::luanti
