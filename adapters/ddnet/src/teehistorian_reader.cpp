#include "teehistorian_reader.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "varint.hpp"

namespace arbiter::ddnet {

namespace {

// The record kinds, as the file stores them (negated). teehistorian.cpp's enum.
enum RawKind : int32_t {
    kFinish = 1,
    kTickSkip = 2,
    kPlayerNew = 3,
    kPlayerOld = 4,
    kInputDiff = 5,
    kInputNew = 6,
    kMessage = 7,
    kJoin = 8,
    kDrop = 9,
    kConsoleCommand = 10,
    kEx = 11,
};

// How many sound records past a damaged stretch make a place to go on from: a random
// byte starts a sound record often, eight in a row rarely.
constexpr int kResyncRecords = 8;

// CalculateUuid(name) of DDNet's uuid_manager.cpp: the MD5 of the Teeworlds namespace
// (e05ddaaa-c4e6-4cfb-b642-5d48e80c0029) and the name, with the version-3 bits set. The
// values are the format's data, computed once from the names beside them.
struct ExName {
    ThEx ex;
    const char* name;
    ThUuid uuid;
};
constexpr ExName kExNames[] = {
    {ThEx::test,
     "teehistorian-test@ddnet.tw",
     {0x6b, 0xb8, 0xba, 0x88, 0x0f, 0x0b, 0x38, 0x2e, 0x8d, 0xae, 0xdb, 0xf4, 0x05, 0x2b, 0x8b,
      0x7d}},
    {ThEx::ddnetver_old,
     "teehistorian-ddnetver-old@ddnet.tw",
     {0x41, 0xb4, 0x95, 0x41, 0xf2, 0x6f, 0x32, 0x5d, 0x87, 0x15, 0x9b, 0xaf, 0x4b, 0x54, 0x4e,
      0xf9}},
    {ThEx::ddnetver,
     "teehistorian-ddnetver@ddnet.tw",
     {0x13, 0x97, 0xb6, 0x3e, 0xee, 0x4e, 0x39, 0x19, 0xb8, 0x6a, 0xb0, 0x58, 0x88, 0x7f, 0xca,
      0xf5}},
    {ThEx::auth_init,
     "teehistorian-auth-init@ddnet.tw",
     {0x60, 0xda, 0xba, 0x5c, 0x52, 0xc4, 0x3a, 0xeb, 0xb8, 0xba, 0xb2, 0x95, 0x3f, 0xb5, 0x5a,
      0x17}},
    {ThEx::auth_login,
     "teehistorian-auth-login@ddnet.tw",
     {0x37, 0xec, 0xd3, 0xb8, 0x92, 0x18, 0x3b, 0xb9, 0xa7, 0x1b, 0xa9, 0x35, 0xb8, 0x6f, 0x6a,
      0x81}},
    {ThEx::auth_logout,
     "teehistorian-auth-logout@ddnet.tw",
     {0xd4, 0xf5, 0xab, 0xe8, 0xed, 0xd2, 0x3f, 0xb9, 0xab, 0xd8, 0x1c, 0x8b, 0xb8, 0x4f, 0x4a,
      0x63}},
    {ThEx::joinver6,
     "teehistorian-joinver6@ddnet.tw",
     {0x18, 0x99, 0xa3, 0x82, 0x71, 0xe3, 0x36, 0xda, 0x93, 0x7d, 0xc9, 0xde, 0x6b, 0xb9, 0x5b,
      0x1d}},
    {ThEx::joinver7,
     "teehistorian-joinver7@ddnet.tw",
     {0x59, 0x23, 0x9b, 0x05, 0x05, 0x40, 0x31, 0x8d, 0xbe, 0xa4, 0x9a, 0xa1, 0xe8, 0x0e, 0x7d,
      0x2b}},
    {ThEx::player_swap,
     "teehistorian-player-swap@ddnet.tw",
     {0x5d, 0xe9, 0xb6, 0x33, 0x49, 0xcf, 0x3e, 0x99, 0x9a, 0x25, 0xd4, 0xa7, 0x8e, 0x97, 0x17,
      0xd7}},
    {ThEx::save_success,
     "teehistorian-save-success@ddnet.tw",
     {0x45, 0x60, 0xc7, 0x56, 0xda, 0x29, 0x30, 0x36, 0x81, 0xd4, 0x90, 0xa5, 0x0f, 0x01, 0x82,
      0xcd}},
    {ThEx::save_failure,
     "teehistorian-save-failure@ddnet.tw",
     {0xb2, 0x99, 0x01, 0xd5, 0x12, 0x44, 0x3b, 0xd0, 0xbb, 0xde, 0x23, 0xd0, 0x4b, 0x1f, 0x7b,
      0xa9}},
    {ThEx::load_success,
     "teehistorian-load-success@ddnet.tw",
     {0xe0, 0x54, 0x08, 0xd3, 0xa3, 0x13, 0x33, 0xdf, 0x9e, 0xb3, 0xdd, 0xb9, 0x90, 0xab, 0x95,
      0x4a}},
    {ThEx::load_failure,
     "teehistorian-load-failure@ddnet.tw",
     {0xef, 0x89, 0x05, 0xa2, 0xc6, 0x95, 0x35, 0x91, 0xa1, 0xcd, 0x53, 0xd2, 0x01, 0x59, 0x92,
      0xdd}},
    {ThEx::player_team,
     "teehistorian-player-team@ddnet.tw",
     {0xa1, 0x11, 0xc0, 0x4e, 0x1e, 0xa8, 0x38, 0xe0, 0x90, 0xb1, 0xd7, 0xf9, 0x93, 0xca, 0x0d,
      0xa9}},
    {ThEx::team_practice,
     "teehistorian-team-practice@ddnet.tw",
     {0x57, 0x92, 0x83, 0x4e, 0x81, 0xd1, 0x34, 0xc9, 0xa2, 0x9b, 0xb5, 0xff, 0x25, 0xda, 0xc3,
      0xbc}},
    {ThEx::player_ready,
     "teehistorian-player-ready@ddnet.tw",
     {0x63, 0x85, 0x87, 0xc9, 0x3f, 0x75, 0x38, 0x87, 0x91, 0x8e, 0xa3, 0xc2, 0x61, 0x4f, 0xfa,
      0xa0}},
    {ThEx::player_rejoin,
     "teehistorian-rejoinver6@ddnet.org",
     {0xc1, 0xe9, 0x21, 0xd5, 0x96, 0xf5, 0x37, 0xbb, 0x8a, 0x45, 0x7a, 0x06, 0xf1, 0x63, 0xd2,
      0x7e}},
    {ThEx::antibot,
     "teehistorian-antibot@ddnet.org",
     {0x86, 0x6b, 0xfd, 0xac, 0xfb, 0x49, 0x3c, 0x0b, 0xa8, 0x87, 0x5f, 0xe1, 0xf3, 0xea, 0x00,
      0xb8}},
    {ThEx::player_name,
     "teehistorian-player-name@ddnet.org",
     {0xd0, 0x16, 0xf9, 0xb9, 0x41, 0x51, 0x3b, 0x87, 0x87, 0xe5, 0x3a, 0x60, 0x87, 0xeb, 0x5f,
      0x26}},
    {ThEx::player_finish,
     "teehistorian-player-finish@ddnet.org",
     {0x68, 0x94, 0x3c, 0x01, 0x23, 0x48, 0x3e, 0x01, 0x94, 0x90, 0x3f, 0x27, 0xf8, 0x26, 0x9d,
      0x94}},
    {ThEx::team_finish,
     "teehistorian-team-finish@ddnet.org",
     {0x95, 0x88, 0xb9, 0xaf, 0x3f, 0xdc, 0x37, 0x60, 0x80, 0x43, 0x82, 0xde, 0xee, 0xe3, 0x17,
      0xa5}},
};

// Reads integers and strings from one span, remembering whether it ran out (need more
// bytes) or met something unsound (a problem). Once either happened it reads nothing.
class Cursor {
  public:
    Cursor(std::span<const uint8_t> bytes, size_t pos) : bytes_(bytes), pos_(pos) {}
    bool ok() const { return !out_ && problem_.empty(); }
    bool ran_out() const { return out_; }
    const std::string& problem() const { return problem_; }
    size_t pos() const { return pos_; }
    void fail(std::string what) {
        if (ok()) problem_ = std::move(what);
    }

