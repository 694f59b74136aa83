// The osu! replay reader (`arbiter import X.osr`) on any bytes: the header's strings and
// numbers, the LZMA stream of the frames (under a small decompression bound, so that a
// stream that inflates is refused, not followed), the frames' text, the score id after it;
// then circleguard's snap rule on the frames read. Traps when a replay is read whose frames
// break what the reader promises (a time beyond +-2^31 ms, a cursor past osu!'s bound, a
// placeholder after the second frame) or when the rule reports a snap outside its limits.
// Seeds (fuzz/corpus/osu_replay): small replays written by adapters/osu/tests/
// osr_builder.hpp (osu_make_seeds): plain, with a skip, Target Practice, an old client's,
// no frames, cut inside the LZMA stream, extreme values.
#include <cmath>

#include "fuzz_input.hpp"
#include "osr_reader.hpp"
#include "snaps.hpp"

volatile uint64_t osu_replay_sink = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    arbiter::osu::OsrLimits limits;
    limits.max_decompressed_bytes = 1u << 20;
    limits.lzma_memory_bytes = 16u << 20;
    arbiter::osu::OsrReplay replay;
    try {
        replay = arbiter::osu::read_osr({data, size}, limits);
    } catch (const arbiter::osu::OsrError& error) {
        if (error.what()[0] == '\0') __builtin_trap();
        return 0;
    }
    uint64_t sum = replay.header.player_name.value_or("").size() + replay.header.life_points.size();
    for (size_t i = 0; i < replay.frames.size(); ++i) {
        const auto& f = replay.frames[i];
        if (std::llabs(f.time_ms) > 2147483647 || std::fabs(f.x) > 131072 ||
            std::fabs(f.y) > 131072 || f.keys < 0 || (f.placeholder && i >= 2))
            __builtin_trap();
        sum += static_cast<uint64_t>(f.keys);
    }
    const arbiter::osu::SnapRule rule;
    for (const auto& snap : arbiter::osu::find_snaps(replay.frames, rule)) {
        if (!(snap.angle_deg < rule.max_angle_deg) || !(snap.distance_px > rule.min_distance_px))
            __builtin_trap();
        sum += static_cast<uint64_t>(snap.time_ms);
    }
    osu_replay_sink = sum;
    return 0;
}
