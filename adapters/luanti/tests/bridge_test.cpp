// The Luanti bridge: every line kind the mod writes, read and turned into events; hostile
// lines refused with their reason; the segments followed as they grow; and, against a real
// `arbiter serve`, a bridge stopped and started again that loses nothing and sends nothing
// twice.
#include <gtest/gtest.h>
#include <arbiter/sdk/events.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <arbiter/events_generated.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bridge.hpp"
#include "lines.hpp"
#include "match_builder.hpp"
#include "segment_follower.hpp"
#include "support/cli.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::luanti {
namespace {

using nlohmann::json;

Line parsed(const std::string& text) {
    ParsedLine result = parse_line(text);
    if (auto* problem = std::get_if<std::string>(&result)) {
        ADD_FAILURE() << text << ": " << *problem;
        return {};
    }
    return std::get<Line>(result);
}

std::string refusal(const std::string& text) {
    ParsedLine result = parse_line(text);
    if (std::holds_alternative<Line>(result)) return "(taken)";
    return std::get<std::string>(result);
}

// ---- lines: each kind, as the mod writes it

TEST(LuantiLines, EveryKindTheModWritesIsRead) {
    Line start = parsed(R"({"game":"minetest","k":"start","session":"1795840150-12164482395",)"
                        R"("step_s":0.089999999999999997,"t":12164482395.0,"unix":1795840150.0,)"
                        R"("version":"5.6.1","world":"world"})");
    EXPECT_EQ(start.kind, LineKind::start);
    EXPECT_EQ(start.t_us, 12164482395);
    EXPECT_EQ(start.unix_s, 1795840150);
    EXPECT_NEAR(start.step_s, 0.09, 1e-9);
    EXPECT_EQ(start.version, "5.6.1");

    Line join = parsed(R"({"addr":"80aff7f40bcb3d1e","k":"join","lang":"","p":"alice",)"
                       R"("proto":41.0,"reconnect":false,"t":12170866305.0})");
    EXPECT_EQ(join.kind, LineKind::join);
    EXPECT_EQ(join.player, "alice");
    EXPECT_EQ(join.address_hash, 0x80aff7f40bcb3d1eull);
    EXPECT_EQ(join.protocol, 41);

    Line allow = parsed(R"({"k":"allow","t":12170866305,"p":"alice","speed":3.0000,)"
                        R"("jump":1.0000,"gravity":1.0000,"fast":true,"fly":false,)"
                        R"("noclip":false,"attached":false})");
    EXPECT_EQ(allow.kind, LineKind::allow);
    EXPECT_EQ(allow.allowance.speed, 3.0);
    EXPECT_TRUE(allow.allowance.fast);
    EXPECT_FALSE(allow.allowance.fly);

    Line pos = parsed(R"({"k":"pos","t":12170961937,"p":"alice","x":-192.0000,"y":14.0000,)"
                      R"("z":192.5000,"vx":1.0,"vy":-2.0,"vz":0.5,"yaw":0.1,"pitch":-0.2,)"
                      R"("ctl":437,"ground":false,"inside":"default:stone","server":true})");
    EXPECT_EQ(pos.kind, LineKind::pos);
    EXPECT_EQ(pos.position.y, 14.0);
    EXPECT_EQ(pos.velocity.y, -2.0);
    EXPECT_EQ(pos.controls, 437u);
    ASSERT_TRUE(pos.supported.has_value());
    EXPECT_FALSE(*pos.supported);
    EXPECT_EQ(pos.inside, "default:stone");
    EXPECT_TRUE(pos.server_move);
    EXPECT_TRUE(pos.has_look);
    EXPECT_DOUBLE_EQ(pos.yaw, 0.1);
    EXPECT_DOUBLE_EQ(pos.pitch, -0.2);
    // null: the client has not taken up the server's move yet.
    EXPECT_FALSE(parsed(R"({"k":"pos","t":1,"p":"a","x":0,"y":0,"z":0,"ground":null})")
                     .supported.has_value());
    EXPECT_FALSE(parsed(R"({"k":"pos","t":1,"p":"a","x":0,"y":0,"z":0,"yaw":1})").has_look);

    Line dig = parsed(R"({"k":"dig","node":"default:dirt_with_snow","p":"alice",)"
                      R"("t":12177381060.0,"time":0.69999998807907104,"tool":"default:dirt",)"
                      R"("x":-190.0,"y":12.0,"z":194.0})");
    EXPECT_EQ(dig.kind, LineKind::dig);
    EXPECT_NEAR(dig.dig_time_s.value_or(-1), 0.7, 1e-6);
    EXPECT_EQ(dig.node, "default:dirt_with_snow");
    EXPECT_EQ(parsed(R"({"k":"dig_start","node":"default:dirt","p":"a","t":1,"tool":"",)"
                     R"("x":1,"y":2,"z":3})")
                  .kind,
              LineKind::dig_start);
    EXPECT_EQ(parsed(R"({"k":"place","node":"default:dirt","p":"a","t":1,"x":1,"y":2,"z":3})")
                  .at.z,
              3.0);
    Line punch = parsed(R"({"k":"punch","t":5,"p":"alice","target":"bob","tool":"",)"
                        R"("range":2.5,"damage":1,"interval":0.4})");
    EXPECT_EQ(punch.target, "bob");
    EXPECT_EQ(punch.range_m, 2.5);
    Line item = parsed(R"({"count":0.0,"delta":-1.0,"item":"default:pine_needles","k":"item",)"
                       R"("p":"alice","source":"step","t":12176300927.0})");
    EXPECT_EQ(item.delta, -1);
    EXPECT_EQ(item.count, 0);
    EXPECT_EQ(parsed(R"({"k":"die","t":5,"p":"alice","reason":"fall"})").reason, "fall");
    EXPECT_EQ(parsed(R"({"k":"respawn","t":5,"p":"alice"})").kind, LineKind::respawn);
    EXPECT_EQ(parsed(R"({"k":"cheat","t":5,"p":"alice","type":"dug_unbreakable"})").reason,
              "dug_unbreakable");
    EXPECT_EQ(parsed(R"({"k":"leave","t":5,"p":"alice","timeout":true})").timed_out, true);
    Line step = parsed(R"({"k":"step","t":12204383524,"n":440,"lag_us":1200})");
    EXPECT_EQ(step.step, 440u);
    EXPECT_EQ(step.lag_us, 1200);
    EXPECT_EQ(parsed(R"({"k":"lost","t":9,"steps":12,"from_t":3})").lost_steps, 12u);
    EXPECT_EQ(parsed(R"({"k":"end","reason":"shutdown","t":12204442882.0})").reason, "shutdown");
}

TEST(LuantiLines, AHostileLineIsRefusedWithItsReason) {
    EXPECT_NE(refusal("not json").find("JSON"), std::string::npos) << refusal("not json");
    EXPECT_EQ(refusal("[1,2]"), "the line is not a JSON object");
    EXPECT_EQ(refusal(R"({"t":1})"), "\"k\" is missing");
    EXPECT_EQ(refusal(R"({"k":5,"t":1})"), "\"k\" must be a string");
    EXPECT_EQ(refusal(R"({"k":"warp","t":1})"), "unknown line kind \"warp\"");
    EXPECT_EQ(refusal(R"({"k":"step","t":"1","n":1})"), "\"t\" must be a number");
    EXPECT_EQ(refusal(R"({"k":"step","t":1.5,"n":1})"), "\"t\" must be a whole number");
    EXPECT_NE(refusal(R"({"k":"step","t":1e300,"n":1})").find("outside"), std::string::npos);
    EXPECT_NE(refusal(R"({"k":"step","t":-1,"n":1})").find("outside"), std::string::npos);
    EXPECT_NE(refusal(R"({"k":"pos","t":1,"p":"a","x":1e308,"y":0,"z":0})").find("outside"),
              std::string::npos);
    EXPECT_EQ(refusal(R"({"k":"pos","t":1,"p":"a","x":0,"y":0,"z":0,"ground":1})"),
              "\"ground\" must be true, false or null");
    EXPECT_EQ(refusal(R"({"k":"leave","t":1,"p":"a","timeout":"yes"})"),
              "\"timeout\" must be true or false");
    // Player names: Luanti's own rule, nothing else.
    EXPECT_EQ(refusal(R"({"k":"leave","t":1,"p":"<script>"})"),
              "\"p\" is not a Luanti player name");
    EXPECT_EQ(refusal(R"({"k":"leave","t":1,"p":""})"), "\"p\" is empty");
    EXPECT_EQ(refusal(R"({"k":"leave","t":1,"p":"abcdefghijklmnopqrstu"})"),
              "\"p\" is longer than 20 bytes");
    EXPECT_EQ(refusal(R"({"k":"join","t":1,"p":"a","addr":"xyz"})"),
              "\"addr\" must be a hexadecimal hash");
    // Invalid UTF-8, deep nesting, huge lines.
    EXPECT_NE(refusal("{\"k\":\"end\",\"t\":1,\"reason\":\"\xff\xfe\"}"), "(taken)");
    EXPECT_NE(refusal(R"({"k":"end","t":1,"reason":[[[[1]]]]})").find("nested"),
              std::string::npos);
    EXPECT_EQ(refusal(R"({"k":"end","t":1,"reason":")" + std::string(200000, 'a') + "\"}"),
              "the line is longer than 65536 bytes");
    EXPECT_EQ(refusal(R"({"k":"die","t":1,"p":"a","reason":")" + std::string(100, 'a') + "\"}"),
              "\"reason\" is longer than 64 bytes");
    EXPECT_NE(refusal(R"({"k":"item","t":1,"p":"a","item":"x","delta":1e12,"count":1})")
                  .find("outside"),
              std::string::npos);
}

