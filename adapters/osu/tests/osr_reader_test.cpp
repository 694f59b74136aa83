// The .osr reader: every header field, the frames and their special ones, and bad input of
// every kind refused naming its offset; then the real replays of ../shared/data/osu.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "osr_builder.hpp"
#include "osr_reader.hpp"

namespace arbiter::osu {
namespace {

using test::build_osr;
using test::frames_text;
using test::OsrSpec;

// The message of the OsrError that reading `bytes` throws, or "" when it reads.
std::string error_of(const std::vector<uint8_t>& bytes, const OsrLimits& limits = {}) {
    try {
        read_osr(bytes, limits);
    } catch (const OsrError& error) {
        return error.what();
    }
    return "";
}

// Where the compressed frames start in a file of `spec` (after the length field).
size_t frames_offset(const OsrSpec& spec) {
    OsrSpec header_only = spec;
    header_only.frames.clear();
    header_only.compressed = std::vector<uint8_t>{};
    header_only.online_score_id.reset();
    header_only.target_practice_accuracy.reset();
    return build_osr(header_only).size();
}

TEST(OsrReader, ReadsEveryHeaderField) {
    OsrSpec spec;
    spec.mode = 0;
    spec.version = 20210520;
    spec.beatmap_md5 = "0123456789abcdef0123456789abcdef";
    spec.player_name = "Zoë 東方";  // UTF-8
    spec.replay_md5.reset();        // absent, not empty
    spec.count_300 = 65535;
    spec.count_100 = 1;
    spec.count_50 = 2;
    spec.count_geki = 3;
    spec.count_katu = 4;
    spec.count_miss = 5;
    spec.score = 2147483647;
    spec.max_combo = 999;
    spec.perfect = 1;
    spec.mods = kModHidden | kModDoubleTime;
    spec.life_bar = "206|1,2264|0.5,5072|0,";
    spec.timestamp_ticks = 637580000000000000;
    spec.frames = frames_text({"17|100|200|0"});
    spec.online_score_id = 3681047610;
    const OsrReplay r = read_osr(build_osr(spec));
    const OsrHeader& h = r.header;
    EXPECT_EQ(h.mode, GameMode::standard);
    EXPECT_EQ(h.version, 20210520);
    EXPECT_EQ(h.beatmap_md5, "0123456789abcdef0123456789abcdef");
    EXPECT_EQ(h.player_name, "Zoë 東方");
    EXPECT_FALSE(h.replay_md5.has_value());
    EXPECT_EQ(h.count_300, 65535);
    EXPECT_EQ(h.count_100, 1);
    EXPECT_EQ(h.count_50, 2);
    EXPECT_EQ(h.count_geki, 3);
    EXPECT_EQ(h.count_katu, 4);
    EXPECT_EQ(h.count_miss, 5);
    EXPECT_EQ(h.score, 2147483647);
    EXPECT_EQ(h.max_combo, 999);
    EXPECT_TRUE(h.perfect);
    EXPECT_EQ(h.mods, kModHidden | kModDoubleTime);
    EXPECT_EQ(h.life_bar, "206|1,2264|0.5,5072|0,");
    ASSERT_EQ(h.life_points.size(), 3u);
    EXPECT_EQ(h.life_points[1].time_ms, 2264);
    EXPECT_DOUBLE_EQ(h.life_points[1].life, 0.5);
    EXPECT_EQ(h.timestamp_ticks, 637580000000000000);
    EXPECT_EQ(timestamp_unix_us(h.timestamp_ticks), (637580000000000000 - 621355968000000000) / 10);
    EXPECT_EQ(r.online_score_id, 3681047610);
    EXPECT_FALSE(r.target_practice_accuracy.has_value());
}

TEST(OsrReader, ReadsFramesWithTheirAccumulatedTimesAndTheSpecialOnes) {
    OsrSpec spec;
    // A replay with a skip: the second placeholder is at the skip boundary, the first real
    // frame goes back by it; a negative delta in play; an exponent as C# writes small floats.
    spec.frames =
        "0|256|-500|0,8350|256|-500|0,-8335|287.5555|292|0,16|280.8889|295.5|5,"
        "-1|281|296|5,17|1E-05|-3.5e2|10,-12345|0|0|1391279,";
    const OsrReplay r = read_osr(build_osr(spec));
    ASSERT_EQ(r.frames.size(), 6u);
    EXPECT_TRUE(r.frames[0].placeholder);
    EXPECT_TRUE(r.frames[1].placeholder);
    EXPECT_FALSE(r.frames[2].placeholder);
    const int64_t times[] = {0, 8350, 15, 31, 30, 47};
    for (size_t i = 0; i < 6; ++i)
        EXPECT_EQ(r.frames[i].time_ms, times[i]) << i;
    EXPECT_EQ(r.frames[2].delta_ms, -8335);
    EXPECT_DOUBLE_EQ(r.frames[2].x, 287.5555);
    EXPECT_DOUBLE_EQ(r.frames[3].keys, kKeyM1 | kKeyK1);
    EXPECT_DOUBLE_EQ(r.frames[5].x, 1e-5);
    EXPECT_DOUBLE_EQ(r.frames[5].y, -350.0);
    EXPECT_EQ(r.seed, 1391279);
    EXPECT_EQ(r.decompressed_bytes, spec.frames.size());
}

TEST(OsrReader, APlaceholderIsOnlyAtTheStartAndOnlyAt256Minus500) {
    OsrSpec spec;
    spec.frames = "0|256|-500|0,-1|100|100|0,5|256|-500|0,";  // no seed frame: some tools omit it
    const OsrReplay r = read_osr(build_osr(spec));
    ASSERT_EQ(r.frames.size(), 3u);
    EXPECT_TRUE(r.frames[0].placeholder);
    EXPECT_FALSE(r.frames[1].placeholder);
    EXPECT_FALSE(r.frames[2].placeholder);
    EXPECT_FALSE(r.seed.has_value());
}

TEST(OsrReader, AReplayWithoutFramesOrScoreIdIsRead) {
    OsrSpec spec;
    spec.frames.clear();
    spec.online_score_id.reset();
    const OsrReplay r = read_osr(build_osr(spec));
    EXPECT_TRUE(r.frames.empty());
    EXPECT_FALSE(r.online_score_id.has_value());
}

TEST(OsrReader, TheTargetPracticeAccuracyFollowsTheScoreId) {
    OsrSpec spec;
    spec.frames = frames_text({"16|1|2|0"});
    spec.mods = kModTargetPractice;
    spec.target_practice_accuracy = 0.875;
    const OsrReplay r = read_osr(build_osr(spec));
    EXPECT_EQ(r.target_practice_accuracy, 0.875);
}

TEST(OsrReader, OlderClientsWriteAFourByteScoreId) {
    OsrSpec spec;
    spec.version = 20130101;
    spec.frames = frames_text({"16|1|2|0"});
    spec.online_score_id.reset();
    auto bytes = build_osr(spec);
    const int32_t id = 77;
    bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(&id),
                 reinterpret_cast<const uint8_t*>(&id) + 4);
    EXPECT_EQ(read_osr(bytes).online_score_id, 77);
}

TEST(OsrReader, EveryCutOfTheFileIsRefusedNamingWhereItEnds) {
    OsrSpec spec;
    spec.frames = frames_text({"16|10|20|0", "17|30|40|5"});
    const auto whole = build_osr(spec);
    ASSERT_NO_THROW(read_osr(whole));
    for (size_t n = 0; n < whole.size(); ++n) {
        if (n == whole.size() - 8) continue;  // a file that ends with its frames is taken
        const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<long>(n));
        const std::string error = error_of(cut);
        EXPECT_NE(error, "") << "cut at " << n;
        EXPECT_EQ(error.rfind("offset ", 0), 0u) << error;
    }
}

