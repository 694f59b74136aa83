#include "osr_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

#include <lzma.h>

namespace arbiter::osu {

namespace {

// osu! stable keeps a frame's time in an int: an accumulated time outside it is no replay.
constexpr int64_t kMaxFrameTimeMs = std::numeric_limits<int32_t>::max();
// osu!'s own parser refuses coordinates beyond this (Parsing.MAX_COORDINATE_VALUE).
constexpr double kMaxCoordinate = 131072.0;
// .NET ticks: 0001-01-01 to 9999-12-31, and the Unix epoch in them.
constexpr int64_t kMaxDotNetTicks = 3155378975999999999;
constexpr int64_t kUnixEpochTicks = 621355968000000000;
// The life bar's text, at most (a point every two seconds of a day is under 1 MB).
constexpr uint64_t kMaxLifeBarBytes = 1u << 20;

std::string shown(std::string_view text) {
    std::string out = "'";
    for (char c : text.substr(0, 40)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        }
    }
    if (text.size() > 40) out += "...";
    return out + "'";
}

// The byte where `text` stops being valid UTF-8 (overlongs, surrogates and code points past
// U+10FFFF included), or nullopt.
std::optional<size_t> utf8_error(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        size_t n = 0;
        uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return i;
        }
        for (size_t k = 1; k <= n; ++k) {
            if (i + k >= text.size()) return i;
            const auto d = static_cast<unsigned char>(text[i + k]);
            if ((d & 0xc0) != 0x80) return i;
            cp = (cp << 6) | (d & 0x3f);
        }
        const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
        i += n + 1;
    }
    return std::nullopt;
}

class Cursor {
  public:
    explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    uint64_t offset() const { return at_; }
    uint64_t left() const { return bytes_.size() - at_; }

    [[noreturn]] void fail(const std::string& what) const { throw OsrError(at_, false, what); }
    [[noreturn]] void fail_at(uint64_t offset, const std::string& what) const {
        throw OsrError(offset, false, what);
    }

    void need(uint64_t n, const char* what) const {
        if (left() < n)
            fail(std::string("the file ends inside ") + what + " (" + std::to_string(n) +
                 " bytes needed, " + std::to_string(left()) + " left)");
    }
    template <class T>
    T get(const char* what) {
        need(sizeof(T), what);
        T value;
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));  // little-endian, as written
        at_ += sizeof(T);
        return value;
    }
    std::span<const uint8_t> take(uint64_t n, const char* what) {
        need(n, what);
        auto out = bytes_.subspan(at_, n);
        at_ += n;
        return out;
    }

    // A .NET string: 0x00 absent, or 0x0b, a ULEB128 length, then that many UTF-8 bytes.
    std::optional<std::string> string(const char* what, uint64_t max_bytes) {
        const uint64_t start = at_;
        const auto marker = get<uint8_t>(what);
        if (marker == 0x00) return std::nullopt;
        if (marker != 0x0b)
            fail_at(start, std::string(what) + ": string marker 0x" + hex(marker) +
                               " is neither 0x00 (absent) nor 0x0b");
        uint64_t length = 0;
        for (int shift = 0;; shift += 7) {
            if (shift >= 64) fail(std::string(what) + ": the ULEB128 length runs past 64 bits");
            const auto byte = get<uint8_t>(what);
            const uint64_t bits = byte & 0x7fu;
            if (shift == 63 && bits > 1)
                fail(std::string(what) + ": the ULEB128 length runs past 64 bits");
            length |= bits << shift;
            if ((byte & 0x80) == 0) break;
        }
        if (length > left())
            fail(std::string(what) + ": a string of " + std::to_string(length) +
                 " bytes, but only " + std::to_string(left()) + " are left in the file");
        if (length > max_bytes)
            fail(std::string(what) + ": a string of " + std::to_string(length) +
                 " bytes, more than the " + std::to_string(max_bytes) + " allowed");
        const uint64_t text_at = at_;
        const auto bytes = take(length, what);
        std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        if (auto bad = utf8_error(text))
            fail_at(text_at + *bad, std::string(what) + " is not valid UTF-8 (byte " +
                                        std::to_string(*bad) + " of " + shown(text) + ")");
        return text;
    }

  private:
    static std::string hex(uint8_t v) {
        char text[4];
        std::snprintf(text, sizeof text, "%02x", v);
        return text;
    }

    std::span<const uint8_t> bytes_;
    uint64_t at_ = 0;
};

