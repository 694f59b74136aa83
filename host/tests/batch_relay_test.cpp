// A recorded batch sent as another relay's (`arbiter send --relay`): the relay id is the
// one thing that changes.
#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "wire/batch_relay.hpp"
#include "arbiter/host/ingest.hpp"

namespace {

using arbiter::host::ingest_batch;
using arbiter::host::with_relay_id;

std::vector<uint8_t> recorded_batch() {
    arbiter::BatchBuilder builder("sample-relay", 7, 3);
    arbiter::build::PlayerJoin join;
    join.account_id = "alice";
    join.rating = 1500;
    builder.add(10, 1, 1, join);
    builder.add(20, 1, 1, arbiter::build::Position{.position = {1, 2, 3}, .on_ground = true});
    builder.add(30, 2, 1, arbiter::build::Order{.kind = "dig", .claimed_tick = 2});
    builder.add(40, 2, 0, arbiter::build::MatchEnd{.reason = "finished"});
    return builder.finish();
}

TEST(BatchRelay, ChangesTheRelayIdAndNothingElse) {
    const auto recorded = recorded_batch();
    // Longer, shorter and as long as the recorded id: each is a string of its own.
    for (const std::string name : {"eu1", "a-much-longer-relay-name-than-before", "sample-relax"}) {
        const auto rewritten = with_relay_id(recorded, name);
        ASSERT_TRUE(rewritten) << name;
        const auto ingested = ingest_batch(*rewritten, 1 << 20);
        ASSERT_TRUE(ingested.ok) << name << ": " << ingested.problem;
        EXPECT_EQ(ingested.batch.relay_id, name);
        EXPECT_EQ(ingested.batch.match_id, 7u);
        EXPECT_EQ(ingested.batch.sequence, 3u);
        EXPECT_EQ(ingested.batch.event_count, 4u);
        EXPECT_TRUE(ingested.batch.ends_match);

        // The events are the recorded ones, byte for byte where they were.
        ASSERT_GE(rewritten->size(), recorded.size());
        size_t differing = 0;
        for (size_t i = 0; i < recorded.size(); ++i)
            differing += (*rewritten)[i] != recorded[i];
        EXPECT_LE(differing, sizeof(flatbuffers::uoffset_t)) << name;
        const auto& root = ingested.batch.root();
        const auto* join = root.events()->Get(0)->body_as_PlayerJoin();
        ASSERT_NE(join, nullptr);
        EXPECT_EQ(join->account_id()->str(), "alice");
        EXPECT_EQ(join->rating(), 1500.0f);
        const auto* position = root.events()->Get(1)->body_as_PositionUpdate();
        ASSERT_NE(position, nullptr);
        EXPECT_EQ(position->position()->z(), 3.0f);
        EXPECT_EQ(position->on_ground(), true);
        EXPECT_EQ(root.events()->Get(2)->body_as_Order()->claimed_tick(), 2u);
        EXPECT_EQ(root.events()->Get(3)->relay_time_us(), 40);
    }
}

// A writer may pool strings: the relay id's bytes may be an account's too, and the account
// must not change with it.
TEST(BatchRelay, LeavesAStringThatSharesTheRelayIdsBytesAlone) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto shared = fbb.CreateSharedString("eu-2");
    const auto join = arbiter::fb::CreatePlayerJoin(fbb, fbb.CreateSharedString("eu-2"));
    const auto event =
        arbiter::fb::CreateEvent(fbb, 5, 1, 1, arbiter::fb::EventBody::PlayerJoin, join.Union());
    const auto events = fbb.CreateVector(&event, 1);
    fbb.Finish(
        arbiter::fb::CreateEventBatch(fbb, ARB_SCHEMA_VERSION_MAJOR, 0, shared, 1, 0, events),
        ARB_SCHEMA_FILE_IDENTIFIER);
    const std::vector<uint8_t> pooled(fbb.GetBufferPointer(),
                                      fbb.GetBufferPointer() + fbb.GetSize());
    const auto* before = flatbuffers::GetRoot<arbiter::fb::EventBatch>(pooled.data());
    ASSERT_EQ(before->relay_id(), before->events()->Get(0)->body_as_PlayerJoin()->account_id());

    const auto rewritten = with_relay_id(pooled, "eu-1");
    ASSERT_TRUE(rewritten);
    const auto ingested = ingest_batch(*rewritten, 1 << 20);
    ASSERT_TRUE(ingested.ok) << ingested.problem;
    EXPECT_EQ(ingested.batch.relay_id, "eu-1");
    EXPECT_EQ(ingested.batch.root().events()->Get(0)->body_as_PlayerJoin()->account_id()->str(),
              "eu-2");
}

// A file from a writer of a newer schema minor, with a field this build does not know:
// sent as another relay's, it still carries that field.
TEST(BatchRelay, KeepsAFieldOfANewerSchemaThisBuildDoesNotKnow) {
    constexpr flatbuffers::voffset_t kNextField = arbiter::fb::EventBatch::VT_EVENTS + 2;
    flatbuffers::FlatBufferBuilder fbb;
    const auto relay = fbb.CreateString("sample-relay");
    const auto events = fbb.CreateVector(std::vector<flatbuffers::Offset<arbiter::fb::Event>>{});
    arbiter::fb::EventBatchBuilder batch(fbb);
    batch.add_schema_major(ARB_SCHEMA_VERSION_MAJOR);
    batch.add_schema_minor(ARB_SCHEMA_VERSION_MINOR + 1);
    batch.add_relay_id(relay);
    batch.add_match_id(4);
    batch.add_events(events);
    batch.fbb_.AddElement<uint32_t>(kNextField, 424242, 0);
    fbb.Finish(batch.Finish(), ARB_SCHEMA_FILE_IDENTIFIER);
    const std::vector<uint8_t> newer(fbb.GetBufferPointer(),
                                     fbb.GetBufferPointer() + fbb.GetSize());

    const auto rewritten = with_relay_id(newer, "eu1");
    ASSERT_TRUE(rewritten);
    const auto ingested = ingest_batch(*rewritten, 1 << 20);
    ASSERT_TRUE(ingested.ok) << ingested.problem;
    EXPECT_EQ(ingested.batch.relay_id, "eu1");
    const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(rewritten->data());
    EXPECT_EQ(table->GetField<uint32_t>(kNextField, 0), 424242u);
}

TEST(BatchRelay, ABatchWithoutARelayIdHasNoneToChange) {
    flatbuffers::FlatBufferBuilder fbb;
    arbiter::fb::EventBatchBuilder batch(fbb);
    batch.add_schema_major(ARB_SCHEMA_VERSION_MAJOR);
    fbb.Finish(batch.Finish(), ARB_SCHEMA_FILE_IDENTIFIER);
    const std::vector<uint8_t> nameless(fbb.GetBufferPointer(),
                                        fbb.GetBufferPointer() + fbb.GetSize());
    EXPECT_FALSE(with_relay_id(nameless, "eu1"));
}

}  // namespace