TEST(OsrReader, AHugeStringLengthIsRefusedBeforeAnythingIsAllocated) {
    OsrSpec spec;
    spec.frames = frames_text({"16|10|20|0"});
    auto bytes = build_osr(spec);
    // The beatmap MD5 starts at offset 5: 0x0b, then its length. Claim 2^62 bytes.
    std::vector<uint8_t> forged(bytes.begin(), bytes.begin() + 6);
    forged.insert(forged.end(), {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40});
    forged.insert(forged.end(), bytes.begin() + 7, bytes.end());
    EXPECT_EQ(error_of(forged).rfind("offset 15: the beatmap MD5: a string of 4611686018427387904 "
                                     "bytes, but only",
                                     0),
              0u)
        << error_of(forged);
    // A length that never ends (past 64 bits).
    std::vector<uint8_t> endless(bytes.begin(), bytes.begin() + 6);
    endless.insert(endless.end(), 12, 0xff);
    endless.insert(endless.end(), bytes.begin() + 7, bytes.end());
    EXPECT_NE(error_of(endless).find("the ULEB128 length runs past 64 bits"), std::string::npos)
        << error_of(endless);
    // A bad string marker.
    auto marker = bytes;
    marker[5] = 0x0c;
    EXPECT_EQ(error_of(marker),
              "offset 5: the beatmap MD5: string marker 0x0c is neither 0x00 (absent) nor 0x0b");
}

