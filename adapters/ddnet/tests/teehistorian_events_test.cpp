// A teehistorian into events (`arbiter import X.teehistorian`): joins by the name a client
// sent, accounts with the auth name, positions in metres with the server's own moves
// marked, every input kind as an order, renames, drops, the finish; the command's answers
// to good, damaged and foreign files; and a macro written into a teehistorian reaching
// kaladin through the DDNet profile while irregular input stays Clear; and what the
// bridge command refuses.
#include <gtest/gtest.h>
#include <arbiter/sdk/events.hpp>

#include <cmath>
#include <map>
#include <random>

#include "support.hpp"
#include "teehistorian_events.hpp"
#include "teehistorian_import.hpp"
#include "teehistorian_writer.hpp"

namespace arbiter::ddnet {
namespace {

using test::put_int;
using test::put_string;
using test::start_info;
using test::ThWriter;
using tools::test::MatchFile;
using tools::test::TempDir;

std::filesystem::path write_file(const TempDir& dir, const std::vector<uint8_t>& bytes,
                                 const std::string& name = "game.teehistorian") {
    const auto path = dir / name;
    tools::test::write_text(path, std::string(bytes.begin(), bytes.end()));
    return path;
}

ThInput input(int32_t direction, int32_t tx, int32_t ty) {
    ThInput in;
    in.direction = direction;
    in.target_x = tx;
    in.target_y = ty;
    in.player_flags = 1;
    in.wanted_weapon = 1;
    return in;
}

std::vector<uint8_t> ints_and_text(std::initializer_list<int32_t> values, const std::string& text) {
    std::vector<uint8_t> out;
    for (int32_t v : values)
        put_int(out, v);
    put_string(out, text);
    return out;
}

// alice (0) plays; bob (1) was connected and logged in when the file began (a map change:
// no JOIN, his name comes again); client 2 never says its name; alice renames herself; bob
// leaves; alice logs in.
std::vector<uint8_t> a_game() {
    ThWriter w;
    w.extra(th_uuid_of(ThEx::auth_init), ints_and_text({1, 2}, "admin"));  // tick 0
    w.begin_tick(1);
    w.join(0);
    w.message(0, start_info("alice"));
    w.message(1, start_info("bob"));
    w.begin_tick(2);
    w.player(0, 320, 640);
    w.player(1, 0, 0);
    w.input(0, 1, input(0, 64, 0));
    w.begin_tick(3);
    w.player(0, 352, 640);  // 32 units a tick: 50 m/s
    ThInput all = input(1, 0, -64);
    all.jump = 1;
    all.hook = 1;
    all.fire = 1;
    all.wanted_weapon = 2;
    w.input(0, 1, all);
    w.begin_tick(4);
    w.player(0, 5352, 640);  // 5000 units in a tick: a teleporter
    w.begin_tick(5);
    ThInput aim = all;
    aim.target_x = 10;
    aim.fire = 2;  // released: not a shot
    w.input(0, 1, aim);
    w.begin_tick(6);
    w.join(2, true);
    w.player(2, 32, 32);
    w.begin_tick(7);
    w.message(0, start_info("alice2", true));
    w.begin_tick(8);
    w.drop(1, "Timeout Protection used");
    w.extra(th_uuid_of(ThEx::auth_login), ints_and_text({0, 1}, "mod"));
    w.begin_tick(9);
    w.finish();
    return w.bytes();
}

std::string account_of(const fb::Event* e) {
    return e->body_as_PlayerJoin()->account_id()->str();
}

TEST(TeehistorianImport, AGameBecomesOneMatchOfItsPlayersInputsAndMoves) {
    TempDir dir;
    const auto in = write_file(dir, a_game());
    ThImportOptions options;
    options.relay_id = "th";
    const ThImportReport report = import_teehistorian(in, dir / "out.arbev", options);
    ASSERT_TRUE(report.written);
    EXPECT_TRUE(report.problems.empty());
    EXPECT_TRUE(report.finished);
    const MatchFile m = tools::test::read_match(dir / "out.arbev");
    ASSERT_FALSE(m.events.empty());

    const fb::Event* start = m.events.front();
    ASSERT_EQ(start->body_type(), fb::EventBody::MatchStart);
    EXPECT_EQ(start->body_as_MatchStart()->game()->str(), "ddnet");
    EXPECT_EQ(start->body_as_MatchStart()->map()->str(), "Kobra 3 Solo");
    EXPECT_FLOAT_EQ(start->body_as_MatchStart()->tick_rate_hz(), 50.0f);
    // 04:49:44 at +01:00 is 03:49:44 UTC.
    EXPECT_EQ(start->body_as_MatchStart()->started_unix_us(), int64_t{1795837784} * 1'000'000);
    EXPECT_EQ(m.roots.front()->match_id(), 0xa1eb7182796eu);
    EXPECT_EQ(m.events.back()->body_type(), fb::EventBody::MatchEnd);

    std::map<uint32_t, std::string> accounts;
    std::vector<std::pair<uint32_t, std::string>> leaves;
    for (const fb::Event* e : m.events) {
        EXPECT_EQ(e->relay_time_us(), int64_t(e->tick()) * 20000)
            << "relay time is the file's tick";
        if (e->body_type() == fb::EventBody::PlayerJoin) accounts[e->player()] = account_of(e);
        if (e->body_type() == fb::EventBody::PlayerLeave)
            leaves.emplace_back(e->player(), e->body_as_PlayerLeave()->reason()->str());
    }
    EXPECT_EQ(accounts, (std::map<uint32_t, std::string>{
                            {1, "alice"}, {2, "bob@admin"}, {3, "client2"}, {4, "alice2"}}));
    EXPECT_EQ(leaves, (std::vector<std::pair<uint32_t, std::string>>{{1, "renamed"},
                                                                     {2, "Timeout Protection used"},
                                                                     {4, "match ended"},
                                                                     {3, "match ended"}}));

    // alice's moves: a spawn, a run at 50 m/s, a teleporter.
    std::vector<const fb::PositionUpdate*> moves;
    for (const fb::Event* e : m.events)
        if (e->player() == 1 && e->body_type() == fb::EventBody::PositionUpdate)
            moves.push_back(e->body_as_PositionUpdate());
    ASSERT_EQ(moves.size(), 3u);
    EXPECT_TRUE(moves[0]->server_teleport());
    EXPECT_FLOAT_EQ(moves[0]->position()->x(), 10.0f);
    EXPECT_FLOAT_EQ(moves[0]->position()->z(), -20.0f);
    EXPECT_FALSE(moves[1]->server_teleport());
    EXPECT_FLOAT_EQ(moves[1]->velocity()->x(), 50.0f);
    EXPECT_TRUE(moves[2]->server_teleport());

    // Every input kind of tick 3, and the aim of tick 5 continuing the motion of tick 3.
    std::vector<std::string> kinds;
    std::vector<bool> repeats;
    for (const fb::Event* e : m.events) {
        if (e->player() != 1 || e->body_type() != fb::EventBody::Order) continue;
        kinds.push_back(std::to_string(e->tick()) + ":" + e->body_as_Order()->kind()->str());
        repeats.push_back(e->body_as_Order()->repeat());
        if (e->tick() == 3) {
            // Aimed 64 units (2 tiles) above the tee at 352, 640: (11, 0, -18) m.
            EXPECT_FLOAT_EQ(e->body_as_Order()->target()->x(), 11.0f);
            EXPECT_FLOAT_EQ(e->body_as_Order()->target()->z(), -18.0f);
            // Schema 1.2: the input's target as it is, relative to the tee, in units.
            ASSERT_TRUE(aim_of(*e));
            EXPECT_EQ(aim_of(*e)->x(), 0.0f);
            EXPECT_EQ(aim_of(*e)->y(), -64.0f);
            EXPECT_TRUE(aim_of(*e)->relative());
        }
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"3:direction", "3:jump", "3:hook", "3:fire",
                                               "3:weapon", "3:aim", "5:aim"}));
    EXPECT_EQ(repeats, (std::vector<bool>{false, false, false, false, false, false, true}));

