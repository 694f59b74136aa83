// The demo reader on demos written as DDNet writes them: every chunk kind and header
// field it knows, each format version, and damaged, truncated and foreign files (each
// problem reported by its offset, the rest read).
#include <gtest/gtest.h>

#include <random>

#include "demo_builder.hpp"
#include "demo_reader.hpp"
#include "huffman.hpp"

namespace arbiter::ddnet {
namespace {

using test::character;
using test::client_info;
using test::Recorder;
using test::snapshot_of;
using test::Tee;

struct Collect final : DemoVisitor {
    DemoHeader header;
    std::vector<DemoSnapshot> snapshots;
    std::vector<DemoMessage> messages;
    std::vector<std::pair<uint64_t, uint64_t>> gaps;
    void on_header(const DemoHeader& h) override { header = h; }
    void on_snapshot(const DemoSnapshot& s) override { snapshots.push_back(s); }
    void on_message(const DemoMessage& m) override { messages.push_back(m); }
    void on_gap(uint64_t from, uint64_t to) override { gaps.emplace_back(from, to); }
};

// A tee running right for `ticks` snapshots, every second tick, keyframes every 50.
std::vector<uint8_t> running_demo(int version, int snapshots,
                                  std::vector<uint64_t>* offsets = nullptr) {
    Recorder rec(version, 50);
    for (int i = 0; i < snapshots; ++i) {
        const int32_t tick = 1000 + 2 * i;
        if (offsets) offsets->push_back(rec.bytes().size());
        rec.record(
            tick,
            snapshot_of(
                {client_info(0, "runner"), test::player_info(0, true),
                 character(
                     {.id = 0, .tick = tick, .x = 100 + 20 * i, .y = 500, .vel_x = 256 * 10})}));
    }
    return rec.bytes();
}

TEST(DdnetDemoReader, ReadsTheHeaderOfEachVersion) {
    for (int version : {4, 5, 6}) {
        Collect c;
        const DemoReadResult r = read_demo(running_demo(version, 3), c);
        ASSERT_TRUE(r.header_ok) << version;
        EXPECT_TRUE(r.problems.empty()) << version;
        EXPECT_EQ(r.header.version, version);
        EXPECT_EQ(r.header.net_version, "0.6 626fce9a778df4d4");
        EXPECT_EQ(r.header.map_name, "testmap");
        EXPECT_EQ(r.header.type, "client");
        EXPECT_EQ(r.header.map_crc, 0x12345678u);
        EXPECT_EQ(r.header.timestamp, "2026-01-01_00-00-00");
        EXPECT_EQ(r.header.has_sha256, version >= 6);
        EXPECT_EQ(c.header.map_name, "testmap");
        EXPECT_EQ(c.snapshots.size(), 3u);
    }
}

TEST(DdnetDemoReader, SnapshotsDeltasAndTicks) {
    for (int version : {4, 5, 6}) {
        Collect c;
        const DemoReadResult r = read_demo(running_demo(version, 60), c);
        EXPECT_TRUE(r.problems.empty());
        // Keyframes at ticks 1000, 1052 and 1104 (each more than 50 ticks after the last).
        EXPECT_EQ(r.snapshots, 3u) << version;
        EXPECT_EQ(r.deltas, 57u);
        EXPECT_EQ(r.tick_markers, 60u);
        EXPECT_EQ(r.first_tick, 1000);
        EXPECT_EQ(r.last_tick, 1118);
        ASSERT_EQ(c.snapshots.size(), 60u);
        EXPECT_TRUE(c.snapshots[0].keyframe);
        EXPECT_FALSE(c.snapshots[1].keyframe);
        for (size_t i = 0; i < c.snapshots.size(); ++i) {
            const DemoSnapshot& s = c.snapshots[i];
            EXPECT_EQ(s.tick, 1000 + 2 * static_cast<int32_t>(i));
            ASSERT_EQ(s.characters.size(), 1u);
            EXPECT_EQ(s.characters[0].x, 100 + 20 * static_cast<int32_t>(i));  // through deltas
            EXPECT_EQ(s.characters[0].tick, s.tick);
        }
    }
}

TEST(DdnetDemoReader, CharacterClientAndPlayerItems) {
    Recorder rec;
    std::vector<SnapItem> items = {client_info(3, "Nameless tee"), test::player_info(3, false),
                                   character({.id = 3,
                                              .tick = 77,
                                              .x = 320,
                                              .y = -64,
                                              .vel_x = -512,
                                              .vel_y = 128,
                                              .angle = 804,
                                              .direction = -1,
                                              .jumped = 3,
                                              .hook_state = 4,
                                              .weapon = 2,
                                              .attack_tick = 70})};
    for (SnapItem& extra : test::ddnet_character(3, 0x4001, 150, -40))
        items.push_back(extra);
    items.push_back({8, 5, std::vector<int32_t>(15, 9)});  // a CharacterCore alone
    rec.record(80, snapshot_of(items));
    Collect c;
    const DemoReadResult r = read_demo(rec.bytes(), c);
    ASSERT_TRUE(r.problems.empty());
    ASSERT_EQ(c.snapshots.size(), 1u);
    const DemoSnapshot& s = c.snapshots[0];
    ASSERT_EQ(s.clients.size(), 1u);
    EXPECT_EQ(s.clients[0].client_id, 3);
    EXPECT_EQ(s.clients[0].name, "Nameless tee");
    EXPECT_EQ(s.clients[0].clan, "clan");
    EXPECT_EQ(s.clients[0].skin, "default");
    EXPECT_EQ(s.clients[0].country, 276);
    ASSERT_EQ(s.players.size(), 1u);
    EXPECT_FALSE(s.players[0].local);
    EXPECT_EQ(s.players[0].latency, 30);
    ASSERT_EQ(s.characters.size(), 2u);
    const CharacterItem& t = s.characters[0];
    EXPECT_EQ(t.client_id, 3);
    EXPECT_EQ(t.tick, 77);
    EXPECT_EQ(t.x, 320);
    EXPECT_EQ(t.y, -64);
    EXPECT_EQ(t.vel_x, -512);
    EXPECT_EQ(t.vel_y, 128);
    EXPECT_EQ(t.angle, 804);
    EXPECT_EQ(t.direction, -1);
    EXPECT_EQ(t.jumped, 3);
    EXPECT_EQ(t.hook_state, 4);
    EXPECT_TRUE(t.full);
    EXPECT_EQ(t.weapon, 2);
    EXPECT_EQ(t.attack_tick, 70);
    EXPECT_EQ(t.target_x, 150);
    EXPECT_EQ(t.target_y, -40);
    const CharacterItem& core = s.characters[1];
    EXPECT_FALSE(core.full);
    EXPECT_EQ(core.x, 9);
    EXPECT_FALSE(core.target_x);
}

TEST(DdnetDemoReader, MessagesKillAndOthers) {
    Recorder rec;
    rec.record(10, snapshot_of({client_info(1, "a")}));
    rec.message(10, test::kill_message(2, 1, 3));
    rec.message(10, {static_cast<uint8_t>(3 << 1), 0, 0});  // Sv_Chat (not decoded further)
    rec.message(10, {1});                                   // a system message, id 0
    Collect c;
    const DemoReadResult r = read_demo(rec.bytes(), c);
    EXPECT_TRUE(r.problems.empty());
    EXPECT_EQ(r.messages, 3u);
    ASSERT_EQ(c.messages.size(), 3u);
    ASSERT_TRUE(c.messages[0].kill);
    EXPECT_EQ(c.messages[0].kill->killer, 2);
    EXPECT_EQ(c.messages[0].kill->victim, 1);
    EXPECT_EQ(c.messages[0].kill->weapon, 3);
    EXPECT_EQ(c.messages[0].tick, 10);
    EXPECT_EQ(c.messages[1].id, 3);
    EXPECT_FALSE(c.messages[1].kill);
    EXPECT_TRUE(c.messages[2].system);
}

TEST(DdnetDemoReader, RefusesWhatIsNotADemoItReads) {
    auto problems_of = [](std::vector<uint8_t> bytes) {
        Collect c;
        DemoReadResult r = read_demo(bytes, c);
        EXPECT_FALSE(r.header_ok);
        EXPECT_TRUE(c.snapshots.empty());
        return r.problems;
    };
    EXPECT_EQ(problems_of({}).at(0).offset, 0u);
    std::vector<uint8_t> demo = running_demo(6, 2);
    auto wrong = demo;
    wrong[0] = 'X';
    EXPECT_NE(problems_of(wrong).at(0).what.find("TWDEMO"), std::string::npos);
    wrong = demo;
    wrong[7] = 3;
    EXPECT_NE(problems_of(wrong).at(0).what.find("version 3"), std::string::npos);
    wrong = demo;
    wrong[7] = 7;
    EXPECT_EQ(problems_of(wrong).at(0).offset, 7u);
    wrong = demo;
    wrong[8] = '0';
    wrong[9] = '.';
    wrong[10] = '7';
    EXPECT_NE(problems_of(wrong).at(0).what.find("0.7"), std::string::npos);
    wrong = demo;
    wrong[136] = 0x7f;  // map data past the end
    EXPECT_NE(problems_of(wrong).at(0).what.find("map data"), std::string::npos);
    wrong.assign(demo.begin(), demo.begin() + 300);  // cut in the timeline markers
    EXPECT_EQ(problems_of(wrong).at(0).offset, 176u);
}

TEST(DdnetDemoReader, SkipsTheMapData) {
    DemoWriter w(6, "withmap");
    std::vector<uint8_t> bytes = w.bytes();
    // A 100-byte map after the header: size at offset 136, big-endian.
    bytes[139] = 100;
    bytes.insert(bytes.end(), 100, 0xc0);  // bytes that would look like tick markers
    DemoWriter body(6, "withmap");
    body.tick(5, true);
    body.snapshot(snapshot_of({client_info(0, "x")}));
    bytes.insert(bytes.end(), body.bytes().begin() + static_cast<ptrdiff_t>(w.bytes().size()),
                 body.bytes().end());
    Collect c;
    const DemoReadResult r = read_demo(bytes, c);
    EXPECT_TRUE(r.problems.empty());
    EXPECT_EQ(r.header.map_size, 100u);
    ASSERT_EQ(c.snapshots.size(), 1u);
    EXPECT_EQ(c.snapshots[0].tick, 5);
}

TEST(DdnetDemoReader, TruncatedDemoIsReportedWhereItEndsAndTheRestRead) {
    std::vector<uint64_t> offsets;
    const std::vector<uint8_t> demo = running_demo(6, 40, &offsets);
    // Cut in the middle of snapshot 30's chunk: 30 snapshots read, the cut reported.
    const size_t cut = offsets[30] + 3;
    Collect c;
    const DemoReadResult r = read_demo(std::span(demo).subspan(0, cut), c);
    EXPECT_TRUE(r.header_ok);
    EXPECT_EQ(c.snapshots.size(), 30u);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_GE(r.problems[0].offset, offsets[30]);
    EXPECT_LT(r.problems[0].offset, cut);
    EXPECT_NE(r.problems[0].what.find("truncated"), std::string::npos);
}

TEST(DdnetDemoReader, DamageIsReportedByOffsetAndReadingResumesAtTheNextKeyframe) {
    std::vector<uint64_t> offsets;
    std::vector<uint8_t> demo = running_demo(6, 80, &offsets);
    // Snapshot 10 is a delta: garble its chunk's payload. Keyframes: 0, 26, 52, 78.
    for (size_t i = offsets[10] + 2; i < offsets[11] - 1; ++i)
        demo[i] ^= 0x5a;
    Collect c;
    const DemoReadResult r = read_demo(demo, c);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_GE(r.problems[0].offset, offsets[10]);
    EXPECT_LT(r.problems[0].offset, offsets[11]);
    EXPECT_NE(r.problems[0].what.find("damaged"), std::string::npos);
    ASSERT_EQ(c.gaps.size(), 1u);
    EXPECT_EQ(c.gaps[0].second, offsets[26]);
    EXPECT_EQ(r.bytes_skipped, offsets[26] - r.problems[0].offset);
    // Snapshots 0-9 and 26-79 read, each with its right position.
    ASSERT_EQ(c.snapshots.size(), 10u + 54u);
    EXPECT_EQ(c.snapshots[10].tick, 1000 + 2 * 26);
    EXPECT_EQ(c.snapshots[10].characters.at(0).x, 100 + 20 * 26);
    EXPECT_EQ(c.snapshots.back().characters.at(0).x, 100 + 20 * 79);
}

TEST(DdnetDemoReader, DamageWithNoKeyframeAfterSkipsTheRest) {
    std::vector<uint64_t> offsets;
    std::vector<uint8_t> demo = running_demo(5, 20, &offsets);
    demo[offsets[15]] = 0x00;  // a chunk of type 0: no such chunk
    Collect c;
    const DemoReadResult r = read_demo(demo, c);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].offset, offsets[15]);
    EXPECT_NE(r.problems[0].what.find("rest is skipped"), std::string::npos);
    EXPECT_EQ(c.snapshots.size(), 15u);
}

