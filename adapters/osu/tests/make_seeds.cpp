// Writes the seeds of the osu_replay fuzz harness (fuzz/corpus/osu_replay): small replays
// as osu! writes them, and damaged ones. Run when the reader's format changes:
//   build/release/bin/osu_make_seeds fuzz/corpus/osu_replay
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "osr_builder.hpp"

using arbiter::osu::test::build_osr;
using arbiter::osu::test::frames_text;
using arbiter::osu::test::OsrSpec;

namespace {

void write(const std::filesystem::path& dir, const char* name, const std::vector<uint8_t>& bytes) {
    std::ofstream out(dir / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    std::printf("%s: %zu bytes\n", name, bytes.size());
}

std::vector<std::string> play(int n) {
    std::vector<std::string> frames;
    for (int i = 0; i < n; ++i) {
        const int keys = (i % 12 < 3) ? 5 : (i % 12 > 8 ? 10 : 0);
        frames.push_back(std::to_string(i % 7 == 3 ? 0 : 16 + i % 3) + "|" +
                         std::to_string(100 + (i * 37) % 300) + "." + std::to_string(i % 10) + "|" +
                         std::to_string(50 + (i * 53) % 280) + "|" + std::to_string(keys));
    }
    return frames;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: osu_make_seeds DIR\n");
        return 1;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);

    OsrSpec plain;
    plain.frames = frames_text(play(60));
    write(dir, "plain.osr", build_osr(plain));

    OsrSpec skip = plain;  // a skip: the second placeholder at the boundary, then back
    skip.frames = "0|256|-500|0,8350|256|-500|0,-8335|287.5555|292|0,16|280.8889|295.5|5," +
                  frames_text(play(30), false, 1391279);
    skip.player_name = "Zo\xc3\xab";
    skip.replay_md5.reset();
    skip.life_bar.reset();
    write(dir, "skip.osr", build_osr(skip));

    OsrSpec target = plain;  // Target Practice: the accuracy after the score id
    target.mods = 1u << 23;
    target.target_practice_accuracy = 0.5;
    write(dir, "target-practice.osr", build_osr(target));

    OsrSpec old = plain;  // a 2013 client: a four-byte score id
    old.version = 20130101;
    old.online_score_id.reset();
    auto old_bytes = build_osr(old);
    old_bytes.insert(old_bytes.end(), {7, 0, 0, 0});
    write(dir, "old-client.osr", old_bytes);

    OsrSpec empty = plain;  // no frames at all, no score id
    empty.frames.clear();
    empty.online_score_id.reset();
    write(dir, "no-frames.osr", build_osr(empty));

    auto cut = build_osr(plain);  // cut inside the LZMA stream
    cut.resize(cut.size() - 40);
    write(dir, "cut.osr", cut);

    OsrSpec odd = plain;  // exponents, a negative delta in play, extreme values
    odd.frames = frames_text({"16|1E-05|-3.5e2|10", "-1|131072|-131072|15", "2147483|0|0|16"});
    odd.score = 2147483647;
    odd.timestamp_ticks = INT64_MIN;
    write(dir, "odd-values.osr", build_osr(odd));
    return 0;
}
