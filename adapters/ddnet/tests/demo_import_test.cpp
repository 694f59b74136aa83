// `arbiter import X.demo`: what a demo becomes (joins, positions in metres, the server's
// own moves, the orders of each input kind, leaves), what a damaged demo writes, and a
// macro (a key pressed at a fixed period) reaching kaladin through the DDNet profile.
#include <gtest/gtest.h>
#include <arbiter/sdk/events.hpp>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "demo_builder.hpp"
#include "demo_import.hpp"
#include "support.hpp"

namespace arbiter::ddnet {
namespace {

using test::character;
using test::client_info;
using test::Recorder;
using test::snapshot_of;
using test::Tee;
using tools::test::TempDir;

std::filesystem::path write_demo(const TempDir& dir, const std::vector<uint8_t>& bytes,
                                 const std::string& name = "t.demo") {
    const auto path = dir / name;
    tools::test::write_text(path, std::string(bytes.begin(), bytes.end()));
    return path;
}

std::vector<const fb::Event*> of_player(const tools::test::MatchFile& m, uint32_t player,
                                        fb::EventBody body) {
    std::vector<const fb::Event*> out;
    for (const fb::Event* e : m.events)
        if (e->player() == player && e->body_type() == body) out.push_back(e);
    return out;
}

std::vector<std::string> order_kinds(const tools::test::MatchFile& m, uint32_t player) {
    std::vector<std::string> out;
    for (const fb::Event* e : of_player(m, player, fb::EventBody::Order))
        out.push_back(e->body_as_Order()->kind()->str());
    return out;
}

TEST(DdnetDemoImport, PlayersPositionsAndInputs) {
    Recorder rec;
    Tee a{.id = 0, .tick = 100, .x = 320, .y = 640, .vel_x = 256, .angle = 0, .weapon = 1};
    auto snap = [&](int32_t tick, std::vector<SnapItem> more = {}) {
        std::vector<SnapItem> items = {client_info(0, "alice"), character(a)};
        items.insert(items.end(), more.begin(), more.end());
        rec.record(tick, snapshot_of(items));
    };
    snap(100);
    a.tick = 101;  // the server computed a new state: moved, direction, jump, aim
    a.x = 330;
    a.direction = 1;
    a.jumped = 1;
    a.angle = 100;
    snap(102);
    snap(104);  // nothing new computed: no event
    a.tick = 105;
    a.angle = 200;  // the aim keeps moving: a repeat
    a.hook_state = 4;
    a.attack_tick = 105;
    a.weapon = 3;
    snap(106);
    a.tick = 107;
    a.x = 330 + 32 * 40;  // 40 tiles in 2 ticks: a teleporter
    snap(108);
    snap(110, {client_info(1, "bob"), character({.id = 1, .tick = 109, .x = 64, .y = 64})});
    rec.record(112, snapshot_of({client_info(1, "bob")}));  // alice left

    TempDir dir;
    const auto in = write_demo(dir, rec.bytes());
    const DemoImportReport report = import_demo(in, dir / "out.arbev", {});
    ASSERT_TRUE(report.written);
    EXPECT_TRUE(report.read.problems.empty());
    EXPECT_EQ(report.players, 2u);
    const tools::test::MatchFile m = tools::test::read_match(dir / "out.arbev");
    ASSERT_GE(m.events.size(), 3u);
    const fb::MatchStart* start = m.events.front()->body_as_MatchStart();
    ASSERT_NE(start, nullptr);
    EXPECT_EQ(start->game()->str(), "ddnet");
    EXPECT_EQ(start->map()->str(), "testmap");
    EXPECT_FLOAT_EQ(start->tick_rate_hz(), 50.0f);
    EXPECT_EQ(m.events.back()->body_type(), fb::EventBody::MatchEnd);

    const auto joins = of_player(m, 1, fb::EventBody::PlayerJoin);
    ASSERT_EQ(joins.size(), 1u);
    EXPECT_EQ(joins[0]->body_as_PlayerJoin()->account_id()->str(), "alice");
    EXPECT_EQ(
        of_player(m, 2, fb::EventBody::PlayerJoin).at(0)->body_as_PlayerJoin()->account_id()->str(),
        "bob");
    EXPECT_EQ(of_player(m, 1, fb::EventBody::PlayerLeave).size(), 1u);

    const auto positions = of_player(m, 1, fb::EventBody::PositionUpdate);
    ASSERT_EQ(positions.size(), 4u);  // ticks 100, 101, 105, 107
    const auto* first = positions[0]->body_as_PositionUpdate();
    EXPECT_TRUE(first->server_teleport());            // a character appearing
    EXPECT_FLOAT_EQ(first->position()->x(), 10.0f);   // 320 / 32
    EXPECT_FLOAT_EQ(first->position()->z(), -20.0f);  // -640 / 32: z up
    EXPECT_FLOAT_EQ(first->position()->y(), 0.0f);
    EXPECT_NEAR(first->velocity()->x(), 50.0 / 32.0, 1e-5);  // 1 unit a tick
    EXPECT_EQ(positions[0]->relay_time_us(), 0);
    EXPECT_EQ(positions[1]->relay_time_us(), 20000);  // tick 101: the state's own tick
    EXPECT_EQ(positions[1]->tick(), 101u);
    EXPECT_FALSE(positions[1]->body_as_PositionUpdate()->server_teleport());
    EXPECT_FALSE(positions[2]->body_as_PositionUpdate()->server_teleport());
    EXPECT_TRUE(positions[3]->body_as_PositionUpdate()->server_teleport());  // teleporter

    EXPECT_EQ(order_kinds(m, 1), (std::vector<std::string>{"direction", "jump", "aim", "hook",
                                                           "fire", "weapon", "aim"}));
    const auto orders = of_player(m, 1, fb::EventBody::Order);
    EXPECT_FALSE(orders[2]->body_as_Order()->repeat());  // the aim starts moving
    EXPECT_TRUE(orders[6]->body_as_Order()->repeat());   // and keeps moving
    const fb::Vec3* target = orders[0]->body_as_Order()->target();
    ASSERT_NE(target, nullptr);
    EXPECT_NEAR(target->x(), (330 + 32 * std::cos(100 / 256.0)) / 32.0, 1e-4);
    // Schema 1.2: a 0.6 character has only its angle: the aim point is 256 units along
    // it, relative to the tee, on its positions and orders alike; no look.
    ASSERT_TRUE(aim_of(*orders[0]));
    EXPECT_NEAR(aim_of(*orders[0])->x(), 256 * std::cos(100 / 256.0), 1e-3);
    EXPECT_NEAR(aim_of(*orders[0])->y(), 256 * std::sin(100 / 256.0), 1e-3);
    EXPECT_TRUE(aim_of(*orders[0])->relative());
    EXPECT_FALSE(look_of(*orders[0]));
    ASSERT_TRUE(aim_of(*positions[2]));
    EXPECT_NEAR(aim_of(*positions[2])->x(), 256 * std::cos(200 / 256.0), 1e-3);
    // Every event in relay-time order (the writer checks it too).
    for (size_t i = 1; i < m.events.size(); ++i)
        EXPECT_LE(m.events[i - 1]->relay_time_us(), m.events[i]->relay_time_us());
}

TEST(DdnetDemoImport, KillsAndReappearancesAreTheServersMoves) {
    Recorder rec;
    Tee t{.id = 2, .tick = 10, .x = 0, .y = 0};
    rec.record(10, snapshot_of({client_info(2, "carol"), character(t)}));
    t.tick = 11;
    t.x = 32;
    rec.record(12, snapshot_of({client_info(2, "carol"), character(t)}));
    rec.message(12, test::kill_message(2, 2, -1));
    t.tick = 13;  // killed and respawned between two snapshots, one tile away
    t.x = 64;
    rec.record(14, snapshot_of({client_info(2, "carol"), character(t)}));
    rec.record(16, snapshot_of({client_info(2, "carol")}));  // out of view
    t.tick = 17;
    t.x = 96;
    rec.record(18, snapshot_of({client_info(2, "carol"), character(t)}));
    TempDir dir;
    const DemoImportReport report = import_demo(write_demo(dir, rec.bytes()), dir / "o.arbev", {});
    ASSERT_TRUE(report.written);
    const auto m = tools::test::read_match(dir / "o.arbev");
    const auto positions = of_player(m, 1, fb::EventBody::PositionUpdate);
    ASSERT_EQ(positions.size(), 4u);
    std::vector<bool> teleports;
    for (const auto* e : positions)
        teleports.push_back(e->body_as_PositionUpdate()->server_teleport());
    EXPECT_EQ(teleports, (std::vector<bool>{true, false, true, true}));
    EXPECT_EQ(report.server_teleports, 3u);
}

TEST(DdnetDemoImport, ARenamedSlotIsAnotherPlayerAndANameBackIsAReconnect) {
    Recorder rec;
    rec.record(10, snapshot_of({client_info(0, "dave")}));
    rec.record(12, snapshot_of({client_info(0, "erin")}));
    rec.record(14, snapshot_of({client_info(5, "dave")}));
    TempDir dir;
    const DemoImportReport report = import_demo(write_demo(dir, rec.bytes()), dir / "o.arbev", {});
    ASSERT_TRUE(report.written);
    EXPECT_EQ(report.players, 2u);
    const auto m = tools::test::read_match(dir / "o.arbev");
    const auto dave = of_player(m, 1, fb::EventBody::PlayerJoin);
    ASSERT_EQ(dave.size(), 2u);
    EXPECT_FALSE(dave[0]->body_as_PlayerJoin()->reconnect());
    EXPECT_TRUE(dave[1]->body_as_PlayerJoin()->reconnect());
    EXPECT_EQ(of_player(m, 1, fb::EventBody::PlayerLeave).size(), 1u);
    EXPECT_EQ(of_player(m, 2, fb::EventBody::PlayerLeave).size(), 1u);
}

TEST(DdnetDemoImport, ADamagedDemoWritesWhatCouldBeReadAndABadOneNothing) {
    Recorder rec(6, 50);
    std::vector<size_t> offsets;
    for (int i = 0; i < 60; ++i) {
        offsets.push_back(rec.bytes().size());
        rec.record(100 + 2 * i, snapshot_of({client_info(0, "f"),
                                             character({.id = 0, .tick = 100 + 2 * i, .x = i})}));
    }
    std::vector<uint8_t> bytes = rec.bytes();
    bytes.resize(offsets[40] + 2);  // truncated
    TempDir dir;
    const DemoImportReport cut = import_demo(write_demo(dir, bytes), dir / "cut.arbev", {});
    EXPECT_TRUE(cut.written);
    ASSERT_EQ(cut.read.problems.size(), 1u);
    EXPECT_EQ(cut.read.problems[0].offset, offsets[40] + 1);
    EXPECT_EQ(
        of_player(tools::test::read_match(dir / "cut.arbev"), 1, fb::EventBody::PositionUpdate)
            .size(),
        40u);

    const DemoImportReport none =
        import_demo(write_demo(dir, {'n', 'o', 'p', 'e'}, "bad.demo"), dir / "bad.arbev", {});
    EXPECT_FALSE(none.written);
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.arbev"));
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"bad.demo", "cut.arbev", "t.demo"}));
    EXPECT_THROW(import_demo(dir / "t.demo", dir / "x.arbev", {.batch_events = 0}),
                 std::invalid_argument);
}