    // alice2 logged in: an extension event with the level and the auth name.
    bool auth = false;
    for (const fb::Event* e : m.events)
        if (e->body_type() == fb::EventBody::Extension) {
            EXPECT_EQ(e->body_as_Extension()->type_name()->str(), "ddnet.auth");
            const auto* data = e->body_as_Extension()->data();
            EXPECT_EQ(std::string(data->begin(), data->end()), R"({"auth_name":"mod","level":1})");
            EXPECT_EQ(e->player(), 4u);
            auth = true;
        }
    EXPECT_TRUE(auth);
    EXPECT_EQ(report.counts.players, 4u);
    EXPECT_EQ(report.counts.orders, 7u);
}

// Found by fuzz/fuzz_ddnet_teehistorian.cpp: a start time past ingest's range made a
// MatchStart the host refuses. A start that cannot be a time is not known (0).
TEST(TeehistorianImport, AStartTimeOutsideTheRangeOfEventsIsNotKnown) {
    for (const char* start :
         {"9999-12-31T23:59:59+0000", "1969-12-31T23:59:59+0000", "yesterday"}) {
        ThWriter w(
            std::string(R"({"game_uuid":"a1eb7182-796e-3b3e-941d-38ca71b2a4a8","start_time":")") +
            start + R"("})");
        w.begin_tick(1);
        w.join(0);
        w.message(0, start_info("alice"));
        w.finish();
        TempDir dir;
        const ThImportReport report =
            import_teehistorian(write_file(dir, w.bytes()), dir / "out.arbev", ThImportOptions{});
        ASSERT_TRUE(report.written) << start;
        const MatchFile m = tools::test::read_match(dir / "out.arbev");
        EXPECT_EQ(m.events.front()->body_as_MatchStart()->started_unix_us(), 0) << start;
    }
}

