// The SDK's building blocks: config reader, state seal, evidence writer, batch builder,
// look-ahead.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk.hpp>
#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/config_builder.hpp>

namespace {

using arbiter::ConfigError;
using arbiter::ConfigTable;
using arbiter::ConfigValue;

std::vector<uint8_t> sample_config() {
    return ConfigValue::table(
               {
                   {"speed", 20},
                   {"name", "arena"},
                   {"strict", true},
                   {"tiers", ConfigValue::array({"gold", "silver"})},
                   {"weapons",
                    ConfigValue::table({{"rifle", ConfigValue::table({{"range", 300.5}})}})},
               })
        .to_flexbuffer();
}

TEST(Config, ReadsTypedValuesAndDefaults) {
    auto bytes = sample_config();
    auto config = ConfigTable::parse(bytes);
    EXPECT_DOUBLE_EQ(config.number("speed", 0), 20.0);  // an integer reads as a number
    EXPECT_EQ(config.integer("speed", 0), 20);
    EXPECT_EQ(config.string("name", ""), "arena");
    EXPECT_TRUE(config.boolean("strict", false));
    EXPECT_EQ(config.strings("tiers"), (std::vector<std::string>{"gold", "silver"}));
    EXPECT_DOUBLE_EQ(config.table("weapons").table("rifle").number("range", 0), 300.5);
    EXPECT_DOUBLE_EQ(config.number("absent", 4.5), 4.5);
    EXPECT_NO_THROW(config.reject_unknown_keys());
}

TEST(Config, WrongTypeNamesTheFullKeyPath) {
    auto bytes = sample_config();
    auto config = ConfigTable::parse(bytes);
    try {
        config.table("weapons").table("rifle").string("range", "");
        FAIL() << "no error";
    } catch (const ConfigError& error) {
        EXPECT_EQ(error.key(), "weapons.rifle.range");
        EXPECT_NE(std::string(error.what()).find("expected a string"), std::string::npos);
    }
}

TEST(Config, RangeIsEnforced) {
    auto bytes = ConfigValue::table({{"speed", -3.0}}).to_flexbuffer();
    auto config = ConfigTable::parse(bytes);
    EXPECT_THROW(config.number("speed", 1, arbiter::Range::positive()), ConfigError);
    auto nan_bytes = ConfigValue::table({{"speed", std::nan("")}}).to_flexbuffer();
    EXPECT_THROW(ConfigTable::parse(nan_bytes).number("speed", 1), ConfigError);
}

TEST(Config, UnknownKeysInSubTablesAreFound) {
    auto bytes = sample_config();
    auto config = ConfigTable::parse(bytes);
    config.number("speed", 0);
    config.string("name", "");
    config.boolean("strict", false);
    config.strings("tiers");
    config.table("weapons").table("rifle");  // "range" never read
    try {
        config.reject_unknown_keys();
        FAIL() << "no error";
    } catch (const ConfigError& error) {
        EXPECT_EQ(error.key(), "weapons.rifle.range");
    }
}

TEST(Config, GarbageIsRefused) {
    std::vector<uint8_t> garbage = {1, 2, 3, 4, 5};
    EXPECT_THROW(ConfigTable::parse(garbage), ConfigError);
    auto not_a_map = ConfigValue(3.0).to_flexbuffer();
    EXPECT_THROW(ConfigTable::parse(not_a_map), ConfigError);
    EXPECT_NO_THROW(ConfigTable::parse({}));
}

TEST(State, RoundTrip) {
    arbiter::StateWriter out("TST1", 2);
    out.put<uint32_t>(7);
    out.put_string("hello");
    out.put<double>(2.5);
    auto blob = out.finish();
    arbiter::StateReader in(blob, "TST1", 2);
    EXPECT_EQ(in.version(), 2u);
    EXPECT_EQ(in.get<uint32_t>(), 7u);
    EXPECT_EQ(in.get_string(), "hello");
    EXPECT_DOUBLE_EQ(in.get<double>(), 2.5);
    EXPECT_NO_THROW(in.finish());
}

TEST(State, EveryDamageIsRefused) {
    arbiter::StateWriter out("TST1", 2);
    out.put<uint64_t>(1000);
    auto blob = out.finish();
    EXPECT_THROW(arbiter::StateReader(blob, "OTHR", 2), arbiter::StateError);  // another plugin's
    EXPECT_THROW(arbiter::StateReader(blob, "TST1", 1), arbiter::StateError);  // newer version
    auto truncated = blob;
    truncated.pop_back();
    EXPECT_THROW(arbiter::StateReader(truncated, "TST1", 2), arbiter::StateError);
    auto flipped = blob;
    flipped[30] ^= 1;
    EXPECT_THROW(arbiter::StateReader(flipped, "TST1", 2), arbiter::StateError);
    std::vector<uint8_t> tiny = {'A', 'R'};
    EXPECT_THROW(arbiter::StateReader(tiny, "TST1", 2), arbiter::StateError);

    arbiter::StateReader in(blob, "TST1", 2);
    // A count the remaining bytes cannot hold is refused before anything is allocated.
    EXPECT_THROW(in.get_count(16), arbiter::StateError);
}

// This SDK seals with XXH3-64 under "ARBX"; a blob an older SDK sealed with FNV-1a-64
// under "ARBS" is still read (a plugin built against it hands its state over in a reload,
// and kaladin baseline files were written that way). The old blob here is spelled out
// byte by byte as the old writer made it, not made by today's code.
TEST(State, WritesTheWordSealAndStillReadsTheByteSeal) {
    arbiter::StateWriter out("TST1", 1);
    out.put<uint32_t>(0x01020304);
    const auto blob = out.finish();
    ASSERT_EQ(blob.size(), 28u + 4u);
    EXPECT_EQ(std::string(blob.begin(), blob.begin() + 4), "ARBX");
    uint64_t checksum = 0;
    std::memcpy(&checksum, blob.data() + 20, 8);
    // XXH3-64 of 04 03 02 01 as xxHash 0.8 defines it (a constant, not the header's own
    // function: a blob sealed by one build must check out in any other).
    EXPECT_EQ(checksum, 0xc738ba38634321a9ull);

    // FNV-1a-64 of the payload 04 03 02 01, worked by hand from the offset basis
    // 0xcbf29ce484222325 and the prime 0x100000001b3.
    uint64_t fnv = 0xcbf29ce484222325ull;
    for (uint8_t byte : {uint8_t{4}, uint8_t{3}, uint8_t{2}, uint8_t{1}}) {
        fnv ^= byte;
        fnv *= 0x100000001b3ull;
    }
    std::vector<uint8_t> old = {'A', 'R', 'B', 'S', 'T', 'S', 'T', '1', 1, 0,
                                0,   0,   4,   0,   0,   0,   0,   0,   0, 0};
    for (int shift = 0; shift < 64; shift += 8)
        old.push_back(static_cast<uint8_t>(fnv >> shift));
    old.insert(old.end(), {4, 3, 2, 1});
    arbiter::StateReader in(old, "TST1", 1);
    EXPECT_EQ(in.get<uint32_t>(), 0x01020304u);
    EXPECT_NO_THROW(in.finish());

    // Each seal is checked by its own function: an FNV checksum under "ARBX" is damage.
    auto mislabelled = old;
    mislabelled[3] = 'X';
    EXPECT_THROW(arbiter::StateReader(mislabelled, "TST1", 1), arbiter::StateError);
    auto unknown = blob;
    unknown[3] = 'Q';
    EXPECT_THROW(arbiter::StateReader(unknown, "TST1", 1), arbiter::StateError);
}

TEST(State, AWriterIsSpentByFinishOrByAMove) {
    arbiter::StateWriter out("TST1", 1);
    out.put<uint8_t>(1);
    const auto blob = out.finish();
    EXPECT_EQ(blob.size(), 29u);
    EXPECT_THROW(out.finish(), std::logic_error);
    // A put after finish would land where the next finish writes the header: refused.
    EXPECT_THROW(out.put_string(std::string(40, 'x')), std::logic_error);
    EXPECT_THROW(out.put<uint8_t>(1), std::logic_error);
    EXPECT_THROW(out.reserve(10), std::logic_error);

    arbiter::StateWriter first("TST1", 1);
    first.put<uint32_t>(5);
    arbiter::StateWriter second(std::move(first));
    EXPECT_THROW(first.put<uint32_t>(6), std::logic_error);  // NOLINT(bugprone-use-after-move)
    const auto moved = second.finish();
    arbiter::StateReader in(moved, "TST1", 1);
    EXPECT_EQ(in.get<uint32_t>(), 5u);
}

// Past the first 4 KiB the buffer grows, with or without a reserve ahead; a reserve no
// blob can hold is an error, never a wrapped size.
TEST(State, LargeStatesRoundTripAndAnImpossibleReserveIsRefused) {
    for (size_t ahead : {size_t{0}, size_t{100}, size_t{80'000}}) {
        arbiter::StateWriter out("TST1", 1);
        out.reserve(ahead);
        for (uint64_t i = 0; i < 10'000; ++i)
            out.put<uint64_t>(i * 3);
        out.put_string(std::string(5'000, 'z'));
        const auto blob = out.finish();
        arbiter::StateReader in(blob, "TST1", 1);
        for (uint64_t i = 0; i < 10'000; ++i)
            ASSERT_EQ(in.get<uint64_t>(), i * 3) << ahead;
        EXPECT_EQ(in.get_string(), std::string(5'000, 'z'));
        EXPECT_NO_THROW(in.finish());
    }
    arbiter::StateWriter out("TST1", 1);
    out.put<uint64_t>(1);
    EXPECT_THROW(out.reserve(SIZE_MAX), std::length_error);
    EXPECT_THROW(out.reserve(SIZE_MAX - 20), std::length_error);
    out.put<uint64_t>(2);  // still usable
    const auto kept = out.finish();
    arbiter::StateReader in(kept, "TST1", 1);
    EXPECT_EQ(in.get<uint64_t>(), 1u);
    EXPECT_EQ(in.get<uint64_t>(), 2u);
}

// Bytes written in place make the blob put_bytes makes of the same bytes, including past
// the first 4 KiB (the buffer grows under the room handed out), and view_bytes reads what
// get_bytes reads, without the copy; a size the payload cannot hold is refused.
TEST(State, BytesWrittenInPlaceAndViewedMatchTheCopyingCalls) {
    for (size_t size : {size_t{0}, size_t{5}, size_t{10'000}}) {
        std::vector<uint8_t> bytes(size);
        for (size_t i = 0; i < size; ++i)
            bytes[i] = static_cast<uint8_t>(i * 7 + 1);
        arbiter::StateWriter copied("TST1", 1);
        copied.put<uint32_t>(9);
        copied.put_bytes(bytes);
        copied.put<uint32_t>(10);
        arbiter::StateWriter in_place("TST1", 1);
        in_place.put<uint32_t>(9);
        const std::span<uint8_t> room = in_place.put_bytes_in_place(size);
        ASSERT_EQ(room.size(), size);
        std::copy(bytes.begin(), bytes.end(), room.begin());
        in_place.put<uint32_t>(10);
        const auto blob = in_place.finish();
        EXPECT_EQ(blob, copied.finish()) << size;

        arbiter::StateReader in(blob, "TST1", 1);
        EXPECT_EQ(in.get<uint32_t>(), 9u);
        const std::span<const uint8_t> view = in.view_bytes();
        EXPECT_TRUE(std::equal(view.begin(), view.end(), bytes.begin(), bytes.end())) << size;
        if (size > 0) {
            EXPECT_GE(view.data(), blob.data());
        }
        EXPECT_EQ(in.get<uint32_t>(), 10u);
        EXPECT_NO_THROW(in.finish());
    }
    arbiter::StateWriter out("TST1", 1);
    out.put<uint64_t>(1'000);  // read back as the size of 1,000 bytes, of which none follow
    const auto blob = out.finish();
    arbiter::StateReader in(blob, "TST1", 1);
    EXPECT_THROW(in.view_bytes(), arbiter::StateError);
    arbiter::StateWriter spent("TST1", 1);
    (void)spent.finish();
    EXPECT_THROW(spent.put_bytes_in_place(4), std::logic_error);
}

TEST(State, ReadingPastTheEndThrows) {
    arbiter::StateWriter out("TST1", 1);
    out.put<uint8_t>(1);
    auto blob = out.finish();
    arbiter::StateReader in(blob, "TST1", 1);
    EXPECT_THROW(in.get<uint64_t>(), arbiter::StateError);
}

// A restored time or counter keeps the promise the host makes of a batch's times (no
// subtraction of two overflows): found by fuzzing the plugins' state restore, where a time
// near the int64 limit made lagpool's and kaladin's arithmetic overflow after a restore.
TEST(State, TimesAndCountersOutsideTheirBoundsAreRefused) {
    arbiter::StateWriter out("TST1", 1);
    const int64_t bound = arbiter::StateReader::kMaxStoredTimeUs;
    for (int64_t value : {bound, -bound, bound + 1, INT64_MIN, int64_t{7}, int64_t{-1}})
        out.put<int64_t>(value);
    const auto blob = out.finish();
    arbiter::StateReader in(blob, "TST1", 1);
    EXPECT_EQ(in.get_relay_time("t"), bound);
    EXPECT_EQ(in.get_relay_time("t"), -bound);
    EXPECT_THROW(in.get_relay_time("t"), arbiter::StateError);
    EXPECT_THROW(in.get_relay_time("t"), arbiter::StateError);
    EXPECT_EQ(in.get_counter("c"), 7);
    EXPECT_THROW(in.get_counter("c"), arbiter::StateError);  // negative
}

TEST(Evidence, WritesValidEscapedJson) {
    auto text = arbiter::Evidence()
                    .add("speed", 25.5)
                    .add("count", 3)
                    .add("ok", false)
                    .add("name", "a\"b\\c\n")
                    .add("bad", std::nan(""))
                    .add("xs", {1.0, 2.0})
                    .add("nested", arbiter::Evidence().add("k", "v"))
                    .str();
    EXPECT_EQ(text,
              "{\"speed\":25.5,\"count\":3,\"ok\":false,\"name\":\"a\\\"b\\\\c\\n\",\"bad\":null,"
              "\"xs\":[1,2],"
              "\"nested\":{\"k\":\"v\"}}");
    EXPECT_EQ(arbiter::Evidence().str(), "{}");
}

TEST(BatchBuilder, WritesVerifiableBatchesWithAdvancingSequence) {
    arbiter::BatchBuilder builder("relay-1", 99);
    builder.add(5, 1, 2, arbiter::build::Order{.kind = "dig", .repeat = true, .claimed_tick = 4});
    builder.add(
        6, 1, 2,
        arbiter::build::MatchEnd{.reason = "done", .claimed_length_us = 1000, .ended_unix_us = 7});
    auto first = builder.finish();
    auto second = builder.finish();
    auto batch = arbiter::Batch::verified(first);
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->relay_id(), "relay-1");
    EXPECT_EQ(batch->match_id(), 99u);
    EXPECT_EQ(batch->sequence(), 0u);
    ASSERT_EQ(batch->events().size(), 2u);
    const auto* order = batch->events()[0]->body_as_Order();
    ASSERT_NE(order, nullptr);
    EXPECT_EQ(arbiter::str(order->kind()), "dig");
    EXPECT_TRUE(order->repeat());
    EXPECT_EQ(arbiter::opt(order->claimed_tick()), std::optional<uint64_t>(4));
    EXPECT_EQ(arbiter::opt(order->client_time_us()), std::nullopt);
    const auto* end = batch->events()[1]->body_as_MatchEnd();
    EXPECT_EQ(arbiter::opt(end->claimed_length_us()), std::optional<int64_t>(1000));
    EXPECT_EQ(arbiter::Batch::verified(second)->sequence(), 1u);
    EXPECT_TRUE(arbiter::Batch::verified(second)->events().empty());
}

TEST(BatchBuilder, VerifiedRefusesDamage) {
    arbiter::BatchBuilder builder("relay-1", 1);
    builder.add(1, 1, 1, arbiter::build::Position{});
    auto bytes = builder.finish();
    auto truncated =
        std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2));
    EXPECT_FALSE(arbiter::Batch::verified(truncated).has_value());
    std::vector<uint8_t> noise(64, 0xff);
    EXPECT_FALSE(arbiter::Batch::verified(noise).has_value());
}

// The look-ahead changes when a player's state is asked for, never what is handled: every
// event once, in order; a group's finds and prefetches all before its first handler, and
// none of the next group's before its last.
TEST(LookAhead, HandlesEveryEventOnceInOrderAfterItsGroupsLookups) {
    constexpr size_t kGroup = 8;
    for (uint32_t events : {0u, 1u, 7u, 8u, 9u, 17u, 256u}) {
        arbiter::BatchBuilder builder("relay-1", 1);
        for (uint32_t i = 0; i < events; ++i)
            builder.add(i, i, i + 1, arbiter::build::Position{});  // player i + 1: event i
        const auto bytes = builder.finish();
        const auto batch = arbiter::Batch::verified(bytes);
        ASSERT_TRUE(batch.has_value());

        // Players with an odd id have a record; the trace is (step, event index).
        std::vector<uint32_t> records(events + 1);
        for (uint32_t id = 1; id <= events; id += 2)
            records[id] = id - 1;
        std::vector<std::pair<char, uint32_t>> trace;
        arbiter::for_each_event_looking_ahead<kGroup>(
            batch->events(),
            [&](const arbiter::fb::Event& next) -> const uint32_t* {
                trace.emplace_back('f', next.player() - 1);
                return next.player() % 2 == 1 ? &records[next.player()] : nullptr;
            },
            [&](const uint32_t& record) { trace.emplace_back('p', record); },
            [&](const arbiter::fb::Event& event) { trace.emplace_back('h', event.player() - 1); });

        std::vector<std::pair<char, uint32_t>> expected;
        for (uint32_t first = 0; first < events; first += kGroup) {
            const uint32_t last = std::min<uint32_t>(events, first + kGroup);
            for (uint32_t i = first; i < last; ++i)
                expected.emplace_back('f', i);
            for (uint32_t i = first; i < last; ++i)
                if (i % 2 == 0) expected.emplace_back('p', i);  // event i is player i + 1
            for (uint32_t i = first; i < last; ++i)
                expected.emplace_back('h', i);
        }
        EXPECT_EQ(trace, expected) << events << " events";
    }
}

// The form with a map by player id: a present player's record is asked for, an absent
// one is not, and the events are handled in order, each once.
TEST(LookAhead, AMapOfPlayersGivesTheRecordOfEachEventsPlayer) {
    arbiter::BatchBuilder builder("relay-1", 1);
    const std::vector<uint32_t> players = {5, 9, 5, 0, 12, 9, 9, 40, 5, 12, 7};
    for (size_t i = 0; i < players.size(); ++i)
        builder.add(static_cast<int64_t>(i), i, players[i], arbiter::build::Position{});
    const auto bytes = builder.finish();
    const auto batch = arbiter::Batch::verified(bytes);
    ASSERT_TRUE(batch.has_value());

    const std::unordered_map<uint32_t, std::string> records = {
        {5, "five"}, {9, "nine"}, {12, "twelve"}};
    std::vector<std::string> asked;
    std::vector<uint32_t> handled;
    arbiter::for_each_event_looking_ahead<4>(
        batch->events(), records, [&](const std::string& record) { asked.push_back(record); },
        [&](const arbiter::fb::Event& event) { handled.push_back(event.player()); });
    EXPECT_EQ(handled, players);
    // Groups of 4: {5 9 5 0}, {12 9 9 40}, {5 12 7}; 0, 40 and 7 have no record.
    EXPECT_EQ(asked, (std::vector<std::string>{"five", "nine", "five", "twelve", "nine", "nine",
                                               "five", "twelve"}));
}

// A hash map walked in key order: every entry once, ascending, the entries themselves.
TEST(KeyOrder, WalksAHashMapInKeyOrder) {
    std::unordered_map<uint32_t, int> players;
    for (uint32_t id : {907u, 3u, 65536u, 12u, 4'000'000'000u, 0u, 511u})
        players[id] = static_cast<int>(id % 1000);
    const auto entries = arbiter::in_key_order(players);
    std::vector<uint32_t> keys;
    for (const auto* entry : entries)
        keys.push_back(entry->first);
    EXPECT_EQ(keys, (std::vector<uint32_t>{0, 3, 12, 511, 907, 65536, 4'000'000'000u}));
    entries[2]->second = -1;  // player 12, in the map itself
    EXPECT_EQ(players.at(12), -1);
    std::unordered_map<uint32_t, int> none;
    EXPECT_TRUE(arbiter::in_key_order(none).empty());
}

}  // namespace

// The schema describe_config answers is recorded from the parser's own calls.
TEST(ConfigSchema, RecordsTypesRangesAndDefaultsFromTheParser) {
    arbiter::ConfigTable table = arbiter::ConfigTable::describing();
    EXPECT_TRUE(table.is_describing());
    EXPECT_EQ(table.number("threshold", 0.5, arbiter::Range::between(0, 1)), 0.5);
    EXPECT_EQ(table.integer("window", 10, arbiter::Range{0, 100, true}), 10);
    EXPECT_EQ(table.string("mode", "fast"), "fast");
    const arbiter::ConfigTable movement = table.table("movement");
    movement.boolean("strict", false);
    movement.strings("names");
    const arbiter::ConfigTable weapons = table.table("weapons");
    EXPECT_TRUE(weapons.keys().empty());  // keys the parser cannot name: left open
    EXPECT_FALSE(table.has("kinds"));     // reached only behind has(): any value
    table.reject_unknown_keys();          // nothing to reject while describing
    EXPECT_EQ(table.schema_json(),
              R"({"type":"object","properties":{)"
              R"("kinds":{},)"
              R"("mode":{"type":"string","default":"fast"},)"
              R"("movement":{"type":"object","properties":{)"
              R"("names":{"type":"array","items":{"type":"string"}},)"
              R"("strict":{"type":"boolean","default":false}},"additionalProperties":false},)"
              R"("threshold":{"type":"number","minimum":0,"maximum":1,"default":0.5},)"
              R"("weapons":{"type":"object","properties":{},"additionalProperties":true},)"
              R"("window":{"type":"integer","exclusiveMinimum":0,"maximum":100,"default":10}},)"
              R"("additionalProperties":false})");
}

TEST(ConfigSchema, AKeyReadAsTwoTypesIsLeftUnconstrained) {
    arbiter::ConfigTable table = arbiter::ConfigTable::describing();
    table.number("limit", 1.0);
    table.string("limit", "auto");
    EXPECT_EQ(table.schema_json(),
              R"({"type":"object","properties":{"limit":{}},"additionalProperties":false})");
}

TEST(ConfigSchema, AnOrdinaryTableIsNotDescribing) {
    EXPECT_FALSE(arbiter::ConfigTable().is_describing());
    EXPECT_EQ(arbiter::ConfigTable().schema_json(), "");
}