TEST(OsrReader, APlayerNameThatIsNotUtf8IsRefusedAtItsByte) {
    for (const std::string& name :
         {std::string("ab\xff"), std::string("\xc0\xaf"), std::string("x\xed\xa0\x80"),
          std::string("\xf4\x90\x80\x80"), std::string("cut\xe6\x9d")}) {
        OsrSpec spec;
        spec.player_name = name;
        spec.frames = frames_text({"16|10|20|0"});
        const std::string error = error_of(build_osr(spec));
        // The name's text starts after mode (1), version (4), the MD5 (2 + 32), 0x0b, length.
        EXPECT_NE(error.find("the player name is not valid UTF-8"), std::string::npos) << error;
        EXPECT_EQ(error.rfind("offset ", 0), 0u);
        const uint64_t offset = std::stoull(error.substr(7));
        EXPECT_GE(offset, 41u) << error;
        EXPECT_LT(offset, 41u + name.size()) << error;
    }
}

TEST(OsrReader, TruncatedOrDamagedLzmaIsRefusedNamingItsOffset) {
    OsrSpec spec;
    std::vector<std::string> frames;
    for (int i = 0; i < 500; ++i)
        frames.push_back("16|" + std::to_string(i % 512) + "|" + std::to_string(i * 7 % 384) +
                         "|0");
    spec.frames = frames_text(frames);
    const auto data = test::lzma_alone(spec.frames);
    const size_t at = frames_offset(spec);

    OsrSpec cut = spec;
    cut.compressed =
        std::vector<uint8_t>(data.begin(), data.begin() + static_cast<long>(data.size() / 2));
    std::string error = error_of(build_osr(cut));
    EXPECT_NE(error.find("the LZMA stream is cut short"), std::string::npos) << error;
    EXPECT_GE(std::stoull(error.substr(7)), at);

    OsrSpec garbage = spec;
    garbage.compressed = std::vector<uint8_t>(64, 0xff);
    error = error_of(build_osr(garbage));
    EXPECT_EQ(error, "offset " + std::to_string(at) +
                         ": the compressed frames are not an LZMA stream (bad header)");

    OsrSpec damaged = spec;
    damaged.compressed = data;
    for (size_t i = 20; i < data.size(); i += 3)
        (*damaged.compressed)[i] ^= 0x5a;
    error = error_of(build_osr(damaged));
    EXPECT_NE(error, "");
    EXPECT_EQ(error.rfind("offset ", 0), 0u) << error;

    OsrSpec trailing = spec;
    trailing.compressed = data;
    trailing.compressed->push_back(0);
    error = error_of(build_osr(trailing));
    EXPECT_NE(error.find("1 byte(s) of the compressed frames after the end of their LZMA stream"),
              std::string::npos)
        << error;
}