TEST(TeehistorianImport, TheBuildersSavedStateComesBackTheSame) {
    TempDir dir;
    ThMatchBuilder builder("th");
    TeehistorianReader reader;
    const auto bytes = a_game();
    std::vector<std::vector<uint8_t>> batches;
    ThRecord record;
    bool started = false;
    while (reader.read(std::span(bytes).subspan(reader.offset()), record) == ThStatus::record) {
        if (!started) {
            builder.start(reader.header(), batches);
            started = true;
        }
        builder.take(record, batches);
        if (record.tick == 6) break;
    }
    const ThBuilderState& state = builder.state();
    EXPECT_EQ(th_builder_from_json(th_builder_to_json(state)), state);
    EXPECT_THROW(th_builder_from_json(nlohmann::json::parse(R"({"open":true})")),
                 std::runtime_error);
    auto bad_seat = th_builder_to_json(state);
    bad_seat["seats"][0]["cid"] = 64;
    EXPECT_THROW(th_builder_from_json(bad_seat), std::runtime_error);
    auto bad_input = th_state_to_json(reader.state());
    bad_input["seats"][0]["input"] = nlohmann::json::array({1, 2});
    EXPECT_THROW(th_state_from_json(bad_input), std::runtime_error);
}

TEST(TeehistorianImport, TheCommandSaysWhatItReadAndRefusesWhatItCannot) {
    TempDir dir;
    const auto good = write_file(dir, a_game());
    auto result =
        tools::test::run_arbiter({"import", good.string(), (dir / "a.arbev").string()}, dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("imported teehistorian (ticks 0 to 8, "), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("4 player(s)"), std::string::npos) << result.err;

    // Damaged in the middle: written, the damage named by offset, exit 3.
    auto damaged_bytes = a_game();
    TeehistorianReader reader;
    ThRecord record;
    while (reader.read(std::span(damaged_bytes).subspan(reader.offset()), record) ==
               ThStatus::record &&
           record.kind != ThKind::input_diff) {
    }
    damaged_bytes[record.offset] = 0x7f;  // no such record kind
    const auto damaged = write_file(dir, damaged_bytes, "damaged.teehistorian");
    result = tools::test::run_arbiter({"import", damaged.string(), (dir / "d.arbev").string()},
                                      dir.path());
    EXPECT_EQ(result.exit_status, 3) << result.err;
    EXPECT_NE(result.err.find("offset"), std::string::npos) << result.err;
    EXPECT_TRUE(std::filesystem::exists(dir / "d.arbev"));

    // Cut off: written up to the cut, the cut named, exit 3.
    auto cut_bytes = a_game();
    cut_bytes.resize(cut_bytes.size() - 3);
    const auto cut = write_file(dir, cut_bytes, "cut.teehistorian");
    result =
        tools::test::run_arbiter({"import", cut.string(), (dir / "c.arbev").string()}, dir.path());
    EXPECT_EQ(result.exit_status, 3) << result.err;
    EXPECT_NE(result.err.find("truncated tail"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("not finished by the server"), std::string::npos) << result.err;

    // Named as one, but not a teehistorian: nothing written, exit 2.
    const auto foreign = write_file(dir, std::vector<uint8_t>(100, 'x'), "foreign.teehistorian");
    result = tools::test::run_arbiter({"import", foreign.string(), (dir / "f.arbev").string()},
                                      dir.path());
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("not a teehistorian"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "f.arbev"));

    // Options of traces and demos: refused, exit 1.
    result = tools::test::run_arbiter(
        {"import", good.string(), (dir / "b.arbev").string(), "--batch-events", "10"}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("a batch a tick"), std::string::npos) << result.err;
    result = tools::test::run_arbiter(
        {"import", good.string(), (dir / "b.arbev").string(), "--tick-rate", "20"}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("not for a teehistorian"), std::string::npos) << result.err;
}

