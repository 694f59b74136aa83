// The format's building blocks: the Huffman code, variable-length integers, Teeworlds
// strings, snapshots and deltas, each with what a damaged input does to it.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <variant>

#include "demo_codec.hpp"
#include "huffman.hpp"
#include "snapshot.hpp"
#include "varint.hpp"

namespace arbiter::ddnet {
namespace {

TEST(DdnetHuffman, RoundTripsEveryByteValue) {
    std::vector<uint8_t> all(256);
    std::iota(all.begin(), all.end(), 0);
    const Huffman& h = Huffman::instance();
    auto back = h.decode(h.encode(all), 1024);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, all);
    auto empty = h.decode(h.encode({}), 16);
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->empty());
}

TEST(DdnetHuffman, CodesFollowTheFormatsFrequencies) {
    // Byte 0 is by far the most frequent in the format's table: one byte of zeros codes
    // in a bit or two, and 100 of them in far fewer bytes than 100.
    const Huffman& h = Huffman::instance();
    EXPECT_LE(h.encode(std::vector<uint8_t>(100, 0)).size(), 30u);
    EXPECT_GT(h.encode(std::vector<uint8_t>(100, 0xfe)).size(), 100u);
}

TEST(DdnetHuffman, RefusesInputThatEndsInsideACodeOrWithoutEnd) {
    const Huffman& h = Huffman::instance();
    std::vector<uint8_t> coded = h.encode(std::vector<uint8_t>(50, 0xfe));
    coded.resize(coded.size() / 2);
    EXPECT_FALSE(h.decode(coded, 1024));
    EXPECT_FALSE(h.decode({}, 1024));  // not even the end-of-data symbol
}

TEST(DdnetHuffman, StopsAtTheCallersBound) {
    const Huffman& h = Huffman::instance();
    const std::vector<uint8_t> coded = h.encode(std::vector<uint8_t>(5000, 0));
    EXPECT_FALSE(h.decode(coded, 4999));
    EXPECT_TRUE(h.decode(coded, 5000));
}

TEST(DdnetVarint, RoundTripsEdgeValues) {
    const std::vector<int32_t> values = {0,         1,         -1,        63,        64,
                                         -64,       -65,       8191,      8192,      1 << 20,
                                         INT32_MAX, INT32_MIN, 123456789, -987654321};
    const std::vector<uint8_t> packed = write_varints(values);
    auto back = read_varints(packed, 100);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, values);
    std::vector<uint8_t> one;
    write_varint(one, 63);
    EXPECT_EQ(one.size(), 1u);  // six bits and a sign fit the first byte
    one.clear();
    write_varint(one, INT32_MAX);
    EXPECT_EQ(one.size(), kMaxVarintBytes);
}

TEST(DdnetVarint, RefusesACutIntegerAndTooMany) {
    std::vector<uint8_t> packed;
    write_varint(packed, 1 << 20);
    packed.pop_back();
    EXPECT_FALSE(read_varints(packed, 10));
    EXPECT_FALSE(read_varints(write_varints(std::vector<int32_t>(11, 5)), 10));
}

TEST(DdnetVarint, BytesAndIntegersAreLittleEndian) {
    const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5};
    const std::vector<int32_t> ints = bytes_to_ints(bytes);
    ASSERT_EQ(ints.size(), 2u);
    EXPECT_EQ(ints[0], 0x04030201);
    EXPECT_EQ(ints[1], 5);
    EXPECT_EQ(ints_to_bytes(ints).size(), 8u);
}

TEST(DdnetStrings, NamesSurviveTheIntegerPacking) {
    for (const std::string name : {"", "a", "nameless tee", "fifteen chars!!", "Üñí"}) {
        EXPECT_EQ(ints_to_string(string_to_ints(name, 4)), name);
    }
    // The last byte is the terminator's place: 16 characters keep 15.
    EXPECT_EQ(ints_to_string(string_to_ints("0123456789abcdef", 4)), "0123456789abcde");
}

Snapshot two_items() {
    Snapshot s;
    s.add({9, 3, std::vector<int32_t>(22, 7)});
    s.add({11, 3, std::vector<int32_t>(17, 1)});
    return s;
}

TEST(DdnetSnapshot, ParsesWhatItSerializes) {
    const Snapshot s = two_items();
    auto back = parse_snapshot(serialize_snapshot(s));
    ASSERT_TRUE(std::holds_alternative<Snapshot>(back));
    const Snapshot& r = std::get<Snapshot>(back);
    ASSERT_EQ(r.items().size(), 2u);
    ASSERT_NE(r.find(9, 3), nullptr);
    EXPECT_EQ(r.find(9, 3)->data, std::vector<int32_t>(22, 7));
    EXPECT_EQ(r.bytes(), serialize_snapshot(s).size() * 4);
}