TEST(OsrReader, CompressedLengthsThatLieAreRefused) {
    OsrSpec spec;
    spec.frames = frames_text({"16|10|20|0"});
    const size_t length_at = frames_offset(spec) - 4;
    OsrSpec negative = spec;
    negative.compressed_length = -1;
    EXPECT_EQ(
        error_of(build_osr(negative)),
        "offset " + std::to_string(length_at) + ": the compressed frames' length is negative (-1)");
    OsrSpec huge = spec;
    huge.compressed_length = 2147483647;
    EXPECT_NE(
        error_of(build_osr(huge)).find("the compressed frames claim 2147483647 bytes, but only"),
        std::string::npos);
}

TEST(OsrReader, DecompressionIsBoundedByTheLimitsNotByTheFile) {
    OsrSpec spec;
    // 2 MB of frames that compress to a few KB.
    std::string text;
    while (text.size() < (2u << 20))
        text += "16|256|192|0,";
    spec.frames = text;
    OsrLimits small;
    small.max_decompressed_bytes = 1u << 20;
    EXPECT_NE(error_of(build_osr(spec), small)
                  .find("the frames decompress to more than 1048576 bytes (the limit)"),
              std::string::npos);
    EXPECT_EQ(error_of(build_osr(spec)), "");
    // A dictionary larger than the decoder may use.
    OsrLimits tight;
    tight.lzma_memory_bytes = 1024;
    EXPECT_NE(error_of(build_osr(spec), tight).find("bytes of decoder memory allowed"),
              std::string::npos);
}

TEST(OsrReader, BadFramesAreRefusedNamingTheFrameAndItsByte) {
    struct Case {
        std::string frames, expected;
    };
    const std::vector<Case> cases = {
        {"16|1|2|0,x|1|2|0,",
         "frames byte 9: frame 2 'x|1|2|0': the time delta is not a 32-bit integer"},
        {"16|1|2,", "frames byte 0: frame 1 '16|1|2': fewer than four fields (w|x|y|z)"},
        {"16|1|2|0|9,", "frames byte 0: frame 1 '16|1|2|0|9': more than four fields (w|x|y|z)"},
        {"2147483648|1|2|0,",
         "frames byte 0: frame 1 '2147483648|1|2|0': the time delta is not a 32-bit integer"},
        {"16|1e999|2|0,", "frames byte 0: frame 1 '16|1e999|2|0': x is not a finite number"},
        {"16|nan|2|0,", "frames byte 0: frame 1 '16|nan|2|0': x is not a finite number"},
        {"16|1|inf|0,", "frames byte 0: frame 1 '16|1|inf|0': y is not a finite number"},
        {"16|200000|2|0,",
         "frames byte 0: frame 1 '16|200000|2|0': the cursor is beyond +-131072, where osu! itself "
         "refuses a frame"},
        {"16|1|2|-3,", "frames byte 0: frame 1 '16|1|2|-3': the keys are negative"},
        {"16|1|2|,", "frames byte 0: frame 1 '16|1|2|': the keys are not a 32-bit integer"},
        {"16|1|2|0,,17|1|2|0,", "frames byte 9: frame 2 is empty (two commas)"},
        {"-12345|0|0|1,-12345|0|0|2,",
         "frames byte 13: frame 2 '-12345|0|0|2': a second seed frame (-12345)"},
        {"2147483647|1|2|0,1|1|2|0,",
         "frames byte 17: frame 2 '1|1|2|0': the time reaches 2147483648 ms, beyond what osu! "
         "keeps in a frame (+-2^31 ms)"},
        {"-2147483648|1|2|0,",
         "frames byte 0: frame 1 '-2147483648|1|2|0': the time reaches -2147483648 ms, beyond what "
         "osu! keeps in a frame (+-2^31 ms)"},
    };
    for (const Case& c : cases) {
        OsrSpec spec;
        spec.frames = c.frames;
        EXPECT_EQ(error_of(build_osr(spec)), c.expected) << c.frames;
    }
}

