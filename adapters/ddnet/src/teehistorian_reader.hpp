// DDNet's teehistorian (a server started with `sv_tee_historian 1` writes
// teehistorian/<game uuid>.teehistorian): every tick, each player's position when it
// changed and every input as received, with joins, drops, console commands and DDNet's
// extra records. Written from DDNet 16.4's src/game/server/teehistorian.cpp (the writer),
// src/engine/shared/teehistorian_ex_chunks.h (the extra records) and uuid_manager.cpp.
//
// The layout: the UUID of "teehistorian@ddnet.tw" (16 bytes), a JSON header ended by a
// NUL, then records, each a run of variable-length integers (varint.hpp) that starts with
// either a client id (>= 0: that player's position moved by dx, dy) or the negated kind of
// the record. Ticks are mostly implicit: a position record whose client id is not above
// the one before it begins the next tick; a TICK_SKIP record says how many ticks passed
// with nothing written. Inputs are differences from the player's input before.
//
// The reader is incremental, for files a server is still writing: it is given the bytes
// from its place on, reads the whole records there and stops before one that is cut off,
// waiting for more. Everything it carries from one record to the next (tick, positions,
// inputs) is in ThState, which a bridge saves beside its place and gives back on restart.
// A damaged record is reported by its offset; the reader then looks for the next place
// from which the records read sound again and goes on there (ThResync).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace arbiter::ddnet {

// DDNet's MAX_CLIENTS (16.4): client ids are 0 to 63.
inline constexpr int kThMaxClients = 64;
// Bounds of what one record may claim, so that nothing is allocated from a size the file
// claims alone. A client message is a network chunk (at most 1,400 bytes); a team's save
// string is the largest extra record DDNet writes (a few KiB a tee, 64 tees).
inline constexpr size_t kThMaxHeaderBytes = 1u << 20;
inline constexpr int32_t kThMaxMessageBytes = 4096;
inline constexpr int32_t kThMaxExBytes = 1 << 20;
inline constexpr size_t kThMaxStringBytes = 64 * 1024;
inline constexpr int32_t kThMaxArguments = 64;
inline constexpr int32_t kThMaxTickSkip = 50 * 86400 * 365;  // a year of ticks
// The last tick a file may reach (as a demo's, demo_reader.cpp): two tick skips of a year
// each would otherwise pass an int32_t.
inline constexpr int32_t kThMaxTick = 0x6fffffff;

using ThUuid = std::array<uint8_t, 16>;

// The magic at the start of every teehistorian file: CalculateUuid("teehistorian@ddnet.tw").
extern const ThUuid kTeehistorianUuid;

// CNetObj_PlayerInput of the 0.6 protocol, in the order of the file.
struct ThInput {
    int32_t direction = 0, target_x = 0, target_y = 0, jump = 0, fire = 0, hook = 0,
            player_flags = 0, wanted_weapon = 0, next_weapon = 0, prev_weapon = 0;
    static constexpr int kFields = 10;
    int32_t& at(int i);
    int32_t at(int i) const;
    bool operator==(const ThInput&) const = default;
};

enum class ThKind {
    player_diff,      // a tee moved: dx, dy (x, y: where it is now)
    player_new,       // a tee appeared (spawned): x, y
    player_old,       // a tee went (died, left, spectating)
    input_diff,       // an input changed: the whole input after it
    input_new,        // the first input of a connection
    message,          // a client's net message, raw (bytes)
    join,             // a client connected
    drop,             // a client left: text = the reason
    console_command,  // text = the command, args, flag_mask; cid -1: the server's own
    tick_skip,        // dt ticks passed with nothing written (the tick is already moved)
    finish,           // the server closed the file
    ex,               // an extra record: ex says which; unknown ones have only uuid, data
};

// The extra records DDNet writes (teehistorian_ex_chunks.h, and the ones of later versions
// that name a player). Those the reader does not know are `unknown`: skipped by their
// length, their UUID kept.
enum class ThEx {
    unknown,
    test,
    ddnetver_old,   // cid, version
    ddnetver,       // cid, connection uuid, version, text = version string
    auth_init,      // cid, level, text = auth name (a player logged in when the file began)
    auth_login,     // cid, level, text = auth name
    auth_logout,    // cid
    joinver6,       // cid (0.6 protocol)
    joinver7,       // cid (0.7 protocol)
    player_swap,    // cid, cid2
    save_success,   // team, uuid, text = the save
    save_failure,   // team
    load_success,   // team, uuid, text
    load_failure,   // team
    player_team,    // cid, team
    team_practice,  // team, value (1: practice)
    player_ready,   // cid
    player_rejoin,  // cid (DDNet 17+)
    player_name,    // cid, text = name (DDNet 17+)
    player_finish,  // cid, value = time in ticks (DDNet 17+)
    team_finish,    // team, value = time in ticks (DDNet 17+)
    antibot,        // data (DDNet 17+)
};

const char* th_kind_name(ThKind kind);
const char* th_ex_name(ThEx ex);