TEST(DdnetSnapshot, RefusesBadSizesOffsetsAndKeys) {
    std::vector<int32_t> ints = serialize_snapshot(two_items());
    auto refused = [](std::vector<int32_t> v) {
        return std::holds_alternative<std::string>(parse_snapshot(v));
    };
    EXPECT_TRUE(refused({}));
    EXPECT_TRUE(refused({0}));
    auto v = ints;
    v[1] = 2000;  // more items than the format allows
    EXPECT_TRUE(refused(v));
    v = ints;
    v[0] += 4;  // data size disagrees with the chunk
    EXPECT_TRUE(refused(v));
    v = ints;
    v[3] = 2;  // an offset off the 4-byte grid
    EXPECT_TRUE(refused(v));
    v = ints;
    v[3] = v[2];  // two items at one place: an item of no size
    EXPECT_TRUE(refused(v));
    v = ints;
    v.pop_back();
    EXPECT_TRUE(refused(v));
    v = ints;
    v[4 + 23] = v[4];  // the second item's key repeats the first's
    EXPECT_TRUE(refused(v));
    EXPECT_TRUE(refused(std::vector<int32_t>(kMaxSnapshotBytes / 4 + 1, 0)));
}

TEST(DdnetSnapshot, DeltaAddsUpdatesAndDeletes) {
    Snapshot from = two_items();
    from.add({0x4000, 1, {1, 2, 3}});  // an extended type: the delta carries its size
    Snapshot to;
    SnapItem moved{9, 3, std::vector<int32_t>(22, 7)};
    moved.data[1] = -100;  // wraps through the unsigned difference
    to.add(moved);
    to.add({0x4000, 1, {1, 2, 4}});
    to.add({9, 4, std::vector<int32_t>(22, 1)});
    const std::vector<int32_t> delta = make_delta(from, to);
    EXPECT_EQ(delta[0], 1);  // the ClientInfo is gone
    EXPECT_EQ(delta[1], 3);
    auto applied = apply_delta(from, delta);
    ASSERT_TRUE(std::holds_alternative<Snapshot>(applied));
    const Snapshot& r = std::get<Snapshot>(applied);
    EXPECT_EQ(r.items().size(), 3u);
    EXPECT_EQ(r.find(11, 3), nullptr);
    EXPECT_EQ(r.find(9, 3)->data[1], -100);
    EXPECT_EQ(r.find(0x4000, 1)->data, (std::vector<int32_t>{1, 2, 4}));
    EXPECT_EQ(r.find(9, 4)->data, std::vector<int32_t>(22, 1));
    // Nothing changed: an empty delta gives the same snapshot.
    auto same = apply_delta(to, make_delta(to, to));
    ASSERT_TRUE(std::holds_alternative<Snapshot>(same));
    EXPECT_EQ(std::get<Snapshot>(same).items().size(), 3u);
}

TEST(DdnetSnapshot, RefusesBadDeltas) {
    const Snapshot from = two_items();
    auto refused = [&](std::vector<int32_t> d) {
        return std::holds_alternative<std::string>(apply_delta(from, d));
    };
    EXPECT_TRUE(refused({}));
    EXPECT_TRUE(refused({-1, 0, 0}));
    EXPECT_TRUE(refused({5, 0, 0, 1}));            // deletes past its end
    EXPECT_TRUE(refused({0, 1, 0, 9}));            // ends inside an item header
    EXPECT_TRUE(refused({0, 1, 0, 9, 3, 1, 2}));   // a Character is 22 integers
    EXPECT_TRUE(refused({0, 1, 0, 40000, 3, 0}));  // type past the format's
    EXPECT_TRUE(refused({0, 1, 0, 9, 70000}));     // id past the format's
    EXPECT_TRUE(refused({0, 1, 0, 0x4000, 1}));    // ends before the size
    EXPECT_TRUE(refused({0, 1, 0, 0x4000, 1, -3}));
    // An extended item whose size changes between snapshots.
    Snapshot ex = from;
    ex.add({0x4000, 1, {1, 2, 3}});
    EXPECT_TRUE(std::holds_alternative<std::string>(
        apply_delta(ex, std::vector<int32_t>{0, 1, 0, 0x4000, 1, 2, 0, 0})));
    // More items than a snapshot holds.
    std::vector<int32_t> many = {0, 1100, 0};
    for (int32_t i = 0; i < 1100; ++i)
        many.insert(many.end(), {13, i, 0, 0});
    EXPECT_TRUE(refused(many));
}

TEST(DdnetChunk, PayloadRoundTripsAndRefusesGarbage) {
    const std::vector<int32_t> ints = {1, -2, 300000, 0, 0, 7};
    auto back = decode_chunk_payload(encode_chunk_payload(ints));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, ints);
    std::mt19937 random(5);
    int refused = 0;
    for (int i = 0; i < 200; ++i) {
        std::vector<uint8_t> junk(1 + random() % 40);
        for (auto& b : junk)
            b = static_cast<uint8_t>(random());
        if (!decode_chunk_payload(junk)) ++refused;
    }
    EXPECT_GT(refused, 0);  // and none crashed
}

}  // namespace
}  // namespace arbiter::ddnet