TEST(OsrReader, HeaderValuesOutsideTheFormatAreRefused) {
    OsrSpec mode;
    mode.mode = 4;
    EXPECT_EQ(
        error_of(build_osr(mode)),
        "offset 0: game mode 4: not one of osu!'s four (0 standard, 1 taiko, 2 catch, 3 mania)");
    OsrSpec perfect;
    perfect.perfect = 2;
    EXPECT_NE(error_of(build_osr(perfect)).find("the perfect flag is 2, not 0 or 1"),
              std::string::npos);
    OsrSpec life;
    life.life_bar = "100|1,200|1.5,";
    EXPECT_NE(
        error_of(build_osr(life)).find("life bar point '200|1.5': the life is outside 0 to 1"),
        std::string::npos);
    OsrSpec life_text;
    life_text.life_bar = "100|1,2x|1,";
    EXPECT_NE(
        error_of(build_osr(life_text)).find("life bar point '2x|1': the time is not an integer"),
        std::string::npos);
    OsrSpec trailing;
    trailing.frames = frames_text({"16|1|2|0"});
    auto bytes = build_osr(trailing);
    bytes.push_back(1);
    EXPECT_EQ(error_of(bytes), "offset " + std::to_string(bytes.size() - 1) +
                                   ": 1 byte(s) after the end of the replay");
}

TEST(OsrReader, ExtremeTimestampsAreKeptRawAndNotConverted) {
    EXPECT_EQ(timestamp_unix_us(621355968000000000), 0);
    EXPECT_FALSE(timestamp_unix_us(-1).has_value());
    EXPECT_FALSE(timestamp_unix_us(INT64_MAX).has_value());
    EXPECT_TRUE(timestamp_unix_us(3155378975999999999).has_value());
    OsrSpec spec;
    spec.timestamp_ticks = INT64_MIN;
    spec.frames = frames_text({"16|1|2|0"});
    EXPECT_EQ(read_osr(build_osr(spec)).header.timestamp_ticks, INT64_MIN);
}

TEST(OsrReader, FileLimitsAndNames) {
    EXPECT_TRUE(looks_like_osr("a/b/Replay.OSR"));
    EXPECT_FALSE(looks_like_osr("a/b/replay.osr.txt"));
    OsrSpec spec;
    spec.frames = frames_text({"16|1|2|0"});
    OsrLimits tiny;
    tiny.max_file_bytes = 10;
    EXPECT_NE(error_of(build_osr(spec), tiny).find("more than the 10 allowed"), std::string::npos);
    EXPECT_THROW(read_osr_file("/nonexistent/x.osr"), OsrError);
}

// The real replays: each is read whole, as osu! wrote it.
TEST(OsrRealReplays, EveryReplayOfTheDataSetIsRead) {
    const std::filesystem::path dir = OSU_DATA_DIR;
    if (!std::filesystem::exists(dir / "labels.csv"))
        GTEST_SKIP() << OSU_DATA_DIR << " is absent: cannot read the real replays";
    size_t files = 0, with_seed = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        if (!looks_like_osr(entry.path())) continue;
        ++files;
        OsrReplay r;
        ASSERT_NO_THROW(r = read_osr_file(entry.path())) << entry.path();
        EXPECT_EQ(r.header.mode, GameMode::standard) << entry.path();
        EXPECT_GT(r.frames.size(), 1000u) << entry.path();
        EXPECT_TRUE(r.frames[0].placeholder) << entry.path();
        EXPECT_TRUE(r.online_score_id.has_value()) << entry.path();
        if (r.seed) ++with_seed;
    }
    EXPECT_EQ(files, 104u);  // labels.csv lists 104
    EXPECT_GT(with_seed, 80u);
    const OsrReplay c = read_osr_file(dir / "aim_corrected" / "corrected_replay1.osr");
    EXPECT_EQ(c.header.player_name, "MoGiMoGi");
    EXPECT_EQ(c.header.version, 20190906);
    EXPECT_EQ(c.header.mods, kModHidden | kModHardRock | kModDoubleTime);
    EXPECT_EQ(c.frames.size(), 4078u);
    EXPECT_EQ(c.seed, 4563231);
    EXPECT_EQ(c.frames[2].delta_ms, -1301);
    EXPECT_EQ(c.frames[2].time_ms, -1302);
}

}  // namespace
}  // namespace arbiter::osu
