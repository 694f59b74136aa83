// Ingest: every way a batch from outside can be wrong is refused with the reason.
#include <limits>

#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/ingest.hpp"

namespace {

using arbiter::host::ingest_batch;

std::vector<uint8_t> good_batch() {
    arbiter::BatchBuilder builder("relay", 5, 3);
    builder.add(10, 1, 1, arbiter::build::Position{});
    builder.add(20, 1, 2, arbiter::build::MatchEnd{});
    return builder.finish();
}

// A batch written by hand, to break rules the builder keeps.
std::vector<uint8_t> custom_batch(uint16_t major, const char* relay, bool out_of_order,
                                  bool empty_body) {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<arbiter::fb::Event>> events;
    auto body = arbiter::fb::CreateLatencySample(fbb, 5).Union();
    events.push_back(arbiter::fb::CreateEvent(
        fbb, out_of_order ? 50 : 5, 1, 1,
        empty_body ? arbiter::fb::EventBody::NONE : arbiter::fb::EventBody::LatencySample,
        empty_body ? 0 : body));
    events.push_back(
        arbiter::fb::CreateEvent(fbb, 10, 1, 1, arbiter::fb::EventBody::LatencySample, body));
    auto relay_id = relay ? fbb.CreateString(relay) : 0;
    auto vector = fbb.CreateVector(events);
    arbiter::fb::EventBatchBuilder b(fbb);
    b.add_schema_major(major);
    b.add_relay_id(relay_id);
    b.add_events(vector);
    fbb.Finish(b.Finish(), ARB_SCHEMA_FILE_IDENTIFIER);
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(Ingest, AcceptsAGoodBatchAndReadsItsHeader) {
    auto bytes = good_batch();
    auto result = ingest_batch(bytes, 1 << 20);
    ASSERT_TRUE(result.ok) << result.problem;
    EXPECT_EQ(result.batch.relay_id, "relay");
    EXPECT_EQ(result.batch.match_id, 5u);
    EXPECT_EQ(result.batch.sequence, 3u);
    EXPECT_EQ(result.batch.event_count, 2u);
    EXPECT_EQ(result.batch.first_relay_time_us, 10);
    EXPECT_EQ(result.batch.last_relay_time_us, 20);
    EXPECT_TRUE(result.batch.ends_match);
    EXPECT_EQ(result.batch.bytes, bytes);
}

TEST(Ingest, SizeCapComesBeforeAnythingElse) {
    auto bytes = good_batch();
    auto result = ingest_batch(bytes, 16);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("exceeds the cap of 16"), std::string::npos) << result.problem;
}

TEST(Ingest, RefusesWhatIsNotABatch) {
    std::vector<uint8_t> tiny = {1, 2, 3};
    EXPECT_NE(ingest_batch(tiny, 1 << 20).problem.find("too short"), std::string::npos);
    std::vector<uint8_t> noise(100, 0x5a);
    EXPECT_NE(ingest_batch(noise, 1 << 20).problem.find("file identifier"), std::string::npos);
    auto truncated = good_batch();
    truncated.resize(truncated.size() - 12);
    EXPECT_NE(ingest_batch(truncated, 1 << 20).problem.find("fails FlatBuffers verification"),
              std::string::npos);
}

TEST(Ingest, RefusesAFlippedOffset) {
    auto bytes = good_batch();
    bytes[0] = 0xff;  // the root offset now points outside the buffer
    auto result = ingest_batch(bytes, 1 << 20);
    EXPECT_FALSE(result.ok);
}

TEST(Ingest, SchemaVersionIsChecked) {
    EXPECT_EQ(ingest_batch(custom_batch(0, "r", false, false), 1 << 20).problem,
              "event batch carries no schema version");
    EXPECT_EQ(ingest_batch(custom_batch(2, "r", false, false), 1 << 20).problem,
              "event batch has schema 2.0, this host reads schema 1.x");
    EXPECT_TRUE(ingest_batch(custom_batch(1, "r", false, false), 1 << 20).ok);
}

TEST(Ingest, RelayIdOrderAndBodiesAreChecked) {
    EXPECT_EQ(ingest_batch(custom_batch(1, nullptr, false, false), 1 << 20).problem,
              "event batch has no relay_id");
    EXPECT_EQ(ingest_batch(custom_batch(1, "r", true, false), 1 << 20).problem,
              "event 1 has relay time 10 us, before the event before it (50 us): events must be in "
              "relay-time order");
    EXPECT_EQ(ingest_batch(custom_batch(1, "r", false, true), 1 << 20).problem,
              "event 0 has no body");
}

}  // namespace

// What passes ingest a plugin and every sink may rely on: strings are UTF-8, numbers are
// finite, relay times are within +-2^53 us. Each refusal names the event and the field.
TEST(Ingest, RefusesStringsThatAreNotUtf8NamingTheField) {
    auto relay =
        arbiter::BatchBuilder("relay\xff", 1).add(10, 1, 1, arbiter::build::Latency{5}).finish();
    auto result = ingest_batch(relay, 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("relay_id is not UTF-8 (byte 5 of 6)"), std::string::npos)
        << result.problem;

    arbiter::BatchBuilder builder("relay", 1);
    builder.add(10, 1, 1, arbiter::build::Latency{5});
    arbiter::build::PlayerJoin join;
    join.account_id = "acc\xc3\x28";
    builder.add(20, 1, 2, join);
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("event 1: PlayerJoin.account_id is not UTF-8 (byte 3 of 5)"),
              std::string::npos)
        << result.problem;

    // Well-formed multi-byte text passes; an overlong '/' and a surrogate do not.
    EXPECT_TRUE(ingest_batch(arbiter::BatchBuilder("r\xc3\xa9lais-\xe2\x82\xac-\xf0\x9f\x8e\xae", 1)
                                 .add(10, 1, 1, arbiter::build::Latency{5})
                                 .finish(),
                             1 << 20)
                    .ok);
    for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"})
        EXPECT_FALSE(
            ingest_batch(
                arbiter::BatchBuilder(bad, 1).add(10, 1, 1, arbiter::build::Latency{5}).finish(),
                1 << 20)
                .ok)
            << bad;
}

