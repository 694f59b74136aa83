// A teehistorian's records into Arbiter's events: one match per file, one batch per tick,
// the same for `arbiter import X.teehistorian` and the live `arbiter ddnet-bridge`.
//
// Units as the demo import (demo_import.hpp): one tile (32 game units) is one metre,
// x = X/32, y = 0, z = -Y/32. The relay clock is the file's tick at 50 ticks a second
// (t = tick × 20 ms); an event's tick is the file's.
//
// What becomes what:
// - a client is a player once its name is known (its Cl_StartInfo message, which DDNet's
//   server records): PlayerJoin with account_id = the name, or "name@auth" when the client
//   was logged in (rcon) at that moment; the DDNet version it sent is the client_version.
//   A client whose name never came (a 0.7 client, a file begun mid-connection) joins as
//   "client<id>" at its first position or input. A rename (Cl_ChangeInfo) is a leave and a
//   join under the new name; a name seen again rejoins as the same player (reconnect).
// - DROP: PlayerLeave with DDNet's reason. A login or logout later: Extension "ddnet.auth"
//   ({"level":N,"auth_name":"..."}).
// - PLAYER_NEW (a spawn) and a move further than DDNet's physics moves a tee in the ticks
//   between (a teleporter, 3 tiles a tick plus 2): PositionUpdate with server_teleport;
//   every other move: PositionUpdate, with the velocity of the move. After damage a tee's
//   position is unknown until it spawns again: its moves are not reported.
// - every input change: Orders of the demo import's kinds, at the input's tick: "direction"
//   (the key changed), "jump" and "hook" (pressed), "fire" (pressed: the fire counter
//   became odd), "weapon" (wanted, next or previous weapon), "aim" (the target moved; a
//   move within 4 ticks of the one before is a `repeat`). An order's target is where the
//   tee aims: its position plus the input's target, which is relative to the tee.
// - FINISH: MatchEnd.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>
#include <nlohmann/json.hpp>

#include "teehistorian_reader.hpp"

namespace arbiter::ddnet {

// Enough for a tick of a full server (64 tees' positions and inputs); a longer tick is cut
// here, which stays the same on a second reading.
inline constexpr size_t kThMaxEventsPerBatch = 4096;

struct ThEventCounts {
    uint64_t events = 0, players = 0, positions = 0, server_teleports = 0, orders = 0;
    uint64_t messages = 0, console_commands = 0, unknown_extras = 0, batches = 0;
    bool operator==(const ThEventCounts&) const = default;
};

// Everything the builder carries from one record to the next: saved by the bridge.
struct ThBuilderState {
    bool open = false;  // a match is started and not ended
    uint64_t match_id = 0;
    uint64_t next_sequence = 0;
    int32_t tick = -1;  // the tick of the batch in hand (-1: none yet)
    // The MatchStart, written with the file's first record.
    std::string map, rules;
    int64_t started_unix_us = 0;
    struct Seat {
        bool connected = false;  // JOIN read (or anything of the client)
        bool sixup = false;      // a 0.7 client (its messages are not 0.6's)
        uint32_t player = 0;     // 0: not yet a player
        std::string name, auth_name, client_version;
        int32_t auth_level = 0;
        uint64_t connection_id = 0;
        bool positioned = false;  // x, y, pos_tick hold its last reported position
        int32_t x = 0, y = 0, pos_tick = 0;
        bool has_input = false;  // input holds its last input
        ThInput input;
        int32_t last_aim_tick = -1;
        bool operator==(const Seat&) const = default;
    };
    std::array<Seat, kThMaxClients> seats{};
    std::map<std::string, uint32_t> ids;  // player ids by account
    ThEventCounts counts;
    bool operator==(const ThBuilderState&) const = default;
};

class ThMatchBuilder {
  public:
    explicit ThMatchBuilder(std::string relay_id) : relay_id_(std::move(relay_id)) {}

    // Begins the match of a file from its header. Throws nothing: a header that is not
    // JSON gives a match of an unknown map (the records are what matter).
    void start(const ThHeader& header, std::vector<std::vector<uint8_t>>& batches);
    // The events of one record. A record of a later tick first finishes the batch of the
    // tick before, into `batches` (ends_tick() says so beforehand).
    void take(const ThRecord& record, std::vector<std::vector<uint8_t>>& batches);
    bool ends_tick(const ThRecord& record) const {
        return state_.tick >= 0 && record.tick != state_.tick;
    }
    // The records of the tick in hand are all read: its batch, if it holds anything.
    void end_tick(std::vector<std::vector<uint8_t>>& batches);
    // The match ends (FINISH, or the file was left for a newer one): its last batch.
    void end(const std::string& reason, std::vector<std::vector<uint8_t>>& batches);

    bool open() const { return state_.open; }
    const std::string& relay_id() const { return relay_id_; }
    const ThBuilderState& state() const { return state_; }
    void restore(const ThBuilderState& state) {
        state_ = state;
        batch_.reset();
    }

  private:
    BatchBuilder& batch();
    void finish(std::vector<std::vector<uint8_t>>& batches);
    void write_start(int32_t tick, std::vector<std::vector<uint8_t>>& batches);
    template <class Body>
    void add(int32_t tick, uint32_t player, const Body& body,
             std::vector<std::vector<uint8_t>>& batches);
    // The client in seat `cid` becomes a player (named, or by its id), if not yet one.
    uint32_t ensure_player(int32_t cid, int32_t tick, std::vector<std::vector<uint8_t>>& batches);
    void name_client(int32_t cid, const std::string& name, int32_t tick,
                     std::vector<std::vector<uint8_t>>& batches);
    void leave(int32_t cid, int32_t tick, const std::string& reason,
               std::vector<std::vector<uint8_t>>& batches);
    void position(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches);
    void input(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches);
    void message(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches);
    void extra(const ThRecord& r, std::vector<std::vector<uint8_t>>& batches);

    std::string relay_id_;
    ThBuilderState state_;
    std::optional<BatchBuilder> batch_;
};

// The saved form of the reader's and the builder's states (the bridge's state file).
nlohmann::json th_state_to_json(const ThState& state);
ThState th_state_from_json(const nlohmann::json& json);  // throws std::runtime_error
nlohmann::json th_builder_to_json(const ThBuilderState& state);
ThBuilderState th_builder_from_json(const nlohmann::json& json);  // throws std::runtime_error

// A client's 0.6 net message as DDNet records it: the name of Cl_StartInfo (id 20) or
// Cl_ChangeInfo (21), when it is one of those and reads whole.
std::optional<std::string> th_message_name(std::span<const uint8_t> message, bool& change);

}  // namespace arbiter::ddnet