// ---- the match: lines to batches

std::vector<const fb::Event*> events_of(const std::vector<uint8_t>& batch) {
    std::vector<const fb::Event*> events;
    for (const fb::Event* e : *fb::GetEventBatch(batch.data())->events()) events.push_back(e);
    return events;
}

std::vector<std::string> a_short_run() {
    return {
        R"({"k":"start","t":1000000,"unix":1800000000,"session":"s","game":"minetest","world":"w","step_s":0.09,"version":"5.6.1"})",
        R"({"k":"join","t":1000100,"p":"alice","addr":"00ff","proto":41})",
        R"({"k":"allow","t":1000100,"p":"alice","speed":1,"fast":false})",
        R"({"k":"pos","t":1000200,"p":"alice","x":1,"y":2,"z":3,"vx":4,"vy":5,"vz":6,"ground":true,"server":true})",
        R"({"k":"step","t":1000200,"n":1,"lag_us":0})",
        R"({"k":"dig","t":1090000,"p":"alice","node":"default:dirt","x":1,"y":1,"z":3,"time":0.75})",
        R"({"k":"pos","t":1090100,"p":"alice","x":1.2,"y":2,"z":3,"yaw":4.5,"pitch":0.25,"ground":false,"inside":"default:stone"})",
        R"({"k":"step","t":1090100,"n":2,"lag_us":5000})",
    };
}