// InputLost makes plugins reset their windows: only the host may say input was lost.
TEST(Ingest, RefusesAnInputLostEventFromOutside) {
    auto bytes = arbiter::BatchBuilder("relay", 1)
                     .add(10, 1, 1, arbiter::build::Latency{5})
                     .add(20, 1, 0, arbiter::build::InputLost{.first_sequence = 0, .last_sequence = 4})
                     .finish();
    auto result = ingest_batch(bytes, 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("event 1: InputLost is written by the host, never by a relay"),
              std::string::npos)
        << result.problem;
}

TEST(Ingest, RefusesNumbersThatAreNotFinite) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    arbiter::BatchBuilder builder("relay", 1);
    builder.add(10, 1, 1, arbiter::build::Position{.position = {1, nan, 2}});
    auto result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("event 0: PositionUpdate.position (1, nan, 2) is not finite"),
              std::string::npos)
        << result.problem;

    arbiter::build::Hit hit;
    hit.target_player = 2;
    hit.range_m = inf;
    builder.add(10, 1, 1, hit);
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("HitClaim.range_m is inf"), std::string::npos) << result.problem;

    builder.add(10, 1, 1, arbiter::build::Stat{.stat = "xp", .delta = 1.0, .value_after = -inf});
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_NE(result.problem.find("StatChange.value_after is -inf"), std::string::npos)
        << result.problem;
}

// Schema 1.2's look and aim are checked as positions are: absent is fine, a NaN or an
// infinity is refused naming the event and the field, and finite ones pass.
TEST(Ingest, LooksAndAimsMustBeFiniteWhereTheyArePresent) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    arbiter::BatchBuilder builder("relay", 1);
    builder.add(10, 1, 1, arbiter::build::Position{.look = arbiter::fb::Look(1.5f, -0.25f)});
    builder.add(
        11, 1, 1,
        arbiter::build::Order{.kind = "fire", .aim = arbiter::fb::AimPoint(120, -40, true)});
    auto result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_TRUE(result.ok) << result.problem;

    builder.add(10, 1, 1, arbiter::build::Position{});
    builder.add(11, 1, 1, arbiter::build::Position{.look = arbiter::fb::Look(nan, 0.0f)});
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("event 1: PositionUpdate.look (yaw nan, pitch 0) is not finite"),
              std::string::npos)
        << result.problem;

    builder.add(10, 1, 1, arbiter::build::Order{.aim = arbiter::fb::AimPoint(inf, 3, false)});
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("event 0: Order.aim (inf, 3) is not finite"), std::string::npos)
        << result.problem;

    arbiter::build::Hit hit;
    hit.target_player = 2;
    hit.look = arbiter::fb::Look(0.0f, -inf);
    builder.add(10, 1, 1, hit);
    result = ingest_batch(builder.finish(), 1 << 20);
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.problem.find("HitClaim.look (yaw 0, pitch -inf) is not finite"),
              std::string::npos)
        << result.problem;
}

TEST(Ingest, BoundsRelayTimesSoThatNoDifferenceOverflows) {
    using arbiter::host::kMaxRelayTimeUs;
    for (const int64_t time : {INT64_MIN, INT64_MAX, kMaxRelayTimeUs + 1, -kMaxRelayTimeUs - 1}) {
        auto result = ingest_batch(
            arbiter::BatchBuilder("relay", 1).add(time, 1, 1, arbiter::build::Latency{5}).finish(),
            1 << 20);
        EXPECT_FALSE(result.ok) << time;
        EXPECT_NE(result.problem.find("event 0 has relay time"), std::string::npos)
            << result.problem;
    }
    for (const int64_t time : {-kMaxRelayTimeUs, int64_t{0}, kMaxRelayTimeUs})
        EXPECT_TRUE(ingest_batch(arbiter::BatchBuilder("relay", 1)
                                     .add(time, 1, 1, arbiter::build::Latency{5})
                                     .finish(),
                                 1 << 20)
                        .ok)
            << time;
    arbiter::build::MatchStart start;
    start.started_unix_us = INT64_MAX;
    auto wall = arbiter::BatchBuilder("relay", 1).add(0, 1, 0, start).finish();
    EXPECT_NE(ingest_batch(wall, 1 << 20).problem.find("MatchStart.started_unix_us"),
              std::string::npos);
}

// A batch may sit at any address (a record in a damaged file, a frame in a socket
// buffer). Ingest reads it from its own aligned copy; under the asan preset, UBSan's
// alignment check fails this test if any read is made in place.
TEST(Ingest, ReadsABatchAtAnyOffsetFromAnAlignedCopy) {
    const auto bytes = good_batch();
    for (size_t shift = 0; shift < 8; ++shift) {
        std::vector<uint8_t> buffer(shift + bytes.size());
        std::copy(bytes.begin(), bytes.end(), buffer.begin() + static_cast<ptrdiff_t>(shift));
        auto result = ingest_batch(std::span(buffer).subspan(shift), 1 << 20);
        ASSERT_TRUE(result.ok) << "shift " << shift << ": " << result.problem;
        EXPECT_EQ(result.batch.bytes, bytes);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(result.batch.bytes.data()) % 8, 0u);
        EXPECT_EQ(result.batch.root().relay_id()->str(), "relay");
    }
}