TEST(DdnetDemoReader, StructuralDamageIsReported) {
    // A delta before any snapshot, a chunk before any tick, a tick going back.
    Snapshot s = snapshot_of({client_info(0, "x")});
    {
        DemoWriter w(6, "m");
        w.tick(10, false);
        w.delta(Snapshot{}, s);
        Collect c;
        const DemoReadResult r = read_demo(w.bytes(), c);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_NE(r.problems[0].what.find("no snapshot before it"), std::string::npos);
    }
    {
        DemoWriter w(6, "m");
        w.snapshot(s);
        Collect c;
        const DemoReadResult r = read_demo(w.bytes(), c);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_NE(r.problems[0].what.find("before any tick marker"), std::string::npos);
    }
    {
        DemoWriter w(6, "m");
        w.tick(10, true);
        w.snapshot(s);
        const size_t back_at = w.bytes().size();
        w.tick(5, false);
        w.delta(s, s);
        Collect c;
        const DemoReadResult r = read_demo(w.bytes(), c);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_EQ(r.problems[0].offset, back_at);
        EXPECT_NE(r.problems[0].what.find("tick 5 after tick 10"), std::string::npos);
        EXPECT_EQ(c.snapshots.size(), 1u);
    }
    {
        // A snapshot chunk whose payload decodes to a broken snapshot.
        DemoWriter w(6, "m");
        w.tick(10, true);
        const std::vector<int32_t> broken = {4, 5, 0};
        w.raw_chunk(ChunkType::snapshot, encode_chunk_payload(broken));
        Collect c;
        const DemoReadResult r = read_demo(w.bytes(), c);
        ASSERT_EQ(r.problems.size(), 1u);
        EXPECT_TRUE(c.snapshots.empty());
    }
}

TEST(DdnetDemoReader, ArbitraryDamageNeverCrashes) {
    const std::vector<uint8_t> demo = running_demo(6, 120);
    std::mt19937 random(41);
    for (int round = 0; round < 300; ++round) {
        std::vector<uint8_t> bytes = demo;
        const int hits = 1 + static_cast<int>(random() % 8);
        for (int h = 0; h < hits; ++h)
            bytes[436 + random() % (bytes.size() - 436)] = static_cast<uint8_t>(random());
        if (round % 3 == 0) bytes.resize(436 + random() % (bytes.size() - 436));
        Collect c;
        const DemoReadResult r = read_demo(bytes, c);
        EXPECT_TRUE(r.header_ok);
        EXPECT_LE(c.snapshots.size(), 120u);
    }
}

TEST(DdnetDemoReader, FileReading) {
    Collect c;
    const DemoReadResult r = read_demo_file("/nonexistent/x.demo", c);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].offset, 0u);
    EXPECT_FALSE(r.header_ok);
    EXPECT_TRUE(is_demo_magic(running_demo(6, 1)));
    EXPECT_FALSE(is_demo_magic(std::vector<uint8_t>{'T', 'W'}));
}

}  // namespace
}  // namespace arbiter::ddnet
