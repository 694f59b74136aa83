// The three commands as an operator runs them: arguments, messages, exit statuses and
// files left (or not) behind.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace arbiter::tools::test {
namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(Cli, HelpListsTheThreeCommands) {
    TempDir dir;
    auto r = run_arbiter({"help"}, dir.path());
    EXPECT_EQ(r.exit_status, 0);
    for (const char* command : {"arbiter simulate", "arbiter import", "arbiter evaluate"})
        EXPECT_TRUE(contains(r.out, command)) << command;
}

TEST(Cli, SimulateWritesTheMatchAndItsTruth) {
    TempDir dir;
    auto r = run_arbiter({"simulate", "m.arbev", "--seed", "3", "--duration-s", "10", "--tick-rate",
                          "30", "--players", "honest=3,teleport=1", "--human-traces", "builtin"},
                         dir.path());
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "4 players")) << r.err;
    EXPECT_TRUE(contains(r.err, "built-in table")) << r.err;
    EXPECT_TRUE(contains(r.err, "accounts sim-3-1-000001@sim-relay to sim-3-1-000004@sim-relay"))
        << r.err;
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"m.arbev", "m.truth.json"}));
    MatchFile match = read_match(dir / "m.arbev");
    EXPECT_FLOAT_EQ(match.events.front()->body_as_MatchStart()->tick_rate_hz(), 30.0f);
}

TEST(Cli, SimulateListsItsProfiles) {
    TempDir dir;
    auto r = run_arbiter({"simulate", "--list-profiles"}, dir.path());
    EXPECT_EQ(r.exit_status, 0);
    for (const char* profile : {"honest", "speed_hack", "humanised_bot", "reconnect_spam"})
        EXPECT_TRUE(contains(r.out, profile)) << profile;
}

TEST(Cli, SimulateRefusesBadArgumentsAndWritesNothing) {
    struct Case {
        std::vector<std::string> args;
        int status;
        const char* expected;
    };
    const Case cases[] = {
        {{"simulate", "m.arbev"}, 1, "--players is required"},
        {{"simulate", "m.arbev", "--players", "wallhack=1"}, 1, "unknown profile 'wallhack'"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--seed", "-4"}, 1, "--seed '-4'"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--duration-s", "0"}, 1, "--duration-s"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--tick-rate", "fast"},
         1,
         "--tick-rate 'fast'"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--colour", "red"},
         1,
         "unknown option --colour"},
        {{"simulate", "m.arbev", "--players"}, 1, "--players needs a value"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--accounts", ""},
         1,
         "--accounts needs a name"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--accounts", "bad\xff"},
         1,
         "--accounts is not UTF-8"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--relay", "bad\xff"},
         1,
         "--relay is not UTF-8"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--human-traces", "absent.csv"},
         2,
         "absent.csv"},
        {{"simulate", "no/such/dir/m.arbev", "--players", "honest=1"}, 2, "nothing written"},
    };
    for (const Case& c : cases) {
        TempDir dir;
        auto r = run_arbiter(c.args, dir.path());
        EXPECT_EQ(r.exit_status, c.status) << c.expected << ": " << r.err;
        EXPECT_TRUE(contains(r.err, c.expected)) << r.err;
        EXPECT_TRUE(dir.files().empty()) << c.expected;
    }
}

TEST(Cli, ImportReportsABadRowByLineAndStopsOrSkips) {
    TempDir dir;
    write_text(dir / "in.csv",
               "source,game,player,t_seconds,action_kind\ns,g,p,1,command\ns,g,p,-3,command\ns,g,q,"
               "2,command\n");
    auto stop = run_arbiter({"import", "in.csv", "out.arbev"}, dir.path());
    EXPECT_EQ(stop.exit_status, 2);
    EXPECT_TRUE(contains(stop.err, "in.csv:3: t_seconds is negative")) << stop.err;
    EXPECT_TRUE(contains(stop.err, "nothing written")) << stop.err;
    EXPECT_EQ(dir.files(), std::vector<std::string>{"in.csv"});

    auto skip = run_arbiter(
        {"import", "in.csv", "out.arbev", "--on-error", "skip", "--labels", "out.truth.json"},
        dir.path());
    EXPECT_EQ(skip.exit_status, 3) << skip.err;
    EXPECT_TRUE(contains(skip.err, "in.csv:3: t_seconds is negative")) << skip.err;
    EXPECT_TRUE(contains(skip.err, "imported 2 of 3 rows")) << skip.err;
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"in.csv", "out.arbev", "out.truth.json"}));
}

