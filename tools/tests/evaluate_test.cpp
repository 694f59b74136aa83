// `evaluate`: a small simulated match through the bundled reference plugin. The speed
// hack and teleport profiles reach FlagForReview, honest players stay Clear; the truth
// files are checked; the JSON output says the same as the table.
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/config.hpp"
#include "arbiter/tools/evaluate.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/simulate.hpp"
#include "support.hpp"

namespace arbiter::tools::test {
namespace {

std::unique_ptr<host::Host> reference_host(const TempDir& dir) {
    write_text(dir / "server_config.toml",
               std::string("[host]\nlog_level = \"warn\"\n\n[plugins.reference]\nlibrary = \"") +
                   REFERENCE_PLUGIN + "\"\n");
    return std::make_unique<host::Host>(host::load_config(dir / "server_config.toml"));
}

std::filesystem::path simulated(const TempDir& dir, const char* name, uint64_t match_id = 1) {
    SimulationOptions o;
    o.out = dir / name;
    o.seed = 20261121;
    o.duration_s = 40;
    o.match_id = match_id;
    o.players = parse_player_mix("honest=6,speed_hack=2,teleport=2");
    simulate(o, test_rhythm());
    return o.out;
}

const ProfileResult& row(const EvaluationReport& report, const std::string& profile) {
    for (const auto& r : report.profiles)
        if (r.profile == profile) return r;
    throw std::runtime_error("no row for " + profile);
}

TEST(Evaluate, ReferencePluginFlagsSpeedHackAndTeleportAndClearsHonestPlayers) {
    TempDir dir;
    auto match = simulated(dir, "m.arbev");
    auto host = reference_host(dir);
    ASSERT_TRUE(host->plugin_errors().empty());
    EvaluationReport report = evaluate(*host, {match}, load_truths({match}, {}));

    ASSERT_EQ(report.profiles.size(), 3u);
    EXPECT_EQ(report.profiles[0].profile, "honest");
    EXPECT_EQ(report.profiles[1].profile, "speed_hack");
    EXPECT_EQ(report.profiles[2].profile, "teleport");

    const ProfileResult& honest = row(report, "honest");
    EXPECT_EQ(honest.players, 6u);
    EXPECT_EQ(honest.actions[static_cast<size_t>(host::Action::clear)], 6u);
    EXPECT_EQ(honest.share_at_least(host::Action::flag_for_review), 0.0);
    EXPECT_EQ(honest.share_at_least(host::Action::monitor), 0.0);
    for (const char* cheat : {"speed_hack", "teleport"}) {
        const ProfileResult& r = row(report, cheat);
        EXPECT_EQ(r.players, 2u) << cheat;
        EXPECT_TRUE(r.cheater);
        EXPECT_EQ(r.share_at_least(host::Action::flag_for_review), 1.0) << cheat;
    }
    EXPECT_EQ(report.all_cheaters.players, 4u);
    EXPECT_EQ(report.all_cheaters.share_at_least(host::Action::flag_for_review), 1.0);
    EXPECT_EQ(report.all_honest.players, 6u);
    EXPECT_EQ(report.files, 1u);
    EXPECT_EQ(report.damaged + report.refused + report.unlabelled + report.missing, 0u);
    EXPECT_TRUE(report.problems.empty());
    EXPECT_GT(report.events, 10'000u);

    std::ostringstream table;
    print_report(table, report);
    EXPECT_NE(table.str().find("recall@flag"), std::string::npos);
    EXPECT_NE(table.str().find("speed_hack"), std::string::npos);
    EXPECT_NE(table.str().find("100.0%"), std::string::npos);

    auto json = nlohmann::json::parse(report_json(report));
    ASSERT_EQ(json["profiles"].size(), 3u);
    EXPECT_EQ(json["profiles"][0]["profile"], "honest");
    EXPECT_EQ(json["profiles"][0]["cheater"], false);
    EXPECT_EQ(json["profiles"][0]["actions"]["Clear"], 6);
    EXPECT_EQ(json["profiles"][0]["false_positive_rate_at_flag"], 0.0);
    EXPECT_EQ(json["profiles"][0]["false_positive_rate_at_monitor"], 0.0);
    EXPECT_FALSE(json["profiles"][0].contains("recall_at_flag"));
    EXPECT_EQ(json["profiles"][1]["recall_at_flag"], 1.0);
    EXPECT_EQ(json["profiles"][1]["actions"]["FlagForReview"].get<int>() +
                  json["profiles"][1]["actions"]["ShadowRestrict"].get<int>(),
              2);
    EXPECT_EQ(json["all_cheaters"]["recall_at_flag"], 1.0);
    EXPECT_EQ(json["input"]["files"], 1);
    EXPECT_EQ(json["input"]["unlabelled_players"], 0);
}

TEST(Evaluate, PlayersTheTruthDoesNotNameAndPlayersNeverSeenAreCounted) {
    TempDir dir;
    auto match = simulated(dir, "m.arbev");
    Truth truth = load_truths({match}, {});
    truth.matches[0].players.erase(truth.matches[0].players.begin());         // one unlabelled
    truth.matches[0].players.push_back({999, "ghost", "honest", false, {}});  // one never seen
    auto host = reference_host(dir);
    EvaluationReport report = evaluate(*host, {match}, truth);
    EXPECT_EQ(report.unlabelled, 1u);
    EXPECT_EQ(report.missing, 1u);
    EXPECT_EQ(report.all_honest.players + report.all_cheaters.players, 10u);
}

TEST(Evaluate, EachLabelledPlayerIsListedWithItsActionAndChecks) {
    TempDir dir;
    auto match = simulated(dir, "m.arbev");
    Truth truth = load_truths({match}, {});
    truth.matches[0].players.push_back({999, "ghost", "honest", false, {}});  // never seen
    auto host = reference_host(dir);
    EvaluationReport report = evaluate(*host, {match}, truth);
    ASSERT_EQ(report.players.size(), 11u);
    size_t flagged_cheaters = 0;
    for (size_t i = 0; i < report.players.size(); ++i) {
        const PlayerResult& p = report.players[i];
        if (i > 0) {
            EXPECT_LT(report.players[i - 1].player, p.player);  // by player id
        }
        if (p.player.player == 999) {
            EXPECT_FALSE(p.seen);
            EXPECT_EQ(p.account, "ghost");
            EXPECT_EQ(p.action, host::Action::clear);
            continue;
        }
        EXPECT_TRUE(p.seen);
        EXPECT_EQ(p.cheater, p.profile != "honest");
        if (p.cheater && p.action >= host::Action::flag_for_review) {
            ++flagged_cheaters;
            ASSERT_FALSE(p.top_checks.empty());
            EXPECT_EQ(p.top_checks[0].rfind("reference:movement.", 0), 0u) << p.top_checks[0];
            EXPECT_GT(p.score, 0.5);
        }
        if (!p.cheater) {
            EXPECT_EQ(p.action, host::Action::clear);
        }
    }
    EXPECT_EQ(flagged_cheaters, 4u);

    std::ostringstream table;
    print_players(table, report);
    const std::string text = table.str();
    EXPECT_EQ(text.rfind("relay ", 0), 0u);
    EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), 12u);
    EXPECT_NE(text.find("ghost"), std::string::npos);
    EXPECT_NE(text.find("(never assessed)"), std::string::npos);
    EXPECT_NE(text.find("FlagForReview"), std::string::npos);