std::vector<std::vector<uint8_t>> build_all(MatchBuilder& builder,
                                            const std::vector<std::string>& lines) {
    std::vector<std::vector<uint8_t>> batches;
    for (const std::string& text : lines) {
        auto refused = builder.take(parsed(text), batches);
        EXPECT_FALSE(refused) << text << ": " << *refused;
    }
    return batches;
}

TEST(LuantiMatch, AStepIsABatchInArbitersAxesWithTheServersClock) {
    MatchBuilder builder("luanti-w");
    const auto batches = build_all(builder, a_short_run());
    ASSERT_EQ(batches.size(), 2u);
    const fb::EventBatch* first = fb::GetEventBatch(batches[0].data());
    EXPECT_EQ(first->relay_id()->str(), "luanti-w");
    EXPECT_EQ(first->match_id(), 1800000000ull * 1000000 + 0);
    EXPECT_EQ(first->sequence(), 0u);
    const auto events = events_of(batches[0]);
    ASSERT_EQ(events.size(), 5u);
    EXPECT_EQ(events[0]->body_type(), fb::EventBody::MatchStart);
    EXPECT_NEAR(events[0]->body_as_MatchStart()->tick_rate_hz(), 1 / 0.09, 1e-3);
    EXPECT_EQ(events[1]->body_type(), fb::EventBody::PlayerJoin);
    EXPECT_EQ(events[1]->body_as_PlayerJoin()->account_id()->str(), "alice");
    EXPECT_EQ(events[1]->body_as_PlayerJoin()->address_hash(), 0xffu);
    EXPECT_EQ(events[2]->body_as_Extension()->type_name()->str(), "luanti.allowance");
    const auto* position = events[3]->body_as_PositionUpdate();
    // Luanti's y is up; Arbiter's z is.
    EXPECT_EQ(position->position()->x(), 1.0f);
    EXPECT_EQ(position->position()->y(), 3.0f);
    EXPECT_EQ(position->position()->z(), 2.0f);
    EXPECT_EQ(position->velocity()->z(), 5.0f);
    EXPECT_TRUE(position->on_ground().value());
    EXPECT_TRUE(position->server_teleport());
    EXPECT_EQ(events[3]->relay_time_us(), 1000200);
    EXPECT_EQ(events[4]->body_type(), fb::EventBody::TickBoundary);

    const auto second = events_of(batches[1]);
    ASSERT_EQ(second.size(), 5u);
    EXPECT_EQ(second[0]->body_as_Order()->kind()->str(), "dig");
    EXPECT_EQ(second[1]->body_as_StatChange()->stat()->str(), "dig_time");
    EXPECT_DOUBLE_EQ(second[1]->body_as_StatChange()->delta(), 0.75);
    EXPECT_FALSE(second[2]->body_as_PositionUpdate()->server_teleport());
    // The mod's yaw and pitch are the look (schema 1.2), the pitch turned up-positive; a
    // line without them has none.
    ASSERT_TRUE(look_of(*second[2]));
    EXPECT_FLOAT_EQ(look_of(*second[2])->yaw(), 4.5f);
    EXPECT_FLOAT_EQ(look_of(*second[2])->pitch(), -0.25f);
    EXPECT_FALSE(look_of(*events[3]));
    EXPECT_EQ(second[3]->body_as_Extension()->type_name()->str(), "luanti.inside");
    EXPECT_EQ(second[4]->body_as_TickBoundary()->tick_lag_us(), 5000u);
    EXPECT_EQ(second[0]->tick(), 1u);
}