TEST(Cli, ImportOfGoodJsonLinesSucceeds) {
    TempDir dir;
    write_text(dir / "in.ndjson",
               R"({"source":"s","game":"g","player":"p","t_seconds":1,"action_kind":"key_press"})"
               "\n");
    auto r = run_arbiter({"import", "in.ndjson", "out.arbev"}, dir.path());
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "imported 1 of 1 rows")) << r.err;
}

TEST(Cli, ImportRefusesUnknownFormatsAndOptions) {
    TempDir dir;
    write_text(dir / "in.txt", "source,game,player,t_seconds,action_kind\ns,g,p,1,command\n");
    struct Case {
        std::vector<std::string> args;
        const char* expected;
    };
    const Case cases[] = {
        {{"import", "in.txt", "out.arbev"}, "cannot tell the format of in.txt"},
        {{"import", "in.txt", "out.arbev", "--format", "xml"},
         "--format 'xml' is neither csv nor jsonl"},
        {{"import", "in.txt", "out.arbev", "--format", "csv", "--on-error", "maybe"},
         "--on-error 'maybe'"},
        {{"import", "in.txt", "out.arbev", "--format", "csv", "--tick-rate", "0"}, "--tick-rate"},
        {{"import", "in.txt"}, "an input file and an output file"},
    };
    for (const Case& c : cases) {
        auto r = run_arbiter(c.args, dir.path());
        EXPECT_EQ(r.exit_status, 1) << c.expected;
        EXPECT_TRUE(contains(r.err, c.expected)) << r.err;
        EXPECT_EQ(dir.files(), std::vector<std::string>{"in.txt"});
    }
    auto ok = run_arbiter({"import", "in.txt", "out.arbev", "--format", "csv"}, dir.path());
    EXPECT_EQ(ok.exit_status, 0) << ok.err;
}

TEST(Cli, EvaluatePrintsATableOrJson) {
    TempDir dir;
    write_text(dir / "server_config.toml",
               std::string("[host]\nlog_level = \"warn\"\n[plugins.reference]\nlibrary = \"") +
                   REFERENCE_PLUGIN + "\"\n");
    auto sim = run_arbiter({"simulate", "m.arbev", "--seed", "9", "--duration-s", "30", "--players",
                            "honest=4,teleport=2"},
                           dir.path());
    ASSERT_EQ(sim.exit_status, 0) << sim.err;

    auto table = run_arbiter({"evaluate", "server_config.toml", "m.arbev"}, dir.path());
    EXPECT_EQ(table.exit_status, 0) << table.err;
    EXPECT_TRUE(contains(table.out, "recall@flag")) << table.out;
    EXPECT_TRUE(contains(table.out, "teleport")) << table.out;

    auto json = run_arbiter(
        {"evaluate", "server_config.toml", "m.arbev", "--truth", "m.truth.json", "--json"},
        dir.path());
    EXPECT_EQ(json.exit_status, 0) << json.err;
    auto report = nlohmann::json::parse(json.out);
    EXPECT_EQ(report["profiles"][0]["profile"], "honest");
    EXPECT_EQ(report["profiles"][0]["false_positive_rate_at_flag"], 0.0);
    EXPECT_EQ(report["profiles"][1]["profile"], "teleport");
    EXPECT_EQ(report["profiles"][1]["recall_at_flag"], 1.0);

    auto no_truth = run_arbiter(
        {"evaluate", "server_config.toml", "m.arbev", "--truth", "absent.json"}, dir.path());
    EXPECT_EQ(no_truth.exit_status, 2);
    EXPECT_TRUE(contains(no_truth.err, "absent.json: cannot read the truth file")) << no_truth.err;

    auto usage = run_arbiter({"evaluate", "server_config.toml"}, dir.path());
    EXPECT_EQ(usage.exit_status, 1);
}

