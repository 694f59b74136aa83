#include "demo_reader.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <variant>

#include "demo_codec.hpp"
#include "snapshot.hpp"
#include "varint.hpp"

namespace arbiter::ddnet {

namespace {

// Item types of the 0.6 protocol (DDNet's datasrc/network.py, in its order).
constexpr int32_t kTypeUuidMap = 0;  // NETOBJTYPE_EX: id = a local type, data = its UUID
constexpr int32_t kTypeCharacterCore = 8;
constexpr int32_t kTypeCharacter = 9;
constexpr int32_t kTypePlayerInfo = 10;
constexpr int32_t kTypeClientInfo = 11;
// The UUID of "character@netobj.ddnet.tw" (DDNet's extended character item), as the four
// integers a type-map item holds: MD5 of the Teeworlds namespace and the name, version 3.
constexpr int32_t kDDNetCharacterUuid[4] = {0x76ce455b, static_cast<int32_t>(0xf9eb3a48u),
                                            static_cast<int32_t>(0xadd7e04bu),
                                            static_cast<int32_t>(0x941d045cu)};
constexpr int32_t kMsgKill = 4;  // Sv_KillMsg
// Ticks are non-negative and below this (DDNet's MAX_TICK); a jump of more than an hour
// between two markers is damage, not a pause.
constexpr int64_t kMaxTick = 0x6fffffff;
constexpr int64_t kMaxTickStep = 50 * 3600;

uint32_t be32(std::span<const uint8_t> in, size_t at) {
    return (uint32_t{in[at]} << 24) | (uint32_t{in[at + 1]} << 16) | (uint32_t{in[at + 2]} << 8) |
           uint32_t{in[at + 3]};
}

std::string field_text(std::span<const uint8_t> in, size_t at, size_t size) {
    const auto* begin = reinterpret_cast<const char*>(in.data() + at);
    return std::string(begin, strnlen(begin, size));
}

// One chunk's framing: where its payload lies.
struct Chunk {
    uint64_t offset = 0;
    bool tick_marker = false;
    bool keyframe = false;
    int64_t tick = -1;  // tick markers: the new tick
    uint8_t type = 0;
    size_t payload_at = 0, payload_size = 0;
    size_t end = 0;
};

enum class Framing { ok, end, truncated, bad };

class Reader {
  public:
    Reader(std::span<const uint8_t> file, DemoVisitor& visitor, DemoReadResult& result)
        : file_(file), visitor_(visitor), result_(result) {}

    void run();

  private:
    bool read_header();
    Framing frame(size_t at, int64_t tick, Chunk& chunk) const;
    // Handles a framed chunk; false when its content shows the stream is damaged.
    bool handle(const Chunk& chunk, std::string& why);
    bool decode_snapshot(const Chunk& chunk, std::string& why);
    void decode_message(const Chunk& chunk, std::span<const int32_t> ints);
    void emit(const Snapshot& snapshot, const Chunk& chunk);
    // From a damaged chunk at `at`: the next keyframe whose snapshot decodes.
    std::optional<size_t> resync(size_t at) const;
    void problem(uint64_t offset, std::string what) {
        result_.problems.push_back({offset, std::move(what)});
    }

