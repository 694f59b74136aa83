// arbiter-bench-pieces: Google Benchmark of the pieces of the path, one at a time
// (docs/performance.md). Counters: events/s ("events") per core and ns per event.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include <arbiter/host/ingest.hpp>
// GCC 12 at -O3 warns of a memset out of bounds in the vector resize of StateWriter's
// put_bytes once BM_StateSeal inlines it (the sizes it assumes are not the writer's): a
// known false positive of that compiler. The warning is placed in the header, so the
// header is what it is silenced for.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Warray-bounds"
#include <arbiter/sdk/state.hpp>
#pragma GCC diagnostic pop

#include <arbiter/sdk/testing.hpp>

#include "direct.hpp"
#include "reference/src/reference_analyzer.hpp"
#include "workload.hpp"

namespace arbiter::bench {
namespace {

constexpr uint32_t kPlayers = 1000;

void set_counters(benchmark::State& state, int64_t events) {
    state.SetItemsProcessed(events);
    state.counters["ns/event"] = benchmark::Counter(
        static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The relay's work: one batch of range(0) position updates.
void BM_BuildBatch(benchmark::State& state) {
    const auto batch = static_cast<size_t>(state.range(0));
    MovementStream stream({.players = kPlayers, .batch_events = batch});
    for (auto _ : state)
        benchmark::DoNotOptimize(stream.next());
    set_counters(state, state.iterations() * state.range(0));
}
BENCHMARK(BM_BuildBatch)->RangeMultiplier(4)->Range(1, 4096);

// The floor: FlatBuffers verification and a walk over every event.
void BM_VerifyAndWalk(benchmark::State& state) {
    const auto batch = static_cast<size_t>(state.range(0));
    MovementStream stream({.players = kPlayers, .batch_events = batch});
    const auto bytes = stream.next();
    double sink = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(verify_and_walk(bytes, sink));
    set_counters(state, state.iterations() * state.range(0));
}
BENCHMARK(BM_VerifyAndWalk)->RangeMultiplier(4)->Range(1, 4096);

// The host's gate: ingest_batch (verification, the event contract's rules, a copy).
void BM_IngestBatch(benchmark::State& state) {
    const auto batch = static_cast<size_t>(state.range(0));
    MovementStream stream({.players = kPlayers, .batch_events = batch});
    const auto bytes = stream.next();
    for (auto _ : state)
        benchmark::DoNotOptimize(host::ingest_batch(bytes, 16u << 20));
    set_counters(state, state.iterations() * state.range(0));
}
BENCHMARK(BM_IngestBatch)->RangeMultiplier(4)->Range(1, 4096);

// Host::push with one plugin (0: noop, 1: reference, 2: lagpool), batches built ahead.
void BM_HostPush(benchmark::State& state) {
    const std::vector<PluginSpec> plugins[] = {
        {noop_plugin()}, {reference_plugin()}, {lagpool_plugin()}};
    auto host = make_host(plugins[state.range(0)]);
    MovementStream stream({.players = kPlayers, .batch_events = 256});
    for (int i = 0; i < 200; ++i)
        host->push(stream.next());
    for (auto _ : state) {
        state.PauseTiming();
        auto bytes = stream.next();
        state.ResumeTiming();
        host->push(bytes);
    }
    set_counters(state, state.iterations() * 256);
}
BENCHMARK(BM_HostPush)->Arg(0)->Arg(1)->Arg(2)->ArgName("plugin");

DirectUpdate update_of(uint64_t i) {
    const auto player = static_cast<uint32_t>(i % kPlayers);
    const auto tick = static_cast<int64_t>(i / kPlayers);
    return {tick * 50'000 + player * 50, player + 1, 0.3 * static_cast<double>(tick), 0.0, 0.0};
}

// The direct limit of each plugin's logic, per update.
void BM_DirectReference(benchmark::State& state) {
    DirectReference direct;
    uint64_t i = 0;
    for (; i < 30 * kPlayers; ++i)
        direct.on_position(update_of(i));
    for (auto _ : state)
        direct.on_position(update_of(i++));
    set_counters(state, state.iterations());
}
BENCHMARK(BM_DirectReference);

void BM_DirectLagpool(benchmark::State& state) {
    DirectLagpool direct;
    uint64_t i = 0;
    for (; i < 30 * kPlayers; ++i)
        direct.on_position(update_of(i));
    for (auto _ : state)
        direct.on_position(update_of(i++));
    set_counters(state, state.iterations());
}
BENCHMARK(BM_DirectLagpool);

// The SDK's state seal over a blob of N MiB: what every hot reload pays twice (the old
// instance seals its state, the new one checks it) on top of the plugin's own writing and
// reading. Counter: bytes per second.
void BM_StateSeal(benchmark::State& state) {
    const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
    std::vector<uint8_t> payload(bytes);
    for (size_t i = 0; i < bytes; ++i)
        payload[i] = static_cast<uint8_t>(i * 131u);
    for (auto _ : state) {
        arbiter::StateWriter writer("BNCH", 1);
        writer.put_bytes(payload);
        const std::vector<uint8_t> blob = writer.finish();
        arbiter::StateReader reader(blob, "BNCH", 1);
        benchmark::DoNotOptimize(reader.version());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_StateSeal)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond);

// The reference plugin's carry at range(0) players, each with 10 s of movement behind it:
// the old instance's save and a fresh instance's restore, what a staged reload holds a
// shard's matches for (Host::forks_shard weighs it against a fork). Counter: time a player.
void BM_ReferenceCarry(benchmark::State& state) {
    using Reference = testing::Harness<reference::ReferenceAnalyzer>;
    using Clock = std::chrono::steady_clock;
    const auto players = static_cast<uint32_t>(state.range(0));
    Reference old;
    MovementStream stream({.players = players, .batch_events = 256});
    while (stream.now_us() < 10'000'000)
        old.feed(stream.next());
    Clock::duration saving{}, restoring{};
    size_t bytes = 0;
    for (auto _ : state) {
        state.PauseTiming();
        auto fresh = std::make_unique<Reference>();
        state.ResumeTiming();
        const auto start = Clock::now();
        const auto blob = old.save_state();
        const auto saved = Clock::now();
        if (!blob || fresh->restore_state(*blob) != ARB_OK) {
            state.SkipWithError("the carry failed");
            break;
        }
        restoring += Clock::now() - saved;
        bytes = blob->size();
        saving += saved - start;
        state.PauseTiming();
        fresh.reset();
        state.ResumeTiming();
    }
    const double carried = static_cast<double>(state.iterations()) * players;
    state.counters["s/player"] =
        benchmark::Counter(carried, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["save/player"] = std::chrono::duration<double>(saving).count() / carried;
    state.counters["restore/player"] = std::chrono::duration<double>(restoring).count() / carried;
    state.counters["bytes/player"] = static_cast<double>(bytes) / players;
}
BENCHMARK(BM_ReferenceCarry)->Arg(500)->Arg(5000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace arbiter::bench

BENCHMARK_MAIN();