std::vector<OsrLifePoint> parse_life_bar(std::string_view text, uint64_t text_offset) {
    std::vector<OsrLifePoint> points;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find(',', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = text.substr(at, end - at);
        if (!item.empty()) {
            const size_t bar = item.find('|');
            auto bad = [&](const std::string& what) {
                throw OsrError(text_offset + at, false,
                               "life bar point " + shown(item) + ": " + what);
            };
            if (bar == std::string_view::npos) bad("no '|' between time and life");
            int64_t time = 0;
            double life = 0;
            const auto t = item.substr(0, bar), l = item.substr(bar + 1);
            auto [tp, te] = std::from_chars(t.data(), t.data() + t.size(), time);
            if (te != std::errc{} || tp != t.data() + t.size() || t.empty())
                bad("the time is not an integer");
            auto [lp, le] = std::from_chars(l.data(), l.data() + l.size(), life);
            if (le != std::errc{} || lp != l.data() + l.size() || l.empty() || !std::isfinite(life))
                bad("the life is not a number");
            if (life < 0.0 || life > 1.0) bad("the life is outside 0 to 1");
            points.push_back({time, life});
        }
        at = end + 1;
    }
    return points;
}

// The LZMA stream of the frames, decompressed within the limits.
std::string decompress(std::span<const uint8_t> data, uint64_t data_offset,
                       const OsrLimits& limits) {
    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_alone_decoder(&stream, limits.lzma_memory_bytes) != LZMA_OK)
        throw OsrError(data_offset, false, "the LZMA decoder could not be started");
    struct End {
        lzma_stream* s;
        ~End() { lzma_end(s); }
    } end{&stream};
    std::string out;
    stream.next_in = data.data();
    stream.avail_in = data.size();
    char chunk[64 * 1024];
    while (true) {
        stream.next_out = reinterpret_cast<uint8_t*>(chunk);
        stream.avail_out = sizeof chunk;
        const lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
        const size_t produced = sizeof chunk - stream.avail_out;
        if (out.size() + produced > limits.max_decompressed_bytes)
            throw OsrError(data_offset + stream.total_in, false,
                           "the frames decompress to more than " +
                               std::to_string(limits.max_decompressed_bytes) +
                               " bytes (the limit)");
        out.append(chunk, produced);
        const uint64_t at = data_offset + stream.total_in;
        switch (ret) {
            case LZMA_OK:
                if (produced == 0 && stream.avail_in == 0)
                    throw OsrError(at, false, "the LZMA stream is cut short");
                continue;
            case LZMA_STREAM_END:
                if (stream.avail_in != 0)
                    throw OsrError(at, false,
                                   std::to_string(stream.avail_in) +
                                       " byte(s) of the compressed frames after the end of "
                                       "their LZMA stream");
                return out;
            case LZMA_BUF_ERROR:
                throw OsrError(at, false, "the LZMA stream is cut short");
            case LZMA_MEMLIMIT_ERROR:
            case LZMA_MEM_ERROR:
                throw OsrError(data_offset, false,
                               "the LZMA stream needs more than the " +
                                   std::to_string(limits.lzma_memory_bytes) +
                                   " bytes of decoder memory allowed (its dictionary size)");
            case LZMA_FORMAT_ERROR:
                throw OsrError(data_offset, false,
                               "the compressed frames are not an LZMA stream (bad header)");
            case LZMA_OPTIONS_ERROR:
                throw OsrError(data_offset, false, "the LZMA header's options are not supported");
            case LZMA_DATA_ERROR:
            default:
                throw OsrError(at, false, "the LZMA stream is damaged");
        }
    }
}

