// Reading osu! replays (`.osr`), as the osu! wiki's "osr (file format)" page describes
// them and osu! stable writes them: a header (game mode, client version, beatmap MD5,
// player name, replay MD5, hit counts, score, combo, mods, life bar, timestamp), the
// replay's frames as one LZMA stream ("LZMA alone": 13-byte header, then the data), and
// the online score id (and, with the Target Practice mod, its accuracy) after them.
//
// The frames are text, `w|x|y|z` separated by commas: w the milliseconds since the frame
// before (negative at times: osu! stable writes one after a skip, and now and then in
// play), x and y the cursor on the 512 x 384 playfield (outside it too), z the keys held
// (bits: 1 M1, 2 M2, 4 K1 with M1, 8 K2 with M2, 16 smoke). Three frames are special:
// the first two of a stable replay sit at (256, -500) with no cursor (times 0 and the skip
// boundary), and the last is `-12345|0|0|SEED`, the seed of the random numbers of the
// play, which is no frame. The reader keeps every real frame with its accumulated time
// (the placeholders included, marked), and hands the seed apart.
//
// Bad input is refused with an OsrError naming the byte offset in the file (or, inside the
// frames, the offset in the decompressed text and the frame's number) and what was wrong.
// Every length is checked against what is there before anything is allocated, and the
// decompressed frames are bounded (`OsrLimits`), never by a size the file claims alone.
// This library depends on liblzma only (the fuzz harness and the tests use it alone).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace arbiter::osu {

enum class GameMode : uint8_t { standard = 0, taiko = 1, catch_the_beat = 2, mania = 3 };
const char* to_string(GameMode mode);

// Key bits of a frame (z).
constexpr int32_t kKeyM1 = 1, kKeyM2 = 2, kKeyK1 = 4, kKeyK2 = 8, kKeySmoke = 16;
// The mods (a bit set); those the importer and the docs name.
constexpr uint32_t kModNoFail = 1u << 0, kModEasy = 1u << 1, kModHidden = 1u << 3,
                   kModHardRock = 1u << 4, kModDoubleTime = 1u << 6, kModRelax = 1u << 7,
                   kModHalfTime = 1u << 8, kModNightcore = 1u << 9, kModFlashlight = 1u << 10,
                   kModAutoplay = 1u << 11, kModAutopilot = 1u << 13, kModTargetPractice = 1u << 23;
// The time delta of the seed frame.
constexpr int32_t kSeedFrameDelta = -12345;

struct OsrLifePoint {
    int64_t time_ms = 0;
    double life = 0.0;  // 0 to 1
};

struct OsrHeader {
    GameMode mode = GameMode::standard;
    int32_t version = 0;  // the client's build date, e.g. 20190906
    // The strings are absent (nullopt) when the file says so (a 0x00 byte), which is not
    // the same as empty. Each is valid UTF-8.
    std::optional<std::string> beatmap_md5, player_name, replay_md5;
    uint16_t count_300 = 0, count_100 = 0, count_50 = 0, count_geki = 0, count_katu = 0,
             count_miss = 0;
    int32_t score = 0;
    uint16_t max_combo = 0;
    bool perfect = false;
    uint32_t mods = 0;
    std::optional<std::string> life_bar;    // "ms|life,ms|life,...", as written
    std::vector<OsrLifePoint> life_points;  // the life bar read (empty when absent or empty)
    int64_t timestamp_ticks = 0;            // .NET ticks (100 ns since 0001-01-01), as written
    int32_t compressed_length = 0;          // of the LZMA stream
};

// The .NET timestamp in microseconds since the Unix epoch, or nullopt when the ticks are
// outside .NET's dates (0001-01-01 to 9999-12-31).
std::optional<int64_t> timestamp_unix_us(int64_t ticks);

struct OsrFrame {
    int64_t time_ms = 0;   // the sum of the deltas up to this frame (the seed frame excluded)
    int32_t delta_ms = 0;  // w, as written
    double x = 0, y = 0;   // the cursor, osu! pixels
    int32_t keys = 0;      // z
    // One of the first two frames at (256, -500): osu! stable's placeholders, no cursor.
    bool placeholder = false;
};

struct OsrReplay {
    OsrHeader header;
    std::vector<OsrFrame> frames;                    // in the file's order, the seed frame left out
    std::optional<int32_t> seed;                     // the seed frame's z, where there is one
    uint64_t decompressed_bytes = 0;                 // of the frames' text
    std::optional<int64_t> online_score_id;          // after the frames (clients from 2012 on)
    std::optional<double> target_practice_accuracy;  // with the Target Practice mod
};

struct OsrLimits {
    uint64_t max_file_bytes = 256ull << 20;
    // About 3 million frames (22 bytes each): 50 minutes at 1,000 frames a second. The
    // largest replay of circleguard's data, 4 minutes at an unlimited frame rate (210,758
    // frames), decompresses to 4.6 MB.
    uint64_t max_decompressed_bytes = 64ull << 20;
    uint64_t lzma_memory_bytes = 128ull << 20;  // the decoder's memory (the dictionary)
};

// Bad input: `offset` is in the file, or in the decompressed frames when `in_frames`.
class OsrError : public std::runtime_error {
  public:
    OsrError(uint64_t offset, bool in_frames, const std::string& what);
    uint64_t offset() const { return offset_; }
    bool in_frames() const { return in_frames_; }

  private:
    uint64_t offset_;
    bool in_frames_;
};

// Reads a whole replay held in memory; throws OsrError.
OsrReplay read_osr(std::span<const uint8_t> file, const OsrLimits& limits = {});
// Reads a replay file; throws OsrError (offset 0) when it cannot be read or is over
// `limits.max_file_bytes`.
OsrReplay read_osr_file(const std::filesystem::path& path, const OsrLimits& limits = {});

// True for a path ending in .osr (any case).
bool looks_like_osr(const std::filesystem::path& path);

}  // namespace arbiter::osu