    int32_t integer() {
        if (!ok()) return 0;
        auto value = read_varint(bytes_, pos_);
        if (!value) {
            out_ = true;
            return 0;
        }
        return *value;
    }
    int32_t in_range(int32_t low, int32_t high, const char* what) {
        const int32_t value = integer();
        if (ok() && (value < low || value > high))
            fail(std::string(what) + " " + std::to_string(value) + " is out of range");
        return value;
    }
    std::string string() {
        if (!ok()) return {};
        const size_t available = bytes_.size() - pos_;
        const size_t limit = std::min(available, kThMaxStringBytes + 1);
        const uint8_t* start = bytes_.data() + pos_;
        const void* nul = std::memchr(start, 0, limit);
        if (!nul) {
            if (available > kThMaxStringBytes)
                fail("a string longer than " + std::to_string(kThMaxStringBytes) + " bytes");
            else
                out_ = true;
            return {};
        }
        const size_t length = static_cast<const uint8_t*>(nul) - start;
        pos_ += length + 1;
        return std::string(reinterpret_cast<const char*>(start), length);
    }
    std::vector<uint8_t> raw(size_t size) {
        if (!ok()) return {};
        if (bytes_.size() - pos_ < size) {
            out_ = true;
            return {};
        }
        std::vector<uint8_t> out(bytes_.begin() + static_cast<ptrdiff_t>(pos_),
                                 bytes_.begin() + static_cast<ptrdiff_t>(pos_ + size));
        pos_ += size;
        return out;
    }
    bool at_end() const { return pos_ == bytes_.size(); }