TEST(Cli, SimulatedFlyersAreCaughtInTheAirAndUnderTheTerrain) {
    // The simulator's fly profile reports on_ground and ground_height as a server would:
    // honest players jump for 0.92 s, flyers stay up for 5 to 15 s, every third flight under
    // the terrain. Replayed through the reference plugin, every flyer reaches FlagForReview
    // on movement.airborne, the ones that went more than 1 m under on movement.below_terrain
    // too; honest players (lag spikes, packet loss and jumps included) get no movement signal.
    TempDir dir;
    write_text(dir / "server_config.toml",
               std::string("[host]\nlog_level = \"warn\"\n[aggregation]\nmonitor_threshold = "
                           "0.3\nreview_threshold = 0.7\n[plugins.reference]\nlibrary = \"") +
                   REFERENCE_PLUGIN + "\"\n");
    auto sim = run_arbiter({"simulate", "m.arbev", "--seed", "31", "--duration-s", "120",
                            "--players", "honest=8,fly=3"},
                           dir.path());
    ASSERT_EQ(sim.exit_status, 0) << sim.err;
    auto replay = run_arbiter({"replay", "server_config.toml", "m.arbev", "--json"}, dir.path());
    ASSERT_EQ(replay.exit_status, 0) << replay.err;

    const auto truth = nlohmann::json::parse(read_text(dir / "m.truth.json"));
    std::map<uint32_t, std::string> profile;
    for (const auto& p : truth["matches"][0]["players"])
        profile[p["player"].get<uint32_t>()] = p["profile"].get<std::string>();
    // How far under the terrain each player went, by the match itself.
    std::map<uint32_t, double> deepest;
    for (const fb::Event* e : read_match(dir / "m.arbev").events) {
        const auto* u = e->body_as_PositionUpdate();
        if (!u || !u->position() || !u->ground_height().has_value()) continue;
        double& d = deepest[e->player()];
        d = std::max(d, static_cast<double>(*u->ground_height() - u->position()->z()));
    }

    std::istringstream lines(replay.out);
    std::string line;
    int flyers = 0, under = 0, honest = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        const auto a = nlohmann::json::parse(line);
        const auto id = a["player"].get<uint32_t>();
        std::map<std::string, bool> codes;
        for (const auto& s : a["signals"])
            codes[s["code"].get<std::string>()] = true;
        if (profile[id] == "honest") {
            ++honest;
            EXPECT_EQ(a["action"], "Clear") << a.dump(2);
            for (const auto& [code, _] : codes)
                EXPECT_NE(code.rfind("movement.", 0), 0u) << a.dump(2);
            EXPECT_LE(deepest[id], 0.01) << id;
        } else {
            ASSERT_EQ(profile[id], "fly");
            ++flyers;
            EXPECT_EQ(a["action"], "FlagForReview") << a.dump(2);
            EXPECT_TRUE(codes.count("movement.airborne")) << a.dump(2);
            // Under by more than the 1 m tolerance (with a margin for the float positions).
            if (deepest[id] > 1.01) {
                ++under;
                EXPECT_TRUE(codes.count("movement.below_terrain")) << a.dump(2);
            } else if (deepest[id] < 0.99) {
                EXPECT_FALSE(codes.count("movement.below_terrain")) << a.dump(2);
            }
        }
    }
    EXPECT_EQ(honest, 8);
    EXPECT_EQ(flyers, 3);
    EXPECT_GE(under, 1) << "no flyer went under the terrain: the test shows nothing of it";
}

}  // namespace
}  // namespace arbiter::tools::test
