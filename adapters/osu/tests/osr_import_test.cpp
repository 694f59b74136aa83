// `arbiter import X.osr|FOLDER`: replays written as osu! writes them become one match of a
// player per replay, every batch through ingest; bad replays stop or are skipped; labels
// become a truth file; then the real replays of ../shared/data/osu through `arbiter
// evaluate` (skipped, saying so, where ../shared is not there).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arbiter/tools/truth.hpp"
#include "osr_builder.hpp"
#include "osr_import.hpp"
#include "support.hpp"

namespace arbiter::osu {
namespace {

using test::build_osr;
using test::frames_text;
using test::OsrSpec;
using tools::test::read_match;
using tools::test::run_arbiter;
using tools::test::TempDir;
using tools::test::write_text;

void write_replay(const std::filesystem::path& path, const OsrSpec& spec) {
    std::filesystem::create_directories(path.parent_path());
    const auto bytes = build_osr(spec);
    write_text(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

struct Flat {
    int64_t t_us;
    uint64_t tick;
    uint32_t player;
    fb::EventBody kind;
    const fb::Event* event;
};

std::vector<Flat> flat(const tools::test::MatchFile& m) {
    std::vector<Flat> out;
    for (const fb::Event* e : m.events)
        out.push_back({e->relay_time_us(), e->tick(), e->player(), e->body_type(), e});
    return out;
}

TEST(OsrImport, AReplayIsOneMatchOfOnePlayerInTheFramesOwnTime) {
    TempDir dir;
    OsrSpec spec;
    spec.player_name = "MoGiMoGi";
    spec.mods = kModHidden | kModDoubleTime;
    // Placeholders; a skip's first frame going back (-8335: left out, as osu! does); then
    // frames with presses: left (5 = M1+K1), held, released, right (10), both (15), and a
    // frame of a negative delta in play (left out), after which a 0 delta goes back in
    // time and is held at the time before.
    spec.frames =
        "0|256|-500|0,8350|256|-500|0,-8335|300|200|0,16|100|100|5,17|110|100|5,"
        "16|120|100|0,17|130|100|10,16|140|100|15,-2|150|100|15,0|160|100|0,"
        "20|170|100|1,-12345|0|0|99,";
    write_replay(dir / "r.osr", spec);
    OsrImportOptions options;
    options.relay_id = "r";
    const OsrImportReport report =
        import_replays(list_replays({dir / "r.osr"}), dir / "r.arbev", options);
    ASSERT_TRUE(report.written);
    ASSERT_EQ(report.replays.size(), 1u);
    const OsrReplayReport& r = report.replays[0];
    EXPECT_FALSE(r.problem.has_value());
    EXPECT_EQ(r.account, "MoGiMoGi");
    EXPECT_EQ(r.frames, 11u);
    EXPECT_EQ(r.left_out, 4u);  // two placeholders, two negative deltas
    EXPECT_EQ(r.positions, 7u);
    EXPECT_EQ(r.held_back, 1u);
    EXPECT_EQ(r.first_time_ms, 31);
    EXPECT_EQ(r.presses, 4u);              // left, right, left (15 after 10), left (1 after 0)
    EXPECT_TRUE(r.snap_times_ms.empty());  // the cursor goes straight along y = 100

    const auto m = read_match(dir / "r.arbev");
    const auto events = flat(m);
    ASSERT_EQ(events.front().kind, fb::EventBody::MatchStart);
    const auto* start = events.front().event->body_as_MatchStart();
    EXPECT_EQ(start->game()->str(), "osu");
    EXPECT_EQ(start->map()->str(), std::string(32, 'a'));
    EXPECT_EQ(start->tick_rate_hz(), 1000.0f);
    ASSERT_EQ(events[1].kind, fb::EventBody::PlayerJoin);
    const auto* join = events[1].event->body_as_PlayerJoin();
    EXPECT_EQ(join->account_id()->str(), "MoGiMoGi");
    EXPECT_EQ(join->handshake()->str(), "osr HDDT");
    EXPECT_EQ(join->client_version()->str(), "20190906");

    // The cursor frames' relay times (ms from the first), and the presses with them.
    std::vector<int64_t> position_ms;
    std::vector<float> aim_x;
    std::vector<std::pair<int64_t, float>> press_ms_x;
    for (const Flat& e : events) {
        EXPECT_EQ(e.tick * 1000, static_cast<uint64_t>(e.t_us));
        if (e.kind == fb::EventBody::PositionUpdate) {
            position_ms.push_back(e.t_us / 1000);
            const auto* p = e.event->body_as_PositionUpdate();
            EXPECT_EQ(p->position()->x(), 0.0f);
            EXPECT_FALSE(p->server_teleport());
            EXPECT_EQ(p->look(), nullptr);
            ASSERT_NE(p->aim(), nullptr);  // the cursor, as schema 1.2's aim
            EXPECT_EQ(p->aim()->y(), 100.0f);
            EXPECT_FALSE(p->aim()->relative());
            aim_x.push_back(p->aim()->x());
        }
        if (e.kind == fb::EventBody::Order) {
            const auto* o = e.event->body_as_Order();
            EXPECT_EQ(o->kind()->str(), "key_press");
            EXPECT_TRUE(o->has_target());
            EXPECT_EQ(o->target()->y(), 100.0f);
            ASSERT_NE(o->aim(), nullptr);
            EXPECT_EQ(o->aim()->x(), o->target()->x());
            EXPECT_EQ(o->aim()->y(), 100.0f);
            EXPECT_FALSE(o->aim()->relative());
            press_ms_x.push_back({e.t_us / 1000, o->target()->x()});
        }
    }
    EXPECT_EQ(position_ms, (std::vector<int64_t>{0, 17, 33, 50, 66, 66, 84}));
    EXPECT_EQ(aim_x, (std::vector<float>{100, 110, 120, 130, 140, 160, 170}));
    const std::vector<std::pair<int64_t, float>> presses = {
        {0, 100.f}, {50, 130.f}, {66, 140.f}, {84, 170.f}};
    // 15 after 10 presses left only; a 0 after 15 releases both; 1 presses left.
    EXPECT_EQ(press_ms_x, presses);
    EXPECT_EQ(events[events.size() - 2].kind, fb::EventBody::PlayerLeave);
    EXPECT_EQ(events.back().kind, fb::EventBody::MatchEnd);
    EXPECT_EQ(events.back().t_us, 84000);
}

TEST(OsrImport, SeveralReplaysAreOneMatchInTimeOrderWithAnAccountPerFile) {
    TempDir dir;
    OsrSpec a, b;
    a.player_name = "same";
    b.player_name = "same";  // the same person twice: accounts must still differ
    a.frames = frames_text({"16|1|1|0", "16|2|2|5", "16|3|3|0"});
    b.frames = frames_text({"5|9|9|10", "30|8|8|0"});
    write_replay(dir / "in" / "x" / "a.osr", a);
    write_replay(dir / "in" / "b.osr", b);
    write_text(dir / "in" / "notes.txt", "not a replay");
    const auto inputs = list_replays({dir / "in"});
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].name, "b.osr");
    EXPECT_EQ(inputs[1].name, "x/a.osr");
    const OsrImportReport report = import_replays(inputs, dir / "m.arbev", {});
    ASSERT_TRUE(report.written);
    EXPECT_EQ(report.players, 2u);
    EXPECT_EQ(report.replays[0].account, "b.osr");
    EXPECT_EQ(report.replays[1].account, "x/a.osr");
    const auto events = flat(read_match(dir / "m.arbev"));  // every batch through ingest
    int64_t last = 0;
    std::map<uint32_t, int> positions;
    for (const Flat& e : events) {
        EXPECT_GE(e.t_us, last);
        last = e.t_us;
        if (e.kind == fb::EventBody::PositionUpdate) ++positions[e.player];
    }
    EXPECT_EQ(positions[1], 2);
    EXPECT_EQ(positions[2], 3);
    EXPECT_EQ(events.back().t_us, 32000);  // the longer replay's last frame
}

TEST(OsrImport, ABadReplayStopsTheImportOrIsSkippedNamingItsOffset) {
    TempDir dir;
    OsrSpec good;
    good.frames = frames_text({"16|1|1|0", "16|2|2|5"});
    OsrSpec bad = good;
    bad.player_name = std::string("x\xff");
    write_replay(dir / "in" / "a.osr", good);
    write_replay(dir / "in" / "b.osr", bad);
    OsrImportReport stop = import_replays(list_replays({dir / "in"}), dir / "s.arbev", {});
    EXPECT_FALSE(stop.written);
    EXPECT_FALSE(std::filesystem::exists(dir / "s.arbev"));
    ASSERT_TRUE(stop.replays[1].problem.has_value());
    EXPECT_EQ(*stop.replays[1].problem,
              "offset 42: the player name is not valid UTF-8 (byte 1 of 'x\\xff')");

    OsrImportOptions skip;
    skip.skip_bad_replays = true;
    OsrImportReport skipped = import_replays(list_replays({dir / "in"}), dir / "k.arbev", skip);
    EXPECT_TRUE(skipped.written);
    EXPECT_EQ(skipped.refused, 1u);
    EXPECT_EQ(skipped.players, 1u);

    OsrSpec mania = good;
    mania.mode = 3;
    write_replay(dir / "mania.osr", mania);
    OsrImportReport other = import_replays(list_replays({dir / "mania.osr"}), dir / "o.arbev", {});
    EXPECT_FALSE(other.written);
    EXPECT_EQ(*other.replays[0].problem,
              "offset 0: a osu!mania replay: only osu! standard's cursor is an aim");
    EXPECT_THROW(list_replays({dir / "nothing-here"}), std::runtime_error);
    EXPECT_THROW(list_replays({dir / "mania.osr", dir / "mania.osr"}), std::runtime_error);
    std::filesystem::create_directories(dir / "other");
    std::filesystem::copy_file(dir / "in" / "a.osr", dir / "other" / "a.osr");
    EXPECT_THROW(list_replays({dir / "in", dir / "other"}), std::runtime_error);
}

TEST(OsrImport, LabelsBecomeATruthFile) {
    TempDir dir;
    OsrSpec spec;
    spec.frames = frames_text({"16|1|1|0", "16|2|2|5"});
    write_replay(dir / "in" / "legit" / "a.osr", spec);
    write_replay(dir / "in" / "relax" / "b.osr", spec);
    write_text(dir / "labels.csv",
               "file,label,kind\r\nlegit/a.osr,legit,honest\r\n"
               "relax/b.osr,relax,cheat\r\n");
    OsrImportOptions options;
    options.labels_csv = dir / "labels.csv";
    options.labels_out = dir / "m.truth.json";
    ASSERT_TRUE(import_replays(list_replays({dir / "in"}), dir / "m.arbev", options).written);
    const tools::Truth truth = tools::read_truth(dir / "m.truth.json");
    ASSERT_EQ(truth.matches.size(), 1u);
    ASSERT_EQ(truth.matches[0].players.size(), 2u);
    EXPECT_EQ(truth.matches[0].players[0].account, "legit/a.osr");
    EXPECT_EQ(truth.matches[0].players[0].profile, "legit");
    EXPECT_FALSE(truth.matches[0].players[0].cheater);
    EXPECT_EQ(truth.matches[0].players[1].profile, "relax");
    EXPECT_TRUE(truth.matches[0].players[1].cheater);

    write_text(dir / "bad.csv", "file,label,kind\nlegit/a.osr,legit,human\n");
    EXPECT_THROW(
        {
            try {
                read_labels_csv(dir / "bad.csv");
            } catch (const std::runtime_error& e) {
                EXPECT_EQ(
                    std::string(e.what()),
                    (dir / "bad.csv").string() + ":2: kind 'human' is neither honest nor cheat");
                throw;
            }
        },
        std::runtime_error);
    write_text(dir / "partial.csv", "file,label,kind\nlegit/a.osr,legit,honest\n");
    options.labels_csv = dir / "partial.csv";
    EXPECT_THROW(import_replays(list_replays({dir / "in"}), dir / "p.arbev", options),
                 std::runtime_error);
    EXPECT_FALSE(std::filesystem::exists(dir / "p.arbev"));
}

TEST(OsrImportCommand, ImportsAFolderWithItsLabelsAndSaysWhatItDid) {
    TempDir dir;
    OsrSpec spec;
    spec.frames = frames_text({"16|1|1|0", "16|2|2|5"});
    write_replay(dir / "in" / "a.osr", spec);
    write_replay(dir / "in" / "b.osr", spec);
    write_text(dir / "in" / "labels.csv",
               "file,label,kind\na.osr,legit,honest\nb.osr,auto,cheat\n");
    auto result = run_arbiter(
        {"import", (dir / "in").string(), "m.arbev", "--labels", "m.truth.json", "--quiet"},
        dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("imported 2 of 2 replays into 1 match, 2 player(s)"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(tools::read_truth(dir / "m.truth.json").matches[0].players[1].profile, "auto");

    result = run_arbiter({"import", (dir / "in" / "a.osr").string(), "one.arbev", "--quiet"},
                         dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("imported replay of 'player' (osu! 20190906, mods NM"),
              std::string::npos)
        << result.err;
    // One replay is a relay of its own, named after its file; several are relay "osu".
    EXPECT_EQ(tools::test::read_match(dir / "one.arbev").roots.front()->relay_id()->str(), "a");
    EXPECT_EQ(tools::test::read_match(dir / "m.arbev").roots.front()->relay_id()->str(), "osu");

    result = run_arbiter(
        {"import", (dir / "in" / "a.osr").string(), "x.arbev", "--tick-rate", "20"}, dir.path());
    EXPECT_EQ(result.exit_status, 1);
    EXPECT_NE(result.err.find("unknown option --tick-rate (for replays)"), std::string::npos);

    write_text(dir / "cut.osr", std::string("\x00\x01", 2));
    result = run_arbiter({"import", (dir / "cut.osr").string(), "c.arbev"}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_NE(result.err.find("cut.osr: offset 1: the file ends inside the version"),
              std::string::npos)
        << result.err;
}

// The data set: every replay imported into one match; through the osu! profile no legit
// replay reaches FlagForReview, and the per-file table names every replay.
TEST(OsrRealReplays, TheDataSetThroughTheOsuProfile) {
    const std::filesystem::path data = OSU_DATA_DIR;
    if (!std::filesystem::exists(data / "labels.csv"))
        GTEST_SKIP() << OSU_DATA_DIR << " is absent: cannot evaluate the real replays";
    TempDir dir;
    auto result =
        run_arbiter({"import", data.string(), "osu.arbev", "--labels", "osu.truth.json", "--quiet"},
                    dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("imported 104 of 104 replays"), std::string::npos) << result.err;
    result = run_arbiter({"import", (data / "aim_corrected" / "corrected_replay1.osr").string(),
                          "c1.arbev", "--quiet"},
                         dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_NE(result.err.find("15 snap(s) by circleguard's rule, without the beatmap (at 5103, "
                              "5117, 5653, 5654, 11928,"),
              std::string::npos)
        << result.err;
    result = run_arbiter({"evaluate", OSU_CONFIG, "osu.arbev", "--players", "--json", "--quiet"},
                         dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    ASSERT_EQ(json["players"].size(), 104u);
    int legit = 0;
    for (const auto& p : json["players"]) {
        EXPECT_TRUE(p["assessed"].get<bool>()) << p;
        if (p["profile"] == "legit") {
            ++legit;
            EXPECT_FALSE(p["cheater"].get<bool>());
            EXPECT_NE(p["action"], "FlagForReview") << p;
            EXPECT_NE(p["action"], "ShadowRestrict") << p;
        }
    }
    EXPECT_EQ(legit, 71);
    EXPECT_EQ(json["all_honest"]["false_positive_rate_at_flag"], 0.0);
}

}  // namespace
}  // namespace arbiter::osu
