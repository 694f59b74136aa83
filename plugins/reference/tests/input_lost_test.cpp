// Lost input (schema 1.1): when the host says batches of a match were lost, nothing the
// analyzer measures bridges the gap. Each test first shows that, fed the same batches
// without the host's InputLost, the analyzer does convict: the reset is what saves the
// honest player, not the script.
#include <gtest/gtest.h>

#include "match_script.hpp"

namespace arbiter::reference::test {
namespace {

// The host's batch for a gap: one match-wide InputLost, numbered as the last lost batch.
std::vector<uint8_t> input_lost(const std::string& relay, uint64_t match, uint64_t first,
                                uint64_t last, int64_t last_heard_us, int64_t next_heard_us) {
    return BatchBuilder(relay, match, last)
        .add(next_heard_us, static_cast<uint64_t>(next_heard_us / kTickUs), 0,
             build::InputLost{.first_sequence = first,
                              .last_sequence = last,
                              .last_heard_relay_us = last_heard_us,
                              .next_heard_relay_us = next_heard_us})
        .finish();
}

// The relay time of a batch's first and last events.
std::pair<int64_t, int64_t> span_of(const std::vector<uint8_t>& bytes) {
    const auto batch = Batch::trusted(bytes);
    const auto events = batch.events();
    return {events[0]->relay_time_us(), events[events.size() - 1]->relay_time_us()};
}

// The batches with [first, last] taken out, and, when `tell` is set, the host's InputLost
// in their place.
Batches lose_batches(const Batches& batches, size_t first, size_t last, bool tell,
                     const MatchScript& script) {
    Batches out(batches.begin(), batches.begin() + static_cast<std::ptrdiff_t>(first));
    if (tell)
        out.push_back(input_lost(script.relay_id(), script.match_id(), first, last,
                                 span_of(batches[first - 1]).second,
                                 span_of(batches[last + 1]).first));
    out.insert(out.end(), batches.begin() + static_cast<std::ptrdiff_t>(last) + 1, batches.end());
    return out;
}

// The batch (0.25 s each) that holds relay time t_s.
size_t batch_at(const Batches& batches, double t_s) {
    for (size_t i = 0; i < batches.size(); ++i)
        if (span_of(batches[i]).second >= us(t_s)) return i;
    throw std::logic_error("no batch at that time");
}

size_t movement_signals(const Signals& signals) {
    size_t n = 0;
    for (const auto& s : signals)
        n += s.code.rfind("movement.", 0) == 0 ? 1 : 0;
    return n;
}

// Player 1 moving as `mover` for 20 s, with a 60 ms round trip every second, through a
// fresh analyzer; the batches holding relay times from_s to to_s are lost, and the host
// says so when `tell` is set.
Signals run_losing(const Mover& mover, double from_s, double to_s, bool tell) {
    MatchScript script;
    script.add(1, mover).latencies(1, 0.0, 20.0, 60'000);
    const Batches batches = script.batches();
    Harness harness;
    return feed_all(harness, lose_batches(batches, batch_at(batches, from_s),
                                          batch_at(batches, to_s), tell, script));
}

// Honest dave's case from the sample: his respawn 500 m away was in the lost batches.
TEST(InputLost, ARespawnInTheLostBatchesIsNoTeleportOnceTheHostSaysSo) {
    Mover mover;
    mover.run(5.0, 10.0).server_teleport({500, 0, 0}).run(5.0, 10.0);
    EXPECT_GT(movement_signals(run_losing(mover, 9.6, 10.4, false)), 0u)
        << "without being told, the analyzer measures across the gap";
    EXPECT_EQ(movement_signals(run_losing(mover, 9.6, 10.4, true)), 0u);
}

// A cheat is still caught after the gap: the windows start again, they do not stop.
TEST(InputLost, ASpeedHackAfterTheGapIsStillCaught) {
    Mover mover;
    mover.run(5.0, 10.0).run(60.0, 10.0);
    EXPECT_FALSE(only(run_losing(mover, 9.6, 10.4, true), 1, "movement.speed").empty());
}

// What an event proved on its own survives the gap: a report made before it stands, and
// the analyzer does not report the same score again after it.
TEST(InputLost, ReportsMadeBeforeTheGapStand) {
    Mover mover;
    mover.run(5.0, 5.0).run(60.0, 5.0).run(5.0, 10.0);
    const Signals speed = only(run_losing(mover, 12.0, 13.0, true), 1, "movement.speed");
    ASSERT_FALSE(speed.empty());
    for (const auto& s : speed)
        EXPECT_LT(s.relay_time_us, us(12.0)) << "reported again after the gap";
}

}  // namespace
}  // namespace arbiter::reference::test