// The DDNet profile is not blind to input timing: a tee whose direction key flips every
// 10 ticks exactly for 90 s (a macro) reaches Monitor by kaladin, while the same tee
// flipping at human intervals stays Clear.
TEST(DdnetDemoImport, AMacroReachesMonitorThroughTheDdnetProfile) {
    Recorder rec;
    std::mt19937 random(3);
    int32_t human_next = 0, human_dir = 1, macro_dir = 1;
    Tee macro{.id = 0}, human{.id = 1, .x = 5000};
    for (int32_t tick = 0; tick <= 50 * 90; tick += 2) {
        if (tick % 10 == 0) {
            macro_dir = -macro_dir;
            macro.tick = tick;
            macro.direction = macro_dir;
        }
        if (tick >= human_next) {
            human_dir = -human_dir;
            human.tick = tick;
            human.direction = human_dir;
            human_next = tick + 2 * (3 + static_cast<int32_t>(random() % 40));
        }
        rec.record(tick + 2, snapshot_of({client_info(0, "macro"), client_info(1, "human"),
                                          character(macro), character(human)}));
    }
    TempDir dir;
    const auto in = write_demo(dir, rec.bytes());
    ASSERT_TRUE(import_demo(in, dir / "m.arbev", {}).written);
    const auto result = tools::test::run_arbiter(
        {"replay", DDNET_CONFIG, (dir / "m.arbev").string(), "--json"}, dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::map<std::string, std::string> action;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line);
        action[j["account_id"]] = j["action"];
    }
    EXPECT_EQ(action["macro"], "Monitor");
    EXPECT_EQ(action["human"], "Clear");
}

TEST(DdnetDemoImport, DemosAreToldByNameOrMarker) {
    TempDir dir;
    const auto named = write_demo(dir, {'x'}, "a.demo");
    const auto marked = write_demo(dir, Recorder().bytes(), "a.bin");
    const auto other = write_demo(dir, {'a', ',', 'b'}, "a.csv");
    EXPECT_TRUE(looks_like_demo(named));
    EXPECT_TRUE(looks_like_demo(marked));
    EXPECT_FALSE(looks_like_demo(other));
}

}  // namespace
}  // namespace arbiter::ddnet