    std::span<const uint8_t> file_;
    DemoVisitor& visitor_;
    DemoReadResult& result_;
    size_t chunks_at_ = 0;
    int64_t tick_ = -1;
    bool keyframe_ = false;
    std::optional<Snapshot> base_;
};

bool Reader::read_header() {
    if (file_.size() < kHeaderBytes) {
        problem(0, "not a demo: " + std::to_string(file_.size()) + " bytes, shorter than a header");
        return false;
    }
    if (!is_demo_magic(file_)) {
        problem(0, "not a demo: no TWDEMO marker");
        return false;
    }
    DemoHeader& h = result_.header;
    h.version = file_[7];
    h.net_version = field_text(file_, 8, 64);
    h.map_name = field_text(file_, 72, 64);
    h.map_size = be32(file_, 136);
    h.map_crc = be32(file_, 140);
    h.type = field_text(file_, 144, 8);
    h.length_s = be32(file_, 152);
    h.timestamp = field_text(file_, 156, 20);
    if (h.version < 4 || h.version > 6) {
        problem(7, "demo version " + std::to_string(h.version) + " is not read (4 to 6 are)");
        return false;
    }
    if (h.net_version.starts_with("0.7")) {
        problem(8, "demo of the 0.7 protocol ('" + h.net_version +
                       "'): only 0.6 demos (DDNet's own) are read");
        return false;
    }
    size_t at = kHeaderBytes;
    if (file_.size() < at + kMarkersBytes) {
        problem(at, "truncated in the timeline markers");
        return false;
    }
    const uint32_t markers = std::min<uint32_t>(be32(file_, at), 64);
    for (uint32_t i = 0; i < markers; ++i)
        h.markers.push_back(static_cast<int32_t>(be32(file_, at + 4 + 4 * i)));
    at += kMarkersBytes;
    if (h.version >= 6 && file_.size() >= at + 16 &&
        std::memcmp(file_.data() + at, kSha256Extension, 16) == 0) {
        if (file_.size() < at + 48) {
            problem(at, "truncated in the map's SHA-256");
            return false;
        }
        h.has_sha256 = true;
        at += 48;
    }
    if (h.map_size > file_.size() - at) {
        problem(at, "the map data (" + std::to_string(h.map_size) + " bytes) runs past the end");
        return false;
    }
    chunks_at_ = at + h.map_size;
    return true;
}

Framing Reader::frame(size_t at, int64_t tick, Chunk& chunk) const {
    if (at >= file_.size()) return Framing::end;
    chunk = {};
    chunk.offset = at;
    const uint8_t b = file_[at++];
    if (b & kTickMarker) {
        chunk.tick_marker = true;
        chunk.keyframe = (b & kKeyframe) != 0;
        const int version = result_.header.version;
        const int legacy_step = b & 0x3f;
        if (version < 5 && legacy_step != 0) {
            if (tick < 0) return Framing::bad;
            chunk.tick = tick + legacy_step;
        } else if (version >= 5 && (b & kTickCompressed)) {
            if (tick < 0) return Framing::bad;
            chunk.tick = tick + (b & 0x1f);
        } else {
            if (file_.size() - at < 4) return Framing::truncated;
            chunk.tick = be32(file_, at);
            at += 4;
        }
        if (chunk.tick < 0 || chunk.tick >= kMaxTick) return Framing::bad;
        chunk.end = at;
        return Framing::ok;
    }
    chunk.type = (b >> 5) & 3;
    size_t size = b & 0x1f;
    if (size == 30) {
        if (file_.size() - at < 1) return Framing::truncated;
        size = file_[at++];
    } else if (size == 31) {
        if (file_.size() - at < 2) return Framing::truncated;
        size = file_[at] | (size_t{file_[at + 1]} << 8);
        at += 2;
    }
    chunk.payload_at = at;
    chunk.payload_size = size;
    if (file_.size() - at < size) return Framing::truncated;
    chunk.end = at + size;
    return Framing::ok;
}

void Reader::run() {
    if (!read_header()) return;
    result_.header_ok = true;
    visitor_.on_header(result_.header);
    size_t at = chunks_at_;
    for (;;) {
        Chunk chunk;
        const Framing framing = frame(at, tick_, chunk);
        if (framing == Framing::end) return;
        if (framing == Framing::truncated) {
            problem(at, "truncated: the chunk at offset " + std::to_string(at) +
                            " runs past the end of the file (" + std::to_string(file_.size()) +
                            " bytes); everything before it was read");
            return;
        }
        std::string why;
        bool ok = framing == Framing::ok;
        if (!ok) why = "bad tick marker";
        if (ok) {
            ++result_.chunks;
            ok = handle(chunk, why);
        }
        if (ok) {
            at = chunk.end;
            continue;
        }
        // Damage: what follows cannot be trusted until a keyframe decodes again.
        base_.reset();
        const std::optional<size_t> next = resync(at + 1);
        const size_t resume = next.value_or(file_.size());
        problem(at, "damaged chunk at offset " + std::to_string(at) + " (" + why +
                        (next ? "); skipped to the keyframe at offset " + std::to_string(resume)
                              : "); no keyframe after it decodes: the rest is skipped") +
                        " (" + std::to_string(resume - at) + " bytes)");
        result_.bytes_skipped += resume - at;
        visitor_.on_gap(at, resume);
        at = resume;
        tick_ = -1;  // the keyframe's full tick marker sets it again
    }
}

bool Reader::handle(const Chunk& chunk, std::string& why) {
    if (chunk.tick_marker) {
        if (tick_ >= 0 && (chunk.tick < tick_ || chunk.tick - tick_ > kMaxTickStep)) {
            why = "tick " + std::to_string(chunk.tick) + " after tick " + std::to_string(tick_);
            return false;
        }
        tick_ = chunk.tick;
        keyframe_ = chunk.keyframe;
        ++result_.tick_markers;
        if (result_.first_tick < 0) result_.first_tick = static_cast<int32_t>(tick_);
        result_.last_tick = static_cast<int32_t>(tick_);
        return true;
    }
    if (tick_ < 0) {
        why = "a chunk before any tick marker";
        return false;
    }
    switch (chunk.type) {
        case static_cast<uint8_t>(ChunkType::snapshot):
        case static_cast<uint8_t>(ChunkType::delta):
            return decode_snapshot(chunk, why);
        case static_cast<uint8_t>(ChunkType::message): {
            auto ints = decode_chunk_payload(file_.subspan(chunk.payload_at, chunk.payload_size));
            if (!ints) {
                why = "a message chunk that does not decode";
                return false;
            }
            decode_message(chunk, *ints);
            return true;
        }
        default:
            why = "a chunk of unknown type 0";
            return false;
    }
}

bool Reader::decode_snapshot(const Chunk& chunk, std::string& why) {
    const bool full = chunk.type == static_cast<uint8_t>(ChunkType::snapshot);
    auto ints = decode_chunk_payload(file_.subspan(chunk.payload_at, chunk.payload_size));
    if (!ints) {
        why = std::string(full ? "a snapshot" : "a delta") + " chunk that does not decode";
        return false;
    }
    std::variant<Snapshot, std::string> decoded;
    if (full) {
        decoded = parse_snapshot(*ints);
    } else {
        if (!base_) {
            why = "a delta with no snapshot before it";
            return false;
        }
        decoded = apply_delta(*base_, *ints);
    }
    if (auto* error = std::get_if<std::string>(&decoded)) {
        why = *error;
        return false;
    }
    base_ = std::move(std::get<Snapshot>(decoded));
    if (full)
        ++result_.snapshots;
    else
        ++result_.deltas;
    emit(*base_, chunk);
    return true;
}

void Reader::decode_message(const Chunk& chunk, std::span<const int32_t> ints) {
    ++result_.messages;
    const std::vector<uint8_t> bytes = ints_to_bytes(ints);
    size_t pos = 0;
    auto head = read_varint(bytes, pos);
    if (!head) return;
    DemoMessage message;
    message.tick = static_cast<int32_t>(tick_);
    message.offset = chunk.offset;
    message.system = (*head & 1) != 0;
    message.id = static_cast<int32_t>(static_cast<uint32_t>(*head) >> 1);
    if (!message.system && message.id == kMsgKill) {
        auto killer = read_varint(bytes, pos);
        auto victim = read_varint(bytes, pos);
        auto weapon = read_varint(bytes, pos);
        if (killer && victim && weapon) message.kill = DemoMessage::Kill{*killer, *victim, *weapon};
    }
    visitor_.on_message(message);
}

void Reader::emit(const Snapshot& snapshot, const Chunk& chunk) {
    DemoSnapshot out;
    out.tick = static_cast<int32_t>(tick_);
    out.offset = chunk.offset;
    out.keyframe = keyframe_;
    out.items = snapshot.items().size();
    // DDNet's own character item has a local type, named by a type-map item.
    std::optional<int32_t> ddnet_character_type;
    for (const SnapItem& item : snapshot.items())
        if (item.type == kTypeUuidMap && item.data.size() >= 4 &&
            std::equal(item.data.begin(), item.data.begin() + 4, std::begin(kDDNetCharacterUuid)))
            ddnet_character_type = item.id;
    for (const SnapItem& item : snapshot.items()) {
        const auto& d = item.data;
        if ((item.type == kTypeCharacter && d.size() >= 22) ||
            (item.type == kTypeCharacterCore && d.size() >= 15)) {
            CharacterItem c;
            c.client_id = item.id;
            c.tick = d[0];
            c.x = d[1];
            c.y = d[2];
            c.vel_x = d[3];
            c.vel_y = d[4];
            c.angle = d[5];
            c.direction = d[6];
            c.jumped = d[7];
            c.hooked_player = d[8];
            c.hook_state = d[9];
            c.hook_tick = d[10];
            c.hook_x = d[11];
            c.hook_y = d[12];
            c.hook_dx = d[13];
            c.hook_dy = d[14];
            if (item.type == kTypeCharacter) {
                c.full = true;
                c.player_flags = d[15];
                c.health = d[16];
                c.armor = d[17];
                c.ammo = d[18];
                c.weapon = d[19];
                c.emote = d[20];
                c.attack_tick = d[21];
            }
            if (ddnet_character_type) {
                const SnapItem* extra = snapshot.find(*ddnet_character_type, item.id);
                if (extra && extra->data.size() >= 10) {
                    c.target_x = extra->data[8];
                    c.target_y = extra->data[9];
                }
            }
            out.characters.push_back(c);
        } else if (item.type == kTypeClientInfo && d.size() >= 17) {
            ClientInfoItem c;
            c.client_id = item.id;
            c.name = ints_to_string(std::span(d).subspan(0, 4));
            c.clan = ints_to_string(std::span(d).subspan(4, 3));
            c.country = d[7];
            c.skin = ints_to_string(std::span(d).subspan(8, 6));
            out.clients.push_back(std::move(c));
        } else if (item.type == kTypePlayerInfo && d.size() >= 5) {
            out.players.push_back({d[1], d[0] != 0, d[2], d[3], d[4]});
        }
    }
    visitor_.on_snapshot(out);
}

std::optional<size_t> Reader::resync(size_t at) const {
    // A keyframe: a full tick marker with the keyframe bit, then a snapshot chunk that
    // decodes into a valid snapshot. Checking the decode makes a false match in
    // compressed data vanishingly unlikely.
    const uint8_t marker = kTickMarker | kKeyframe;
    for (size_t i = at; i + 5 < file_.size(); ++i) {
        if (file_[i] != marker) continue;
        Chunk tick_chunk;
        if (frame(i, -1, tick_chunk) != Framing::ok) continue;
        if (result_.last_tick >= 0 && (tick_chunk.tick < result_.last_tick ||
                                       tick_chunk.tick - result_.last_tick > kMaxTickStep))
            continue;
        Chunk snap;
        if (frame(tick_chunk.end, tick_chunk.tick, snap) != Framing::ok || snap.tick_marker ||
            snap.type != static_cast<uint8_t>(ChunkType::snapshot))
            continue;
        auto ints = decode_chunk_payload(file_.subspan(snap.payload_at, snap.payload_size));
        if (!ints || std::holds_alternative<std::string>(parse_snapshot(*ints))) continue;
        return i;
    }
    return std::nullopt;
}

}  // namespace

bool is_demo_magic(std::span<const uint8_t> head) {
    static constexpr uint8_t kMagic[7] = {'T', 'W', 'D', 'E', 'M', 'O', 0};
    return head.size() >= 7 && std::equal(head.begin(), head.begin() + 7, std::begin(kMagic));
}

DemoReadResult read_demo(std::span<const uint8_t> file, DemoVisitor& visitor) {
    DemoReadResult result;
    Reader(file, visitor, result).run();
    return result;
}

DemoReadResult read_demo_file(const std::filesystem::path& path, DemoVisitor& visitor,
                              uint64_t max_bytes) {
    DemoReadResult result;
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    if (error) {
        result.problems.push_back({0, "cannot read " + path.string() + ": " + error.message()});
        return result;
    }
    if (size > max_bytes) {
        result.problems.push_back({0, path.string() + ": " + std::to_string(size) +
                                          " bytes, more than a demo's " +
                                          std::to_string(max_bytes)});
        return result;
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    if (!in ||
        !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
        result.problems.push_back({0, "cannot read " + path.string()});
        return result;
    }
    return read_demo(bytes, visitor);
}

}  // namespace arbiter::ddnet
