// The sequence ledger: a gap is one lost stretch with its range, a duplicate or late
// batch and relay time going backwards are refused, and ended matches are remembered.
#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/ingest.hpp"
#include "arbiter/host/input_lost.hpp"
#include "arbiter/host/sequence_ledger.hpp"

namespace {

using arbiter::host::SequenceLedger;
using arbiter::host::VerifiedBatch;

VerifiedBatch batch(uint64_t sequence, int64_t first_us, int64_t last_us, uint64_t match = 1) {
    arbiter::BatchBuilder builder("relay", match, sequence);
    builder.add(first_us, 1, 1, arbiter::build::Latency{5});
    builder.add(last_us, 2, 1, arbiter::build::Latency{5});
    auto ingested = arbiter::host::ingest_batch(builder.finish(), 1 << 20);
    EXPECT_TRUE(ingested.ok) << ingested.problem;
    return ingested.batch;
}

TEST(SequenceLedger, InOrderBatchesAreDeliveredWithoutAWord) {
    SequenceLedger ledger;
    for (uint64_t s = 0; s < 5; ++s) {
        const auto verdict = ledger.admit(batch(s, 1000 * s, 1000 * s + 500));
        EXPECT_TRUE(verdict.deliver);
        EXPECT_FALSE(verdict.gap);
    }
    EXPECT_TRUE(ledger.lost("relay", 1).empty());
}

TEST(SequenceLedger, AGapIsOneStretchWithItsRangeAndTimes) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 1'000'000)).deliver);
    ASSERT_TRUE(ledger.admit(batch(1, 1'000'000, 2'000'000)).deliver);
    const auto verdict = ledger.admit(batch(5, 5'250'000, 6'000'000));
    EXPECT_TRUE(verdict.deliver);
    ASSERT_TRUE(verdict.gap);
    EXPECT_EQ(verdict.gap->from_sequence, 2u);
    EXPECT_EQ(verdict.gap->to_sequence, 4u);
    EXPECT_EQ(verdict.gap->batches(), 3u);
    EXPECT_EQ(verdict.gap->after_relay_us, 2'000'000);
    EXPECT_EQ(verdict.gap->before_relay_us, 5'250'000);
    EXPECT_EQ(verdict.gap->describe(), "batches 2..4 (relay time 2.000 s to 5.250 s)");
    // Reported once: the next batch is in order again.
    EXPECT_FALSE(ledger.admit(batch(6, 6'000'000, 7'000'000)).gap);
    ASSERT_EQ(ledger.lost("relay", 1).size(), 1u);
    EXPECT_TRUE(ledger.lost("relay", 2).empty()) << "another match lost nothing";
}

TEST(SequenceLedger, MissingFirstBatchesAreAStretchWithNoTimeBefore) {
    SequenceLedger ledger;
    const auto verdict = ledger.admit(batch(3, 9'000'000, 9'500'000));
    EXPECT_TRUE(verdict.deliver);
    ASSERT_TRUE(verdict.gap);
    EXPECT_EQ(verdict.gap->from_sequence, 0u);
    EXPECT_EQ(verdict.gap->to_sequence, 2u);
    EXPECT_FALSE(verdict.gap->after_relay_us);
}

TEST(SequenceLedger, ADuplicateOrLateBatchIsNeverDeliveredTwice) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100)).deliver);
    ASSERT_TRUE(ledger.admit(batch(1, 100, 200)).deliver);
    auto again = ledger.admit(batch(1, 100, 200));
    EXPECT_FALSE(again.deliver);
    EXPECT_NE(again.problem.find("match relay/1: batch 1 was already delivered"), std::string::npos)
        << again.problem;
    ASSERT_TRUE(ledger.admit(batch(4, 400, 500)).deliver);   // 2 and 3 lost...
    EXPECT_FALSE(ledger.admit(batch(2, 200, 300)).deliver);  // ...and 2 arriving late is refused
    EXPECT_TRUE(ledger.admit(batch(5, 500, 600)).deliver);
}

TEST(SequenceLedger, RelayTimeGoingBackwardsBetweenBatchesIsRefused) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 1000, 5000)).deliver);
    const auto back = ledger.admit(batch(1, 4000, 6000));
    EXPECT_FALSE(back.deliver);
    EXPECT_NE(back.problem.find("begins at relay time 4000 us, before the end of the batch before "
                                "it (5000 us)"),
              std::string::npos)
        << back.problem;
    EXPECT_TRUE(ledger.admit(batch(1, 5000, 6000)).deliver) << "the same time is not backwards";
}

TEST(SequenceLedger, AnEndedMatchStillRefusesItsDuplicates) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100)).deliver);
    ledger.match_ended("relay", 1);
    EXPECT_FALSE(ledger.admit(batch(0, 0, 100)).deliver);
}

TEST(SequenceLedger, TheLargestSequenceIsRefusedSoThatNothingWraps) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100)).deliver);
    const auto last = ledger.admit(batch(UINT64_MAX, 200, 300));
    EXPECT_FALSE(last.deliver);
    EXPECT_NE(last.problem.find("largest"), std::string::npos) << last.problem;
    // Had it been taken, the next sequence would have wrapped to 0 and a duplicate of
    // batch 0 would have looked new.
    EXPECT_FALSE(ledger.admit(batch(0, 0, 100)).deliver);
    EXPECT_TRUE(ledger.admit(batch(1, 400, 500)).deliver);
}