template <class T>
bool parse_number(std::string_view text, T& value) {
    if (text.empty()) return false;
    if constexpr (std::is_floating_point_v<T>) {
        // C# writes floats with an exponent at times ("1E-05"); from_chars reads both.
        auto [p, e] = std::from_chars(text.data(), text.data() + text.size(), value,
                                      std::chars_format::general);
        return e == std::errc{} && p == text.data() + text.size() && std::isfinite(value);
    } else {
        auto [p, e] = std::from_chars(text.data(), text.data() + text.size(), value);
        return e == std::errc{} && p == text.data() + text.size();
    }
}

void parse_frames(std::string_view text, OsrReplay& replay) {
    int64_t time = 0;
    size_t at = 0;
    uint64_t number = 0;  // the frame's number in the text, from 1
    while (at < text.size()) {
        size_t end = text.find(',', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = text.substr(at, end - at);
        const uint64_t item_at = at;
        at = end + 1;
        if (item.empty()) {
            // osu! ends the text with a comma: one empty item at the end, none elsewhere.
            if (end == text.size() || end + 1 == text.size()) continue;
            throw OsrError(item_at, true,
                           "frame " + std::to_string(number + 1) + " is empty (two commas)");
        }
        ++number;
        auto bad = [&](const std::string& what) {
            throw OsrError(item_at, true,
                           "frame " + std::to_string(number) + " " + shown(item) + ": " + what);
        };
        std::string_view fields[4];
        size_t field = 0, from = 0;
        for (size_t i = 0; i <= item.size(); ++i) {
            if (i == item.size() || item[i] == '|') {
                if (field == 4) bad("more than four fields (w|x|y|z)");
                fields[field++] = item.substr(from, i - from);
                from = i + 1;
            }
        }
        if (field != 4) bad("fewer than four fields (w|x|y|z)");
        int32_t delta = 0, keys = 0;
        double x = 0, y = 0;
        if (!parse_number(fields[0], delta)) bad("the time delta is not a 32-bit integer");
        if (!parse_number(fields[1], x)) bad("x is not a finite number");
        if (!parse_number(fields[2], y)) bad("y is not a finite number");
        if (!parse_number(fields[3], keys)) bad("the keys are not a 32-bit integer");
        if (delta == kSeedFrameDelta) {
            if (replay.seed) bad("a second seed frame (-12345)");
            replay.seed = keys;
            continue;
        }
        if (std::fabs(x) > kMaxCoordinate || std::fabs(y) > kMaxCoordinate)
            bad("the cursor is beyond +-131072, where osu! itself refuses a frame");
        if (keys < 0) bad("the keys are negative");
        time += delta;
        if (time > kMaxFrameTimeMs || time < -kMaxFrameTimeMs)
            bad("the time reaches " + std::to_string(time) +
                " ms, beyond what osu! keeps in a frame (+-2^31 ms)");
        OsrFrame frame;
        frame.time_ms = time;
        frame.delta_ms = delta;
        frame.x = x;
        frame.y = y;
        frame.keys = keys;
        frame.placeholder = replay.frames.size() < 2 && x == 256.0 && y == -500.0;
        replay.frames.push_back(frame);
    }
}

}  // namespace

OsrError::OsrError(uint64_t offset, bool in_frames, const std::string& what)
    : std::runtime_error((in_frames ? "frames byte " : "offset ") + std::to_string(offset) + ": " +
                         what),
      offset_(offset),
      in_frames_(in_frames) {}

const char* to_string(GameMode mode) {
    switch (mode) {
        case GameMode::standard:
            return "osu!";
        case GameMode::taiko:
            return "osu!taiko";
        case GameMode::catch_the_beat:
            return "osu!catch";
        case GameMode::mania:
            return "osu!mania";
    }
    return "?";
}

std::optional<int64_t> timestamp_unix_us(int64_t ticks) {
    if (ticks < 0 || ticks > kMaxDotNetTicks) return std::nullopt;
    return (ticks - kUnixEpochTicks) / 10;
}