  private:
    std::span<const uint8_t> bytes_;
    size_t pos_;
    bool out_ = false;
    std::string problem_;
};

int32_t client_id(Cursor& in) {
    return in.in_range(0, kThMaxClients - 1, "client id");
}

// The payload of a known extra record, read into `record`; false when it does not read
// as that record (the record's length is sound, so the reader goes on past it).
bool read_ex_payload(ThRecord& record) {
    Cursor in(record.data, 0);
    switch (record.ex) {
        case ThEx::unknown:
        case ThEx::test:
        case ThEx::antibot:
            return true;
        case ThEx::ddnetver_old:
            record.cid = client_id(in);
            record.value = in.integer();
            break;
        case ThEx::ddnetver: {
            record.cid = client_id(in);
            const auto id = in.raw(16);
            if (in.ok()) std::copy(id.begin(), id.end(), record.uuid.begin());
            record.value = in.integer();
            record.text = in.string();
            break;
        }
        case ThEx::auth_init:
        case ThEx::auth_login:
            record.cid = client_id(in);
            record.level = in.integer();
            record.text = in.string();
            break;
        case ThEx::auth_logout:
        case ThEx::joinver6:
        case ThEx::joinver7:
        case ThEx::player_ready:
        case ThEx::player_rejoin:
            record.cid = client_id(in);
            break;
        case ThEx::player_swap:
            record.cid = client_id(in);
            record.cid2 = client_id(in);
            break;
        case ThEx::save_success:
        case ThEx::load_success: {
            record.team = in.integer();
            const auto id = in.raw(16);
            if (in.ok()) std::copy(id.begin(), id.end(), record.uuid.begin());
            record.text = in.string();
            break;
        }
        case ThEx::save_failure:
        case ThEx::load_failure:
            record.team = in.integer();
            break;
        case ThEx::player_team:
            record.cid = client_id(in);
            record.team = in.integer();
            break;
        case ThEx::team_practice:
            record.team = in.integer();
            record.value = in.integer();
            break;
        case ThEx::player_name:
            record.cid = client_id(in);
            record.text = in.string();
            break;
        case ThEx::player_finish:
            record.cid = client_id(in);
            record.value = in.integer();
            break;
        case ThEx::team_finish:
            record.team = in.integer();
            record.value = in.integer();
            break;
    }
    // The payload's own length bounds it: running out inside it is damage, not a wait.
    return in.ok() && in.at_end();
}

// The state a record leads to, kept apart until the whole record is sound. A record
// changes the scalars and at most one seat: only those are copied (a whole state is 64
// seats, and records come by the thousand a second).
struct Next {
    explicit Next(const ThState& from)
        : base(from),
          tick(base.tick),
          last_player_cid(base.last_player_cid),
          finished(base.finished) {}
    ThState::Seat& seat_of(int32_t which) {
        if (cid != which) {
            cid = which;
            seat = base.seats[static_cast<size_t>(which)];
        }
        return seat;
    }
    const ThState& base;
    int32_t tick, last_player_cid;
    bool finished;
    int32_t cid = -1;  // the seat changed, if any
    ThState::Seat seat;
};

// A position record begins the next tick when its client id is not above the one before
// it in this tick (the writer's implicit ticks). A tick past kThMaxTick is damage: the tick
// is an int32_t, and the match builder reads a negative one as "no tick yet".
void position_tick(Next& state, int32_t cid, Cursor& in) {
    if (cid <= state.last_player_cid) {
        if (state.tick >= kThMaxTick) {
            in.fail("a tick past the last one a file can hold");
            return;
        }
        ++state.tick;
    }
    state.last_player_cid = cid;
}

}  // namespace

const ThUuid kTeehistorianUuid = {0x69, 0x9d, 0xb1, 0x7b, 0x8e, 0xfb, 0x34, 0xff,
                                  0xb1, 0xd8, 0xda, 0x6f, 0x60, 0xc1, 0x5d, 0xd1};

int32_t& ThInput::at(int i) {
    int32_t* fields[] = {&direction, &target_x,     &target_y,      &jump,        &fire,
                         &hook,      &player_flags, &wanted_weapon, &next_weapon, &prev_weapon};
    return *fields[i];
}

int32_t ThInput::at(int i) const {
    return const_cast<ThInput*>(this)->at(i);
}

const char* th_kind_name(ThKind kind) {
    switch (kind) {
        case ThKind::player_diff:
            return "player_diff";
        case ThKind::player_new:
            return "player_new";
        case ThKind::player_old:
            return "player_old";
        case ThKind::input_diff:
            return "input_diff";
        case ThKind::input_new:
            return "input_new";
        case ThKind::message:
            return "message";
        case ThKind::join:
            return "join";
        case ThKind::drop:
            return "drop";
        case ThKind::console_command:
            return "console_command";
        case ThKind::tick_skip:
            return "tick_skip";
        case ThKind::finish:
            return "finish";
        case ThKind::ex:
            return "ex";
    }
    return "?";
}

const char* th_ex_name(ThEx ex) {
    for (const ExName& known : kExNames)
        if (known.ex == ex) return known.name;
    return "unknown";
}

ThEx th_ex_of(const ThUuid& uuid) {
    for (const ExName& known : kExNames)
        if (known.uuid == uuid) return known.ex;
    return ThEx::unknown;
}

const ThUuid& th_uuid_of(ThEx ex) {
    static const ThUuid none{};
    for (const ExName& known : kExNames)
        if (known.ex == ex) return known.uuid;
    return none;
}

std::optional<ThRecord> parse_th_record(std::span<const uint8_t> bytes, size_t pos, uint64_t base,
                                        ThState& state, bool& need_more, std::string& problem,
                                        ThUndo* undo) {
    need_more = false;
    problem.clear();
    Cursor in(bytes, pos);
    ThRecord r;
    r.offset = base + pos;
    Next next(state);  // changed only when the whole record is sound
    const int32_t first = in.integer();
    if (in.ok() && first >= 0) {
        r.kind = ThKind::player_diff;
        r.cid = first;
        if (first >= kThMaxClients)
            in.fail("client id " + std::to_string(first) + " is out of range");
        r.dx = in.integer();
        r.dy = in.integer();
        // The writer writes a position only when it changed.
        if (in.ok() && r.dx == 0 && r.dy == 0) in.fail("a position record that does not move");
        if (in.ok()) {
            auto& seat = next.seat_of(r.cid);
            const int64_t x = int64_t{seat.x} + r.dx, y = int64_t{seat.y} + r.dy;
            if (x < std::numeric_limits<int32_t>::min() ||
                x > std::numeric_limits<int32_t>::max() ||
                y < std::numeric_limits<int32_t>::min() || y > std::numeric_limits<int32_t>::max())
                in.fail("a position past the range of the format");
            else {
                position_tick(next, r.cid, in);
                seat.x = static_cast<int32_t>(x);
                seat.y = static_cast<int32_t>(y);
                seat.alive = true;
                r.x = seat.x;
                r.y = seat.y;
                r.position_known = seat.known;
            }
        }
    } else if (in.ok()) {
        switch (-static_cast<int64_t>(first)) {
            case kFinish:
                r.kind = ThKind::finish;
                next.finished = true;
                break;
            case kTickSkip:
                r.kind = ThKind::tick_skip;
                r.dt = in.in_range(0, kThMaxTickSkip, "tick skip");
                if (in.ok() && next.tick > kThMaxTick - r.dt - 1)
                    in.fail("a tick skip past the last tick a file can hold");
                if (in.ok()) {
                    next.tick += r.dt + 1;
                    next.last_player_cid = -1;
                }
                break;
            case kPlayerNew: {
                r.kind = ThKind::player_new;
                r.cid = client_id(in);
                r.x = in.integer();
                r.y = in.integer();
                if (in.ok()) {
                    position_tick(next, r.cid, in);
                    auto& seat = next.seat_of(r.cid);
                    seat.alive = true;
                    seat.known = true;
                    seat.x = r.x;
                    seat.y = r.y;
                }
                break;
            }
            case kPlayerOld:
                r.kind = ThKind::player_old;
                r.cid = client_id(in);
                if (in.ok()) {
                    position_tick(next, r.cid, in);
                    next.seat_of(r.cid).alive = false;
                }
                break;
            case kInputDiff:
            case kInputNew: {
                const bool diff = first == -kInputDiff;
                r.kind = diff ? ThKind::input_diff : ThKind::input_new;
                r.cid = client_id(in);
                ThInput given;
                for (int i = 0; i < ThInput::kFields; ++i)
                    given.at(i) = in.integer();
                if (!in.ok()) break;
                auto& seat = next.seat_of(r.cid);
                r.input_before = seat.input;
                if (diff) {
                    // The writer writes a difference only when the input changed.
                    if (given == ThInput{}) {
                        in.fail("an input difference that changes nothing");
                        break;
                    }
                    for (int i = 0; i < ThInput::kFields; ++i)
                        r.input.at(i) =
                            static_cast<int32_t>(static_cast<uint32_t>(seat.input.at(i)) +
                                                 static_cast<uint32_t>(given.at(i)));
                    r.input_known = seat.input_known;
                } else {
                    r.input = given;
                    seat.input_known = true;
                }
                seat.input = r.input;
                seat.has_input = true;
                break;
            }
            case kMessage: {
                r.kind = ThKind::message;
                r.cid = client_id(in);
                const int32_t size = in.in_range(0, kThMaxMessageBytes, "message size");
                r.data = in.raw(static_cast<size_t>(std::max(size, 0)));
                break;
            }
            case kJoin:
                r.kind = ThKind::join;
                r.cid = client_id(in);
                break;
            case kDrop:
                r.kind = ThKind::drop;
                r.cid = client_id(in);
                r.text = in.string();
                if (in.ok()) {
                    // The client's next connection starts with a whole input (INPUT_NEW).
                    next.seat_of(r.cid).has_input = false;
                }
                break;
            case kConsoleCommand: {
                r.kind = ThKind::console_command;
                r.cid = in.in_range(-1, kThMaxClients - 1, "client id");
                r.flag_mask = in.integer();
                r.text = in.string();
                const int32_t count = in.in_range(0, kThMaxArguments, "argument count");
                for (int32_t i = 0; i < count && in.ok(); ++i)
                    r.args.push_back(in.string());
                break;
            }
            case kEx: {
                r.kind = ThKind::ex;
                const auto id = in.raw(16);
                if (in.ok()) std::copy(id.begin(), id.end(), r.uuid.begin());
                const int32_t size = in.in_range(0, kThMaxExBytes, "extra record size");
                r.data = in.raw(static_cast<size_t>(std::max(size, 0)));
                if (in.ok()) {
                    r.ex = th_ex_of(r.uuid);
                    const ThUuid kept = r.uuid;
                    if (!read_ex_payload(r))
                        in.fail(std::string("extra record ") + th_ex_name(r.ex) +
                                " holds what that record cannot");
                    // The payload's UUIDs (a connection's, a save's) stay in `uuid` for
                    // those records; the others keep the record's own.
                    if (r.ex != ThEx::ddnetver && r.ex != ThEx::save_success &&
                        r.ex != ThEx::load_success)
                        r.uuid = kept;
                }
                break;
            }
            default:
                in.fail("no record kind " + std::to_string(first));
        }
    }
    if (in.ran_out()) {
        need_more = true;
        return std::nullopt;
    }
    if (!in.ok()) {
        problem = in.problem();
        return std::nullopt;
    }
    r.tick = next.tick;
    r.end = base + in.pos();
    if (undo) {
        *undo = ThUndo{
            .tick = state.tick,
            .last_player_cid = state.last_player_cid,
            .finished = state.finished,
            .cid = next.cid,
            .seat = next.cid >= 0 ? state.seats[static_cast<size_t>(next.cid)] : ThState::Seat{}};
    }
    state.tick = next.tick;
    state.last_player_cid = next.last_player_cid;
    state.finished = next.finished;
    if (next.cid >= 0) state.seats[static_cast<size_t>(next.cid)] = next.seat;
    return r;
}

std::vector<ThProblem> TeehistorianReader::take_problems() {
    std::vector<ThProblem> out;
    out.swap(problems_);
    return out;
}

ThStatus TeehistorianReader::read_header(std::span<const uint8_t> bytes, bool at_end) {
    if (bytes.size() < kTeehistorianUuid.size()) {
        if (!at_end) return ThStatus::need_more;
        header_problem_ = "the file is shorter than the teehistorian marker";
        return ThStatus::bad_header;
    }
    if (!std::equal(kTeehistorianUuid.begin(), kTeehistorianUuid.end(), bytes.begin())) {
        header_problem_ = "no teehistorian marker (the UUID of teehistorian@ddnet.tw) at its start";
        return ThStatus::bad_header;
    }
    const auto rest = bytes.subspan(kTeehistorianUuid.size());
    const size_t limit = std::min(rest.size(), kThMaxHeaderBytes);
    const void* nul = std::memchr(rest.data(), 0, limit);
    if (!nul) {
        if (rest.size() >= kThMaxHeaderBytes) {
            header_problem_ = "the header is longer than 1 MiB";
            return ThStatus::bad_header;
        }
        if (!at_end) return ThStatus::need_more;
        header_problem_ = "the file ends inside its header";
        return ThStatus::bad_header;
    }
    const size_t length = static_cast<const uint8_t*>(nul) - rest.data();
    header_.json.assign(reinterpret_cast<const char*>(rest.data()), length);
    header_.size = kTeehistorianUuid.size() + length + 1;
    offset_ += header_.size;
    state_.header_read = true;
    return ThStatus::record;  // the caller goes on to the first record
}

int TeehistorianReader::sound_records_from(std::span<const uint8_t> bytes, size_t from, int want,
                                           bool& ran_out) const {
    ThState trial = state_;
    size_t pos = from;
    ran_out = false;
    for (int found = 0; found < want; ++found) {
        bool need_more = false;
        std::string problem;
        auto record = parse_th_record(bytes, pos, 0, trial, need_more, problem);
        if (need_more) {
            ran_out = true;
            return found;
        }
        if (!record) return found;
        if (record->kind == ThKind::finish) return want;  // a sound end is as good
        pos = record->end;
    }
    return want;
}

ThStatus TeehistorianReader::read(std::span<const uint8_t> bytes, ThRecord& record, bool at_end) {
    if (!state_.header_read) {
        // A reader resumed at a saved place has its header read already; a new one starts
        // at the file's first byte.
        const ThStatus status = read_header(bytes, at_end);
        if (status != ThStatus::record) return status;
        bytes = bytes.subspan(header_.size);
    }
    if (state_.finished) return ThStatus::finished;
    bool need_more = false;
    std::string problem;
    const int32_t tick_before = state_.tick;
    ThUndo undo;
    if (auto r = parse_th_record(bytes, 0, offset_, state_, need_more, problem, &undo)) {
        record = std::move(*r);
        if (record.tick != tick_before) {
            tick_start_offset_ = offset_;
            // The state before this record: the one after it, with what it changed undone.
            tick_start_state_ = state_;
            tick_start_state_.tick = undo.tick;
            tick_start_state_.last_player_cid = undo.last_player_cid;
            tick_start_state_.finished = undo.finished;
            if (undo.cid >= 0) tick_start_state_.seats[static_cast<size_t>(undo.cid)] = undo.seat;
        }
        offset_ = record.end;
        return ThStatus::record;
    }
    if (need_more) {
        if (at_end && !bytes.empty()) {
            problems_.push_back({offset_, "the file ends inside a record (" +
                                              std::to_string(bytes.size()) +
                                              " bytes cut off): a truncated tail"});
            skipped_bytes_ += bytes.size();
            offset_ += bytes.size();
        }
        return ThStatus::need_more;
    }
    // Damage: the next place from which kResyncRecords records read sound (or, in a file
    // that ends there, all the records left). The state across the stretch is lost:
    // positions and inputs after it are relative to what the skipped records changed, so
    // every seat's position and input are unknown until a record gives them whole again.
    size_t resume = 0;
    for (size_t from = 1; from < bytes.size() && resume == 0; ++from) {
        bool ran_out = false;
        const int sound = sound_records_from(bytes, from, kResyncRecords, ran_out);
        if (sound >= kResyncRecords)
            resume = from;
        else if (ran_out && !at_end)
            return ThStatus::need_more;  // wait for bytes to judge
        else if (ran_out && sound > 0)
            resume = from;
    }
    if (resume == 0) {
        if (!at_end) return ThStatus::need_more;
        resume = bytes.size();
    }
    problems_.push_back({offset_, "bytes " + std::to_string(offset_) + " to " +
                                      std::to_string(offset_ + resume) + " damaged (" + problem +
                                      "); skipped"});
    skipped_bytes_ += resume;
    offset_ += resume;
    for (auto& seat : state_.seats) {
        seat.known = false;
        seat.input_known = false;
    }
    state_.last_player_cid = kThMaxClients;
    if (resume == bytes.size()) return ThStatus::need_more;
    return read(bytes.subspan(resume), record, at_end);
}

}  // namespace arbiter::ddnet