// 100 s of two players: one flips direction every 10 ticks (a macro), one at human,
// irregular intervals; through the DDNet profile the macro reaches Monitor, the other not.
TEST(TeehistorianImport, AMacroInATeehistorianReachesKaladinWhileIrregularInputStaysClear) {
    TempDir dir;
    ThWriter w;
    w.begin_tick(1);
    w.join(0);
    w.message(0, start_info("macro"));
    w.join(1);
    w.message(1, start_info("human"));
    std::mt19937 random(11);
    std::lognormal_distribution<double> pause(std::log(14.0), 0.6);
    int32_t human_next = 20, human_direction = 0;
    int32_t macro_direction = 1;
    for (int32_t tick = 2; tick <= 5000; ++tick) {
        w.begin_tick(tick);
        w.player(0, 1000 + (tick % 200), 500);
        w.player(1, 3000 + (tick % 300), 500);
        if (tick % 10 == 0) macro_direction = -macro_direction;
        w.input(0, 1, input(macro_direction, 64, 0));
        if (tick >= human_next) {
            human_direction = (human_direction + 2) % 3 - 1;
            human_next = tick + std::max(3, static_cast<int32_t>(pause(random)));
        }
        w.input(1, 2, input(human_direction, 64, 0));
    }
    w.finish();
    const auto in = write_file(dir, w.bytes());
    auto result =
        tools::test::run_arbiter({"import", in.string(), (dir / "m.arbev").string()}, dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    result = tools::test::run_arbiter(
        {"replay", DDNET_CONFIG, (dir / "m.arbev").string(), "--json"}, dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    std::map<std::string, std::string> actions;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
        const auto a = nlohmann::json::parse(line);
        actions[a.at("account_id").get<std::string>()] = a.at("action").get<std::string>();
    }
    EXPECT_EQ(actions["macro"], "Monitor");
    EXPECT_EQ(actions["human"], "Clear");
}

}  // namespace
}  // namespace arbiter::ddnet

namespace arbiter::ddnet {
namespace {

TEST(DdnetBridgeCommand, RefusesWhatItCannotRunWithTheReason) {
    TempDir dir;
    std::filesystem::create_directories(dir / "teehistorian");
    const std::string folder = (dir / "teehistorian").string();
    auto result = tools::test::run_arbiter({"ddnet-bridge", folder}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("expected a teehistorian folder or file"), std::string::npos);
    result = tools::test::run_arbiter({"ddnet-bridge", folder, "x.sock", "--fast"}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("unknown option --fast"), std::string::npos);
    result = tools::test::run_arbiter({"ddnet-bridge", folder, "x.sock", "--relay"}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("--relay needs a value"), std::string::npos);
    result = tools::test::run_arbiter(
        {"ddnet-bridge", folder, "x.sock", "--relay", std::string(65, 'r')}, dir.path());
    EXPECT_EQ(result.exit_status, 1) << result.err;
    EXPECT_NE(result.err.find("at most 64 bytes"), std::string::npos);
    result =
        tools::test::run_arbiter({"ddnet-bridge", (dir / "none").string(), "x.sock"}, dir.path());
    EXPECT_EQ(result.exit_status, 2) << result.err;
    EXPECT_NE(result.err.find("does not exist"), std::string::npos);
    result = tools::test::run_arbiter(
        {"ddnet-bridge", folder, "127.0.0.1:1", "--token-file", (dir / "none").string()},
        dir.path());
    EXPECT_EQ(result.exit_status, 2) << result.err;
    // No server there: with --once, that is the answer (exit 2), not a wait.
    result = tools::test::run_arbiter(
        {"ddnet-bridge", folder, (dir / "nobody.sock").string(), "--once"}, dir.path());
    EXPECT_EQ(result.exit_status, 2) << result.err;
    result = tools::test::run_arbiter({"ddnet-bridge", "--help"}, dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.out.find("ddnet-bridge TEEHISTORIAN_DIR|FILE"), std::string::npos)
        << result.out;
}

}  // namespace
}  // namespace arbiter::ddnet
