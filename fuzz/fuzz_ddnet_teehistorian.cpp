// The DDNet teehistorian reader (`arbiter import X.teehistorian`, `arbiter ddnet-bridge`) on
// any bytes, as the bridge reads a live file: the first half as a file still being written
// (a cut record waits), then the whole as a finished file (a cut tail is reported, damage
// skipped to the next sound records). Every record goes to the match builder; at every
// eighth tick start (the first among them) the reader's and the builder's states go through
// their saved form and back (what a restarted bridge does); every batch made is checked as
// ingest checks a relay's.
// Seeds (fuzz/corpus/ddnet_teehistorian): a file DDNet 16.4's server wrote (four bots of
// adapters/ddnet/bots), files of every record kind written as DDNet's writer does, one cut
// short and one damaged.
#include <vector>

#include "arbiter/host/ingest.hpp"
#include "fuzz_input.hpp"
#include "teehistorian_events.hpp"
#include "teehistorian_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace arbiter::ddnet;
    const std::span<const uint8_t> file(data, size);
    TeehistorianReader reader;
    ThMatchBuilder builder("fuzz");
    std::vector<std::vector<uint8_t>> batches;
    ThRecord record;
    size_t have = size / 2;
    bool whole = false;
    bool started = false;
    constexpr uint64_t kRestartEvery = 8;
    uint64_t ticks_ended = 0;
    for (;;) {
        const auto written = file.first(have);
        const ThStatus status =
            reader.read(written.subspan(std::min<uint64_t>(reader.offset(), have)), record, whole);
        (void)reader.take_problems();
        if (reader.state().header_read && !started) {
            builder.start(reader.header(), batches);
            started = true;
        }
        if (status == ThStatus::record) {
            if (builder.ends_tick(record)) {
                builder.end_tick(batches);
                // A bridge restarted here: the saved states, read back, go on the same.
                // At every eighth tick start, not each: the round trip under ASan was
                // nearly all the time, 4 inputs a second on a 27 KiB file of DDNet's own.
                if (ticks_ended++ % kRestartEvery == 0) {
                    builder.restore(th_builder_from_json(th_builder_to_json(builder.state())));
                    const ThState state =
                        th_state_from_json(th_state_to_json(reader.tick_start_state()));
                    if (!(state == reader.tick_start_state())) __builtin_trap();
                }
            }
            builder.take(record, batches);
            continue;
        }
        if (status != ThStatus::need_more) break;
        if (have < size) {
            have = size;
        } else if (!whole) {
            whole = true;
        } else {
            break;
        }
    }
    builder.end("fuzz", batches);
    // Every batch the bridge would send is one the host takes in.
    for (const auto& batch : batches)
        if (!arbiter::host::ingest_batch(batch, 64u << 20).ok) __builtin_trap();
    return 0;
}
