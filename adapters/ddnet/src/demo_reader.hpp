// Reading Teeworlds/DDNet demos (format versions 4 to 6, the 0.6 network protocol that
// DDNet servers speak to DDNet clients): the header, then chunks, each a tick marker, a
// full snapshot (a keyframe, every 5 s), a delta snapshot against the one before, or a
// game message. DDNet's src/engine/shared/demo.cpp defines the layout.
//
// What the reader hands on is what an analyzer of a tee's movement and input needs: the
// characters in view (position, velocity, aim, direction, jump, hook, weapon, the tick the
// server computed them at), the players' names and the kill messages, per snapshot.
//
// Bad input never stops the reader: a damaged stretch is reported by its byte offset, and
// reading resumes at the next keyframe that decodes (deltas need the snapshot before them,
// so nothing between can be used); a truncated file is reported where it ends, with all
// before it used. Every buffer is bounded by the format's limits (a chunk is at most 64 KiB
// coded and decoded, a snapshot 1,024 items), never by a size the file claims alone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace arbiter::ddnet {

// The first bytes of every demo file: "TWDEMO" and a NUL.
bool is_demo_magic(std::span<const uint8_t> head);

struct DemoHeader {
    int version = 0;
    std::string net_version;  // "0.6 626fce9a778df4d4" for DDNet's 0.6 protocol
    std::string map_name;
    uint32_t map_size = 0;
    uint32_t map_crc = 0;
    std::string type;  // "client" or "server"
    uint32_t length_s = 0;
    std::string timestamp;
    std::vector<int32_t> markers;  // timeline markers (ticks)
    bool has_sha256 = false;
};

// A character item (the 0.6 protocol's Character, or CharacterCore alone), in the game's
// units: positions in 1/32 of a tile, velocities in 1/256 unit a tick, the aim angle in
// 1/256 radian (y down, as the game draws it).
struct CharacterItem {
    int32_t client_id = 0;
    int32_t tick = 0;  // the tick the server computed this state at (its dead reckoning)
    int32_t x = 0, y = 0, vel_x = 0, vel_y = 0;
    int32_t angle = 0;
    int32_t direction = 0;  // -1 left, 0 none, 1 right: the direction key held
    int32_t jumped = 0;     // bit 0: a jump done and the key still held; bit 1: air jump used
    int32_t hooked_player = -1;
    int32_t hook_state = 0;  // -1 retracted, 0 idle, 1-3 retracting, 4 flying, 5 grabbed
    int32_t hook_tick = 0;
    int32_t hook_x = 0, hook_y = 0, hook_dx = 0, hook_dy = 0;
    bool full = false;  // a Character item: the fields below are there
    int32_t player_flags = 0, health = 0, armor = 0, ammo = 0, weapon = 0, emote = 0;
    int32_t attack_tick = 0;
    // From DDNet's own character item (newer servers), where the snapshot has it: the
    // aim target relative to the tee, in units.
    std::optional<int32_t> target_x, target_y;
};

struct ClientInfoItem {
    int32_t client_id = 0;
    std::string name, clan, skin;
    int32_t country = 0;
};

struct PlayerInfoItem {
    int32_t client_id = 0;
    bool local = false;  // the player who recorded the demo
    int32_t team = 0;    // -1 spectators
    int32_t score = 0, latency = 0;
};

struct DemoSnapshot {
    int32_t tick = 0;
    uint64_t offset = 0;  // of the chunk
    bool keyframe = false;
    std::vector<CharacterItem> characters;
    std::vector<ClientInfoItem> clients;
    std::vector<PlayerInfoItem> players;
    size_t items = 0;
};

struct DemoMessage {
    int32_t tick = 0;
    uint64_t offset = 0;
    bool system = false;
    int32_t id = 0;  // the game message id (4 is Sv_KillMsg)
    // Sv_KillMsg: who killed whom (a kill tile or a suicide: the victim itself).
    struct Kill {
        int32_t killer = 0, victim = 0, weapon = 0;
    };
    std::optional<Kill> kill;
};

struct DemoProblem {
    uint64_t offset = 0;
    std::string what;
};

class DemoVisitor {
  public:
    virtual ~DemoVisitor() = default;
    virtual void on_header(const DemoHeader&) {}
    virtual void on_snapshot(const DemoSnapshot& snapshot) = 0;
    virtual void on_message(const DemoMessage&) {}
    // Demo data from `from_offset` to `to_offset` was lost: what comes after does not
    // continue what came before (a character seen on both sides may have moved anyhow).
    virtual void on_gap(uint64_t /*from_offset*/, uint64_t /*to_offset*/) {}
};

struct DemoReadResult {
    bool header_ok = false;  // false: nothing could be read at all (see problems)
    DemoHeader header;
    std::vector<DemoProblem> problems;  // by offset
    uint64_t chunks = 0, snapshots = 0, deltas = 0, messages = 0, tick_markers = 0;
    uint64_t bytes_skipped = 0;  // in damaged stretches
    int32_t first_tick = -1, last_tick = -1;
};

// Reads a whole demo held in memory.
DemoReadResult read_demo(std::span<const uint8_t> file, DemoVisitor& visitor);
// Reads a demo file; a file that cannot be read is a problem at offset 0. Files over
// `max_bytes` are refused (a demo of an hour is some 60 MB).
DemoReadResult read_demo_file(const std::filesystem::path& path, DemoVisitor& visitor,
                              uint64_t max_bytes = 1ull << 30);

}  // namespace arbiter::ddnet