TEST(LuantiMatch, LinesOutOfTurnAreRefusedAndTimeNeverGoesBack) {
    MatchBuilder builder("r");
    std::vector<std::vector<uint8_t>> batches;
    EXPECT_EQ(*builder.take(parsed(R"({"k":"step","t":1,"n":1})"), batches),
              "no match is open: the run's start line was not read");
    build_all(builder, {a_short_run()[0]});
    EXPECT_EQ(*builder.take(parsed(R"({"k":"leave","t":2000000,"p":"bob"})"), batches),
              "player 'bob' has no join line in this run");
    build_all(builder, {a_short_run()[1]});
    EXPECT_EQ(*builder.take(parsed(R"({"k":"punch","t":2000000,"p":"alice","target":"bob","range":1})"),
                            batches),
              "the punched player 'bob' has no join line in this run");
    build_all(builder, {R"({"k":"die","t":5,"p":"alice","reason":"fall"})",
                        R"({"k":"step","t":2000000,"n":1})"});
    ASSERT_EQ(batches.size(), 0u);
    EXPECT_EQ(builder.times_held(), 1u);
}

TEST(LuantiMatch, StepsTheModCouldNotWriteAreAGapInTheSequence) {
    MatchBuilder builder("r");
    auto lines = a_short_run();
    lines.insert(lines.begin() + 5, R"({"k":"lost","t":1050000,"steps":7})");
    const auto batches = build_all(builder, lines);
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_EQ(fb::GetEventBatch(batches[1].data())->sequence(), 1u + 7u);
}

TEST(LuantiMatch, ARestartWithoutAnEndLineEndsTheOldMatchFirst) {
    MatchBuilder builder("r");
    auto lines = a_short_run();
    lines.push_back(R"({"k":"start","t":5000000,"unix":1800000100,"session":"s2"})");
    const auto batches = build_all(builder, lines);
    ASSERT_EQ(batches.size(), 3u);
    const auto ending = events_of(batches[2]);
    ASSERT_EQ(ending.size(), 1u);
    EXPECT_EQ(ending[0]->body_as_MatchEnd()->reason()->str(), "server restarted");
    EXPECT_TRUE(builder.match_open());
    EXPECT_EQ(builder.match_id(), 1800000100ull * 1000000);
}

