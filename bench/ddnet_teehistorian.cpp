// arbiter-bench-ddnet: what following a DDNet teehistorian costs per server tick
// (docs/games/ddnet.md): the reader and the match builder, record to batch, as
// `arbiter ddnet-bridge` runs them, over
//   - a file DDNet 16.4's own server wrote (four bots of adapters/ddnet/bots, 25 s;
//     adapters/ddnet/tests/data), or any file given as ARBITER_BENCH_TEEHISTORIAN;
//   - a full server written as DDNet writes it: 64 tees moving every tick and changing
//     their input every 3 ticks, 3,000 ticks.
// Counters: ticks/s and records/s per core; the time per tick is 1 / ticks.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "teehistorian_events.hpp"
#include "teehistorian_reader.hpp"
#include "teehistorian_writer.hpp"

namespace arbiter::ddnet {
namespace {

std::vector<uint8_t> real_file() {
    const char* given = std::getenv("ARBITER_BENCH_TEEHISTORIAN");
    std::ifstream in(given ? given : DDNET_TEEHISTORIAN_SAMPLE, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<uint8_t> full_server() {
    test::ThWriter w;
    w.begin_tick(1);
    for (int32_t cid = 0; cid < kThMaxClients; ++cid) {
        w.join(cid);
        w.message(cid, test::start_info("tee" + std::to_string(cid)));
    }
    for (int32_t tick = 2; tick <= 3000; ++tick) {
        w.begin_tick(tick);
        for (int32_t cid = 0; cid < kThMaxClients; ++cid)
            w.player(cid, 1000 + cid * 64 + tick % 200, 800 + (tick + cid) % 50);
        for (int32_t cid = 0; cid < kThMaxClients; ++cid) {
            ThInput in;
            in.direction = (tick + cid) / 3 % 3 - 1;
            in.target_x = 50 + (tick + cid) / 3 % 40;
            in.target_y = -20;
            in.fire = (tick + cid) / 9;
            in.wanted_weapon = 1;
            w.input(cid, static_cast<uint32_t>(cid + 1), in);
        }
    }
    w.finish();
    return w.bytes();
}

void read_and_build(benchmark::State& state, const std::vector<uint8_t>& bytes) {
    int64_t ticks = 0, records = 0;
    for (auto _ : state) {
        TeehistorianReader reader;
        ThMatchBuilder builder("bench");
        std::vector<std::vector<uint8_t>> batches;
        ThRecord record;
        int32_t first = -1, last = -1;
        while (reader.read(std::span(bytes).subspan(reader.offset()), record, true) ==
               ThStatus::record) {
            if (first < 0) {
                builder.start(reader.header(), batches);
                first = record.tick;
            }
            builder.take(record, batches);
            last = record.tick;
            ++records;
            batches.clear();  // sent, in the bridge
        }
        ticks += last - first + 1;
        benchmark::DoNotOptimize(builder.state().counts.events);
    }
    state.counters["ticks"] =
        benchmark::Counter(static_cast<double>(ticks), benchmark::Counter::kIsRate);
    state.counters["records"] =
        benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}

void BM_RealServerFile(benchmark::State& state) {
    static const auto bytes = real_file();
    if (bytes.empty()) {
        state.SkipWithError("the teehistorian file cannot be read");
        return;
    }
    read_and_build(state, bytes);
}
BENCHMARK(BM_RealServerFile)->Unit(benchmark::kMillisecond);

void BM_FullServer64Tees(benchmark::State& state) {
    static const auto bytes = full_server();
    read_and_build(state, bytes);
}
BENCHMARK(BM_FullServer64Tees)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace arbiter::ddnet

BENCHMARK_MAIN();