struct ThRecord {
    ThKind kind = ThKind::finish;
    ThEx ex = ThEx::unknown;
    uint64_t offset = 0;  // where the record begins in the file
    uint64_t end = 0;     // where the next begins
    int32_t tick = 0;     // the tick it belongs to
    int32_t cid = -1;
    int32_t x = 0, y = 0, dx = 0, dy = 0;  // positions, in game units (32 a tile)
    // False after damage: x, y (input) are relative to a place (an input) that was lost.
    bool position_known = true, input_known = true;
    ThInput input;         // input_diff, input_new: the whole input
    ThInput input_before;  // input_diff: the input it replaced
    int32_t dt = 0;        // tick_skip
    int32_t cid2 = -1, team = 0, level = 0, value = 0, flag_mask = 0;
    std::string text;
    std::vector<std::string> args;
    std::vector<uint8_t> data;  // message bytes, or an extra record's payload
    ThUuid uuid{};
};

// What the reader carries between records: all a bridge saves to resume mid-file.
struct ThState {
    bool header_read = false;
    bool finished = false;  // a FINISH record was read: nothing follows
    int32_t tick = 0;
    // The client id of the last position record of the tick (-1: none yet). At the start
    // of a file it is above every id: the first tick's first position record is implicit.
    int32_t last_player_cid = kThMaxClients;
    struct Seat {
        bool alive = false;  // has a tee
        bool known = false;  // its position was given whole since the last damage
        int32_t x = 0, y = 0;
        bool has_input = false;    // an input was read since it connected
        bool input_known = false;  // that input was given whole since the last damage
        ThInput input;
        bool operator==(const Seat&) const = default;
    };
    std::array<Seat, kThMaxClients> seats{};
    bool operator==(const ThState&) const = default;
};

struct ThHeader {
    std::string json;   // the header's JSON text, as written (not checked here)
    uint64_t size = 0;  // bytes of magic and header
};

struct ThProblem {
    uint64_t offset = 0;
    std::string what;
};

// What one call to read() found.
enum class ThStatus {
    record,      // a record is in `record`
    need_more,   // the bytes end inside a record (or the header): wait for more
    finished,    // the FINISH record was read before: nothing more is read
    bad_header,  // not a teehistorian file (problem says why): nothing can be read
};

class TeehistorianReader {
  public:
    TeehistorianReader() = default;
    // Resumes at `offset` (the end of the record last taken) with the state saved there.
    TeehistorianReader(uint64_t offset, const ThState& state) : offset_(offset), state_(state) {}

    // Reads the next record from `bytes`, which must hold the file from offset() on
    // (bytes beyond the first record are looked at only to resynchronise after damage).
    // `at_end`: no more bytes will come (a finished file): a record cut off there is
    // reported as a truncated tail instead of waited for. Damage found on the way is added
    // to problems(); the record returned is the first sound one after it.
    ThStatus read(std::span<const uint8_t> bytes, ThRecord& record, bool at_end = false);

    // The header, once read (read() reads it first).
    const ThHeader& header() const { return header_; }
    uint64_t offset() const { return offset_; }
    const ThState& state() const { return state_; }
    // Damage found since the last call to take_problems().
    std::vector<ThProblem> take_problems();
    const std::string& header_problem() const { return header_problem_; }
    // Bytes skipped as damaged so far.
    uint64_t skipped_bytes() const { return skipped_bytes_; }
    // Where the tick of the last record read began, with the state there: the place a
    // bridge saves (all records before it belong to ticks already finished).
    uint64_t tick_start_offset() const { return tick_start_offset_; }
    const ThState& tick_start_state() const { return tick_start_state_; }

  private:
    ThStatus read_header(std::span<const uint8_t> bytes, bool at_end);
    // How many sound records follow `from` (up to `want`), on a copy of the state.
    int sound_records_from(std::span<const uint8_t> bytes, size_t from, int want,
                           bool& ran_out) const;

    uint64_t offset_ = 0;
    ThState state_;
    ThHeader header_;
    std::string header_problem_;
    std::vector<ThProblem> problems_;
    uint64_t skipped_bytes_ = 0;
    uint64_t tick_start_offset_ = 0;
    ThState tick_start_state_;
};

// What one record changed in a state: enough to undo it (a record changes the scalars and
// at most one seat).
struct ThUndo {
    int32_t tick = 0, last_player_cid = 0;
    bool finished = false;
    int32_t cid = -1;    // the seat it changed, if any
    ThState::Seat seat;  // that seat before
};

// Reads one record at `pos` of `bytes` (the file's bytes from `base` on) against `state`,
// which it advances (what it changed goes to `undo`, when given). Returns nothing and sets
// `need_more` when the bytes end inside the record, or nothing with `problem` set when the record
// is not sound. Exposed for the reader's resynchronisation and its tests.
std::optional<ThRecord> parse_th_record(std::span<const uint8_t> bytes, size_t pos, uint64_t base,
                                        ThState& state, bool& need_more, std::string& problem,
                                        ThUndo* undo = nullptr);

// The extra record a UUID names, or unknown.
ThEx th_ex_of(const ThUuid& uuid);
const ThUuid& th_uuid_of(ThEx ex);

}  // namespace arbiter::ddnet
