// Writes .osr files as osu! stable does, for the tests and the fuzz seeds: the header
// fields, the frames' text LZMA-compressed ("LZMA alone", as osu! writes it), and the
// online score id after it. Each field can be set to what a damaged or forged file holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::osu::test {

struct OsrSpec {
    uint8_t mode = 0;
    int32_t version = 20190906;
    std::optional<std::string> beatmap_md5 = std::string(32, 'a');
    std::optional<std::string> player_name = std::string("player");
    std::optional<std::string> replay_md5 = std::string(32, 'b');
    uint16_t count_300 = 100, count_100 = 5, count_50 = 1, count_geki = 20, count_katu = 3,
             count_miss = 2;
    int32_t score = 1234567;
    uint16_t max_combo = 321;
    uint8_t perfect = 0;
    uint32_t mods = 0;
    std::optional<std::string> life_bar = std::string("1000|1,2000|0.5,");
    int64_t timestamp_ticks = 637000000000000000;  // 2019-06-26
    std::string frames;  // the text, e.g. "0|256|-500|0,-1|256|-500|0,..."
    std::optional<int64_t> online_score_id = 42;
    std::optional<double> target_practice_accuracy;
    // Overrides: the written length of the compressed frames, the compressed bytes.
    std::optional<int32_t> compressed_length;
    std::optional<std::vector<uint8_t>> compressed;
};

// The frames' text compressed as osu! does (dictionary 64 KiB).
std::vector<uint8_t> lzma_alone(const std::string& text);
// A .NET string: 0x00 when absent, else 0x0b, ULEB128 length, bytes.
void put_string(std::vector<uint8_t>& out, const std::optional<std::string>& text);
std::vector<uint8_t> build_osr(const OsrSpec& spec);
// Frames `w|x|y|z,` from a list, with osu!'s two placeholders first and the seed last.
std::string frames_text(const std::vector<std::string>& frames, bool placeholders = true,
                        std::optional<int32_t> seed = 7);

}  // namespace arbiter::osu::test