// What the host writes for a gap: a valid batch of the same match, numbered as the last
// lost batch, holding one match-wide InputLost at the time and tick the input resumed.
TEST(SequenceLedger, TheInputLostBatchForAGapIsAValidBatchOfTheMatch) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 1'000'000, 2'000'000)).deliver);
    const VerifiedBatch after = batch(4, 5'000'000, 6'000'000);
    const auto verdict = ledger.admit(after);
    ASSERT_TRUE(verdict.gap);
    const VerifiedBatch lost = arbiter::host::input_lost_batch(after, *verdict.gap);

    flatbuffers::Verifier verifier(lost.bytes.data(), lost.bytes.size());
    ASSERT_TRUE(verifier.VerifyBuffer<arbiter::fb::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER));
    const auto& root = lost.root();
    EXPECT_EQ(root.schema_major(), 1);
    EXPECT_EQ(root.schema_minor(), 1);
    EXPECT_EQ(root.relay_id()->str(), "relay");
    EXPECT_EQ(root.match_id(), 1u);
    EXPECT_EQ(root.sequence(), 3u);
    ASSERT_EQ(root.events()->size(), 1u);
    const auto* event = root.events()->Get(0);
    EXPECT_EQ(event->player(), 0u);
    EXPECT_EQ(event->relay_time_us(), 5'000'000);
    EXPECT_EQ(event->tick(), 1u);
    const auto* body = event->body_as_InputLost();
    ASSERT_NE(body, nullptr);
    EXPECT_EQ(body->first_sequence(), 1u);
    EXPECT_EQ(body->last_sequence(), 3u);
    ASSERT_TRUE(body->last_heard_relay_us().has_value());
    EXPECT_EQ(*body->last_heard_relay_us(), 2'000'000);
    EXPECT_EQ(body->next_heard_relay_us(), 5'000'000);
    EXPECT_EQ(lost.sequence, 3u);
    EXPECT_EQ(lost.first_relay_time_us, 5'000'000);

    // The first batches of a match lost: nothing was heard before the gap.
    SequenceLedger fresh;
    const auto late_start = fresh.admit(after);
    ASSERT_TRUE(late_start.gap);
    const VerifiedBatch first = arbiter::host::input_lost_batch(after, *late_start.gap);
    EXPECT_FALSE(
        first.root().events()->Get(0)->body_as_InputLost()->last_heard_relay_us().has_value());
}

// Damage in a file: each open match's next batch says whether it lost anything there.
TEST(SequenceLedger, DamageIsTheCauseOfTheGapThatFollowsIt) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100, 1)).deliver);
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100, 2)).deliver);
    ledger.damage("m.arbev: bytes 4096 to 8191 damaged (checksum)");
    const auto gap = ledger.admit(batch(3, 400, 500, 1));
    ASSERT_TRUE(gap.gap);
    EXPECT_EQ(gap.gap->cause, "m.arbev: bytes 4096 to 8191 damaged (checksum)");
    EXPECT_NE(gap.gap->describe().find("; m.arbev: bytes 4096 to 8191"), std::string::npos)
        << gap.gap->describe();
    // Match 2's next batch follows on: the damage lost nothing of it.
    EXPECT_FALSE(ledger.admit(batch(1, 400, 500, 2)).gap);
    ledger.match_ended("relay", 2, false);
    EXPECT_TRUE(ledger.lost("relay", 2).empty());
}

TEST(SequenceLedger, AMatchThatEndsWithoutItsEndAfterDamageLostItsRest) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100, 1)).deliver);
    ASSERT_TRUE(ledger.admit(batch(1, 100, 2'000'000, 1)).deliver);
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100, 2)).deliver);
    ledger.damage("m.arbev: bytes 9000 to 9999 damaged (checksum)");
    ledger.match_ended("relay", 1, false);  // the input ran out
    ledger.match_ended("relay", 2, true);   // its MatchEnd came (in a batch before the damage)
    ASSERT_EQ(ledger.lost("relay", 1).size(), 1u);
    const auto& tail = ledger.lost("relay", 1).front();
    EXPECT_TRUE(tail.through_end);
    EXPECT_EQ(tail.from_sequence, 2u);
    EXPECT_EQ(tail.batches(), 0u) << "unknown";
    EXPECT_EQ(tail.describe(),
              "batch 2 to the end of the match (after relay time 2.000 s); m.arbev: bytes 9000 "
              "to 9999 damaged (checksum)");
    EXPECT_TRUE(ledger.lost("relay", 2).empty());
    // Without damage, running out of input is no loss.
    SequenceLedger clean;
    ASSERT_TRUE(clean.admit(batch(0, 0, 100, 1)).deliver);
    clean.match_ended("relay", 1, false);
    EXPECT_TRUE(clean.lost("relay", 1).empty());
}

// Two recorded files of two matches that share a relay and match id (simulated files,
// a relay whose numbering restarted): the second begins again after the first's end, and
// is a new match. The same file read twice is refused instead.
TEST(SequenceLedger, AnIdUsedAgainAfterItsMatchEndedIsANewMatch) {
    SequenceLedger ledger;
    ASSERT_TRUE(ledger.admit(batch(0, 0, 100)).deliver);
    ASSERT_TRUE(ledger.admit(batch(1, 100, 200)).deliver);
    ledger.match_ended("relay", 1);
    const auto again = ledger.admit(batch(0, 50, 150));  // other events: another match
    EXPECT_TRUE(again.deliver) << again.problem;
    EXPECT_TRUE(again.reused_id);
    EXPECT_TRUE(ledger.admit(batch(1, 150, 250)).deliver);
    ledger.match_ended("relay", 1);
    const auto reread = ledger.admit(batch(0, 50, 150));  // the same first batch: a re-read
    EXPECT_FALSE(reread.deliver);
    EXPECT_NE(reread.problem.find("duplicate of the first batch"), std::string::npos)
        << reread.problem;
}

}  // namespace