    EXPECT_FALSE(nlohmann::json::parse(report_json(report)).contains("players"));
    auto json = nlohmann::json::parse(report_json(report, true));
    ASSERT_EQ(json["players"].size(), 11u);
    EXPECT_EQ(json["players"][10]["account"], "ghost");
    EXPECT_EQ(json["players"][10]["assessed"], false);
    EXPECT_EQ(json["players"][0]["relay_id"], report.players[0].player.relay_id);
}

TEST(Evaluate, SeveralMatchesWithTheirOwnTruth) {
    TempDir dir;
    auto a = simulated(dir, "a.arbev", 1);
    auto b = simulated(dir, "b.arbev", 2);
    auto host = reference_host(dir);
    EvaluationReport report = evaluate(*host, {a, b}, load_truths({a, b}, {}));
    EXPECT_EQ(report.files, 2u);
    EXPECT_EQ(row(report, "honest").players, 12u);
    EXPECT_EQ(row(report, "speed_hack").players, 4u);
}

TEST(Evaluate, TwoTruthsOfOneMatchAreRefused) {
    TempDir dir;
    auto a = simulated(dir, "a.arbev");
    auto b = simulated(dir, "b.arbev");  // the same relay and match id
    try {
        load_truths({a, b}, {});
        ADD_FAILURE() << "accepted";
    } catch (const TruthError& error) {
        EXPECT_NE(std::string(error.what()).find("match sim-relay/1 is labelled in"),
                  std::string::npos)
            << error.what();
    }
}

TEST(Evaluate, UnreadableAndBadTruthFilesNameTheFileAndTheProblem) {
    TempDir dir;
    auto expect_error = [&](const std::string& text, const char* expected) {
        write_text(dir / "t.json", text);
        try {
            read_truth(dir / "t.json");
            ADD_FAILURE() << expected << ": accepted";
        } catch (const TruthError& error) {
            const std::string what = error.what();
            EXPECT_TRUE(what.starts_with((dir / "t.json").string() + ": ")) << what;
            EXPECT_NE(what.find(expected), std::string::npos) << what;
        }
    };
    expect_error("{", "not valid JSON");
    expect_error("[]", "not a truth file");
    expect_error(R"({"format": "other", "version": 1, "matches": []})", "not a truth file");
    expect_error(R"({"format": "arbiter-truth", "version": 2, "matches": []})", "version is not 1");
    expect_error(R"({"format": "arbiter-truth", "version": 1})", "no \"matches\" array");
    expect_error(
        R"({"format": "arbiter-truth", "version": 1, "matches": [{"match_id": 1, "players": []}]})",
        "matches[0]: no \"relay_id\" string");
    expect_error(
        R"({"format": "arbiter-truth", "version": 1, "matches": [{"relay_id": "r", "match_id": 1,
                    "players": [{"player": 0, "profile": "honest", "cheater": false}]}]})",
        "matches[0].players[0]: \"player\" is not a player id");
    expect_error(
        R"({"format": "arbiter-truth", "version": 1, "matches": [{"relay_id": "r", "match_id": 1,
                    "players": [{"player": 1, "profile": "honest"}]}]})",
        "no \"cheater\" true or false");
    expect_error(
        R"({"format": "arbiter-truth", "version": 1, "matches": [{"relay_id": "r", "match_id": 1,
                    "players": [{"player": 1, "profile": "honest", "cheater": false},
                                {"player": 1, "profile": "fly", "cheater": true}]}]})",
        "player 1 appears twice");
    EXPECT_THROW(load_truths({dir / "absent.arbev"}, {}), TruthError);
}

TEST(Evaluate, AnUnreadableMatchFileIsReportedAndTheRestRuns) {
    TempDir dir;
    auto match = simulated(dir, "m.arbev");
    write_text(dir / "junk.arbev", "not an event file");
    auto host = reference_host(dir);
    EvaluationReport report =
        evaluate(*host, {dir / "junk.arbev", match}, load_truths({match}, {}));
    EXPECT_EQ(report.files, 2u);
    EXPECT_EQ(report.unreadable_files, 1u);
    ASSERT_FALSE(report.problems.empty());
    EXPECT_NE(report.problems[0].find("junk.arbev"), std::string::npos);
    EXPECT_EQ(row(report, "teleport").share_at_least(host::Action::flag_for_review), 1.0);
}

}  // namespace
}  // namespace arbiter::tools::test