OsrReplay read_osr(std::span<const uint8_t> file, const OsrLimits& limits) {
    Cursor in(file);
    OsrReplay replay;
    OsrHeader& h = replay.header;
    if (file.size() > limits.max_file_bytes)
        in.fail("the file has " + std::to_string(file.size()) + " bytes, more than the " +
                std::to_string(limits.max_file_bytes) + " allowed");
    const auto mode = in.get<uint8_t>("the game mode");
    if (mode > 3)
        in.fail_at(0, "game mode " + std::to_string(mode) +
                          ": not one of osu!'s four (0 standard, 1 taiko, 2 catch, 3 mania)");
    h.mode = static_cast<GameMode>(mode);
    h.version = in.get<int32_t>("the version");
    const uint64_t hash_limit = 1024;  // an MD5 is 32 hex digits; a little room, no more
    h.beatmap_md5 = in.string("the beatmap MD5", hash_limit);
    h.player_name = in.string("the player name", 4096);
    h.replay_md5 = in.string("the replay MD5", hash_limit);
    h.count_300 = in.get<uint16_t>("the 300 count");
    h.count_100 = in.get<uint16_t>("the 100 count");
    h.count_50 = in.get<uint16_t>("the 50 count");
    h.count_geki = in.get<uint16_t>("the geki count");
    h.count_katu = in.get<uint16_t>("the katu count");
    h.count_miss = in.get<uint16_t>("the miss count");
    h.score = in.get<int32_t>("the score");
    h.max_combo = in.get<uint16_t>("the greatest combo");
    const uint64_t perfect_at = in.offset();
    const auto perfect = in.get<uint8_t>("the perfect flag");
    if (perfect > 1)
        in.fail_at(perfect_at, "the perfect flag is " + std::to_string(perfect) + ", not 0 or 1");
    h.perfect = perfect == 1;
    h.mods = in.get<uint32_t>("the mods");
    h.life_bar = in.string("the life bar", kMaxLifeBarBytes);
    if (h.life_bar) {
        // The text ends where the cursor is.
        const uint64_t text_at = in.offset() - h.life_bar->size();
        h.life_points = parse_life_bar(*h.life_bar, text_at);
    }
    h.timestamp_ticks = in.get<int64_t>("the timestamp");
    const uint64_t length_at = in.offset();
    h.compressed_length = in.get<int32_t>("the length of the compressed frames");
    if (h.compressed_length < 0)
        in.fail_at(length_at, "the compressed frames' length is negative (" +
                                  std::to_string(h.compressed_length) + ")");
    if (static_cast<uint64_t>(h.compressed_length) > in.left())
        in.fail_at(length_at, "the compressed frames claim " + std::to_string(h.compressed_length) +
                                  " bytes, but only " + std::to_string(in.left()) +
                                  " are left in the file");
    const uint64_t data_at = in.offset();
    const auto data = in.take(static_cast<uint64_t>(h.compressed_length), "the frames");
    if (!data.empty()) {
        const std::string text = decompress(data, data_at, limits);
        replay.decompressed_bytes = text.size();
        parse_frames(text, replay);
    }

    // After the frames: the online score id (a long from 20140721, an int from 20121008),
    // then the Target Practice accuracy when that mod is on. A file that ends with the
    // frames is taken (some tools write no id); one that ends inside the id is cut short.
    if (in.left() > 0) {
        if (h.version >= 20140721) {
            replay.online_score_id = in.get<int64_t>("the online score id");
        } else if (h.version >= 20121008) {
            replay.online_score_id = in.get<int32_t>("the online score id");
        }
        if ((h.mods & kModTargetPractice) != 0) {
            const double accuracy = in.get<double>("the Target Practice accuracy");
            if (!std::isfinite(accuracy))
                in.fail_at(in.offset() - 8, "the Target Practice accuracy is not finite");
            replay.target_practice_accuracy = accuracy;
        }
        if (in.left() > 0)
            in.fail(std::to_string(in.left()) + " byte(s) after the end of the replay");
    }
    return replay;
}

OsrReplay read_osr_file(const std::filesystem::path& path, const OsrLimits& limits) {
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    if (error) throw OsrError(0, false, "cannot read " + path.string() + ": " + error.message());
    if (size > limits.max_file_bytes)
        throw OsrError(0, false,
                       path.string() + " has " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(limits.max_file_bytes) + " allowed");
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes(size);
    if (!in || !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
        throw OsrError(0, false, "cannot read " + path.string());
    return read_osr(bytes, limits);
}

bool looks_like_osr(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".osr";
}

}  // namespace arbiter::osu