TEST(LuantiMatch, ARestoredBuilderMakesTheSameBatches) {
    const auto lines = a_short_run();
    MatchBuilder straight("r");
    const auto expected = build_all(straight, lines);

    MatchBuilder first("r");
    build_all(first, {lines.begin(), lines.begin() + 5});
    MatchBuilder second("r");
    second.restore(json::parse(first.save().dump()));
    const auto rest = build_all(second, {lines.begin() + 5, lines.end()});
    ASSERT_EQ(rest.size(), 1u);
    EXPECT_EQ(rest[0], expected[1]);

    MatchBuilder other("another-relay");
    EXPECT_THROW(other.restore(first.save()), std::runtime_error);
    json broken = first.save();
    broken["players"]["alice"]["id"] = 99;
    EXPECT_THROW(second.restore(broken), std::runtime_error);
    EXPECT_THROW(second.restore(json{{"relay", "r"}}), std::runtime_error);
}

// ---- the segments, followed as they grow

void append(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

TEST(LuantiSegments, ALineIsHandedOutOnlyWhole) {
    test::TempDir dir;
    SegmentFollower follower(dir.path(), {});
    EXPECT_FALSE(follower.next());
    const auto one = dir.path() / "0000000001.jsonl";
    append(one, "{\"a\":1}\n{\"b\":");
    auto line = follower.next();
    ASSERT_TRUE(line);
    EXPECT_EQ(line->text, "{\"a\":1}");
    EXPECT_EQ(line->at, (SegmentPlace{1, 0}));
    EXPECT_EQ(line->after, (SegmentPlace{1, 8}));
    EXPECT_FALSE(follower.next()) << "half a line was handed out";
    append(one, "2}\n");
    line = follower.next();
    ASSERT_TRUE(line);
    EXPECT_EQ(line->text, "{\"b\":2}");
    EXPECT_EQ(follower.place(), (SegmentPlace{1, 16}));
}

TEST(LuantiSegments, TheNextSegmentIsTakenOnceBegunAndACutLineIsReported) {
    test::TempDir dir;
    append(dir.path() / "0000000001.jsonl", "one\ncut-off");
    append(dir.path() / "0000000002.jsonl", "two\n");
    append(dir.path() / "notes.txt", "not a segment\n");
    SegmentFollower follower(dir.path(), {});
    EXPECT_EQ(follower.next()->text, "one");
    auto cut = follower.next();
    ASSERT_TRUE(cut);
    EXPECT_NE(cut->problem.find("ends inside a line"), std::string::npos);
    EXPECT_EQ(cut->at, (SegmentPlace{1, 4}));
    auto two = follower.next();
    ASSERT_TRUE(two);
    EXPECT_EQ(two->text, "two");
    EXPECT_EQ(two->at, (SegmentPlace{2, 0}));
    EXPECT_EQ(follower.segments_before(follower.place()).size(), 1u);
    // Started again where it was, it reads on from there.
    SegmentFollower again(dir.path(), {2, 0});
    EXPECT_EQ(again.next()->text, "two");
}

TEST(LuantiSegments, ALineTooLongIsSkippedWithoutBeingHeld) {
    test::TempDir dir;
    const auto one = dir.path() / "0000000001.jsonl";
    append(one, std::string(5 * kMaxLineBytes, 'x'));
    SegmentFollower follower(dir.path(), {});
    EXPECT_FALSE(follower.next());
    append(one, "\nafter\n");
    auto skipped = follower.next();
    ASSERT_TRUE(skipped);
    EXPECT_NE(skipped->problem.find("longer than"), std::string::npos);
    EXPECT_EQ(skipped->at, (SegmentPlace{1, 0}));
    EXPECT_EQ(follower.next()->text, "after");
}

// ---- the bridge against a real server

class LuantiBridge : public ::testing::Test {
  protected:
    void SetUp() override {
        std::filesystem::create_directories(events());
        std::ofstream(dir_.path() / "server.toml")
            << "[host]\nserver_id = \"bridge-test\"\n[aggregation]\nmonitor_threshold = 0.3\n"
               "review_threshold = 0.7\n[serve]\nunix_socket = \""
            << (dir_.path() / "relays.sock").string()
            << "\"\n[plugins.lagpool]\nlibrary = \"lagpool\"\n"
               "[plugins.lagpool.config.kinds.dig]\ncost = \"fixed\"\nseconds = 1.0\n";
        server_.emplace(dir_.path() / "server.toml", dir_.path());
    }
    std::filesystem::path world() const { return dir_.path() / "world"; }
    std::filesystem::path events() const { return world() / "arbiter" / "events"; }
    BridgeOptions options() const {
        BridgeOptions o;
        o.world = world();
        o.connection.target = (dir_.path() / "relays.sock").string();
        o.connection.once = true;
        o.connection.quiet = true;
        return o;
    }
    // A run where alice digs ten times a second (far past a dig a second) and bob walks.
    static std::vector<std::string> a_run(int steps) {
        std::vector<std::string> lines = {
            R"({"k":"start","t":1000000,"unix":1800000000,"session":"s","world":"w"})",
            R"({"k":"join","t":1000000,"p":"alice"})", R"({"k":"join","t":1000000,"p":"bob"})"};
        for (int i = 1; i <= steps; ++i) {
            const int64_t t = 1000000 + int64_t{i} * 100000;
            lines.push_back(fmt::format(R"({{"k":"pos","t":{},"p":"bob","x":{},"y":0,"z":0}})",
                                        t, i * 0.3));
            lines.push_back(fmt::format(
                R"({{"k":"dig","t":{},"p":"alice","node":"default:dirt","x":0,"y":0,"z":0,"time":1}})",
                t));
            lines.push_back(fmt::format(R"({{"k":"step","t":{},"n":{}}})", t, i));
        }
        return lines;
    }
    void write_lines(const std::vector<std::string>& lines, size_t from, size_t to) {
        std::string text;
        for (size_t i = from; i < to; ++i) text += lines[i] + "\n";
        append(events() / "0000000001.jsonl", text);
    }

    test::TempDir dir_;
    std::optional<test::ServerProcess> server_;
};

TEST_F(LuantiBridge, AStoppedBridgeGoesOnWhereItStoppedAndSendsNothingTwice) {
    const auto lines = a_run(300);
    const std::atomic<bool> never{false};
    write_lines(lines, 0, 400);
    {
        Bridge bridge(options());
        EXPECT_EQ(bridge.run(never), 0);
        EXPECT_EQ(bridge.counts().refused, 0u);
        EXPECT_EQ(bridge.counts().lines, 400u);
    }
    // A bridge that died before it saved: its place is the saved one, behind what it sent.
    const auto state = Bridge::state_path(world());
    json saved = json::parse(std::ifstream(state));
    ASSERT_EQ(saved["segment"], 1);
    saved["offset"] = 0;
    saved["match"] = json{{"relay", "luanti-world"}, {"open", false}, {"match_id", 0},
                          {"next_sequence", 0}, {"tick", 0}, {"last_t_us", 0},
                          {"started_t_us", 0}, {"started_unix_s", 0}, {"next_player", 1},
                          {"players", json::object()}};
    std::ofstream(state) << saved.dump();
    write_lines(lines, 400, lines.size());
    write_lines({R"({"k":"end","t":99000000,"reason":"shutdown"})"}, 0, 1);
    Bridge again(options());
    EXPECT_EQ(again.run(never), 0);
    // The 132 whole steps it had sent went again and were dropped as delivered.
    EXPECT_EQ(again.counts().already_delivered, 132u);
    EXPECT_EQ(again.counts().batches, 301u);
    EXPECT_EQ(again.counts().flags, 0u) << "alice was told of before the restart";

    // The flag reached the world's flags file for the mod, once.
    std::ifstream flags(Bridge::flags_path(world()));
    std::string flag;
    ASSERT_TRUE(std::getline(flags, flag));
    EXPECT_EQ(json::parse(flag)["player"], "alice");
    EXPECT_FALSE(std::getline(flags, flag)) << "bob walks slowly and digs nothing";
    // Segments wholly sent are gone; the last is kept (the mod may still write to it).
    EXPECT_TRUE(std::filesystem::exists(events() / "0000000001.jsonl"));
}

// The place a bridge saves is never inside a step: a bridge that stopped there (its lines
// ran out halfway through step 133) starts again at the step's first line, from the state
// it saved itself, and the host hears every step once.
TEST_F(LuantiBridge, AStateSavedHalfwayThroughAStepGoesBackToTheStepsStart) {
    const auto lines = a_run(300);
    const std::atomic<bool> never{false};
    write_lines(lines, 0, 400);  // steps 1 to 132 whole, then bob's position of step 133
    {
        Bridge bridge(options());
        EXPECT_EQ(bridge.run(never), 0);
        EXPECT_EQ(bridge.counts().batches, 132u);
    }
    size_t step_132_ends = 0;
    for (size_t i = 0; i < 399; ++i) step_132_ends += lines[i].size() + 1;
    const json saved = json::parse(std::ifstream(Bridge::state_path(world())));
    EXPECT_EQ(saved["offset"], step_132_ends) << "the place saved is inside step 133";

    write_lines(lines, 400, lines.size());
    write_lines({R"({"k":"end","t":99000000,"reason":"shutdown"})"}, 0, 1);
    Bridge again(options());
    EXPECT_EQ(again.run(never), 0);
    EXPECT_EQ(again.counts().already_delivered, 0u);
    EXPECT_EQ(again.counts().batches, 168u + 1u) << "steps 133 to 300, and the end";
}

TEST_F(LuantiBridge, ABadLineIsReportedByItsPlaceAndTheRestIsSent) {
    auto lines = a_run(20);
    lines.insert(lines.begin() + 10, R"({"k":"pos","t":"soon","p":"bob","x":0,"y":0,"z":0})");
    lines.insert(lines.begin() + 11, "\xff\xfe not even text");
    write_lines(lines, 0, lines.size());
    const std::atomic<bool> never{false};
    Bridge bridge(options());
    EXPECT_EQ(bridge.run(never), 3) << "some input was refused";
    EXPECT_EQ(bridge.counts().refused, 2u);
    EXPECT_EQ(bridge.counts().batches, 20u);
}

TEST_F(LuantiBridge, ASavedStateThatIsNotOneIsAClearError) {
    write_lines(a_run(2), 0, 4);
    std::ofstream(Bridge::state_path(world())) << R"({"version":1,"segment":"one"})";
    const std::atomic<bool> never{false};
    Bridge bridge(options());
    EXPECT_EQ(bridge.run(never), 2);
    // One far past any state the bridge writes is refused by its size.
    std::ofstream(Bridge::state_path(world())) << std::string(17u << 20, ' ');
    Bridge again(options());
    EXPECT_EQ(again.run(never), 2);
}

// ---- the command

TEST(LuantiBridgeCommand, RefusesWhatItCannotRunWithTheReason) {
    test::TempDir dir;
    std::filesystem::create_directories(dir.path() / "world" / "arbiter" / "events");
    const std::string world = (dir.path() / "world").string();
    auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {ARBITER_EXE, "luanti-bridge"});
        return test::run_command(args, dir.path());
    };
    auto result = run({world});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("expected a world folder and a server"), std::string::npos);
    result = run({world, "x.sock", "--fast"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("unknown option --fast"), std::string::npos);
    result = run({world, "x.sock", "--relay"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("--relay needs a value"), std::string::npos);
    result = run({world, "x.sock", "--relay", std::string(65, 'r')});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("at most 64 bytes"), std::string::npos);
    result = run({world, "x.sock", "--relay", "\xff\xfe"});
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("--relay must be text"), std::string::npos);
    // A world the mod never wrote into: said so, with what to check.
    result = run({dir.path().string(), "x.sock"});
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("has no arbiter/events/ folder"), std::string::npos);
    result = run({world, "127.0.0.1:1", "--token-file", (dir.path() / "none").string()});
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("cannot read a token"), std::string::npos);
    // No server there: with --once, that is the answer (exit 2), not a wait.
    result = run({world, (dir.path() / "nobody.sock").string(), "--once"});
    EXPECT_EQ(result.exit_status, 2) << result.err;
}

}  // namespace
}  // namespace arbiter::luanti
