// The `arbiter` executable end to end, as an operator runs it, and the sample
// generator against the committed sample.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kArbiter = ARBITER_EXE;
const std::string kSamples = SAMPLES_DIR;
const std::string kSampleConfig = kSamples + "/server_config.toml";
const std::string kSampleMatch = kSamples + "/sample-match.arbev";

// player -> action, from the table `arbiter replay` prints.
std::map<int, std::string> actions_in_table(const std::string& out) {
    std::map<int, std::string> actions;
    auto lines = lines_of(out);
    for (size_t i = 1; i < lines.size(); ++i) {
        auto words = words_of(lines[i]);
        if (words.size() >= 5) actions[std::stoi(words[2])] = words[4];
    }
    return actions;
}

TEST(Cli, ReplayOfTheSampleFlagsTheTwoCheatersAndClearsTheRest) {
    TempDir dir;
    auto result = run_command({kArbiter, "replay", kSampleConfig, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;

    auto lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 7u) << result.out;
    EXPECT_EQ(words_of(lines[0]), (std::vector<std::string>{"relay", "match", "player", "account",
                                                            "action", "score", "top", "signals"}));
    std::map<int, std::string> expected = {{1, "Clear"},         {2, "Clear"},
                                           {3, "Clear"},         {4, "Clear"},
                                           {5, "FlagForReview"}, {6, "FlagForReview"}};
    EXPECT_EQ(actions_in_table(result.out), expected) << result.out;
    EXPECT_THAT(lines[5], HasSubstr("mallory"));
    EXPECT_THAT(lines[5], HasSubstr("reference:movement.speed"));
    EXPECT_THAT(lines[6], HasSubstr("trent"));
    EXPECT_THAT(lines[6], HasSubstr("reference:movement.teleport"));
    EXPECT_THAT(result.err,
                HasSubstr("replayed 1201 batches (8744 events) from 1 file(s): 0 damaged"));
}

// Five players whose names pass for one another or act on a terminal: an escape that
// clears the screen and a line break, a zero-width space, a Cyrillic a, a right-to-left
// override, and the real one, each moving 1 km a second (flagged); imported into
// `dir`/in.arbev.
const std::vector<std::string> kHostilePlayers = {R"(evil\u001b[2J\r\nX)", R"(mal\u200blory)",
                                                  R"(m\u0430llory)", R"(\u202eyrollam)",
                                                  "mallory"};
std::string import_hostile_players(const TempDir& dir) {
    std::string rows;
    for (size_t i = 0; i < kHostilePlayers.size(); ++i)
        for (int t = 0; t < 3; ++t)
            rows += R"({"source":"s","game":"g","player":")" + kHostilePlayers[i] +
                    R"(","t_seconds":)" + std::to_string(t) +
                    R"(,"action_kind":"position","x":)" + std::to_string(t * 1000) +
                    R"(,"y":)" + std::to_string(i) + "}\n";
    write_text(dir / "in.jsonl", rows);
    const auto imported = run_command(
        {kArbiter, "import", (dir / "in.jsonl").string(), (dir / "in.arbev").string()}, dir.path());
    EXPECT_EQ(imported.exit_status, 0) << imported.err;
    return (dir / "in.arbev").string();
}

// A table of the hostile players as the operator's terminal gets it: nothing it would act
// on, one line per player, each name its own.
void expect_hostile_players_shown_apart(const std::string& table) {
    for (const char raw : {'\x1b', '\r'})
        EXPECT_EQ(table.find(raw), std::string::npos) << table;
    for (const char* hidden : {"\u200B", "\u0430", "\u202E"})
        EXPECT_THAT(table, Not(HasSubstr(hidden)));
    EXPECT_EQ(lines_of(table).size(), 1 + kHostilePlayers.size()) << table;
    EXPECT_THAT(table, HasSubstr("evil\\x1b[2J\\x0d\\x0aX "));
    EXPECT_THAT(table, HasSubstr("\u26A0mal\\u{200B}lory"));
    EXPECT_THAT(table, HasSubstr("\u26A0m\\u{0430}llory"));
    EXPECT_THAT(table, HasSubstr("\u26A0\\u{202E}yrollam"));
    EXPECT_THAT(table, HasSubstr(" mallory "));
}

TEST(Cli, ReplayShowsHostileAndLookAlikeAccountsEscapedAndMarked) {
    TempDir dir;
    const std::string events = import_hostile_players(dir);
    const auto replayed = run_command({kArbiter, "replay", kSampleConfig, events}, dir.path());
    ASSERT_EQ(replayed.exit_status, 0) << replayed.err;
    expect_hostile_players_shown_apart(replayed.out);
}

TEST(Cli, SendShowsTheAccountsAServerReturnsEscapedAndMarked) {
    TempDir dir;
    const std::string events = import_hostile_players(dir);
    const auto socket = dir / "relays.sock";
    write_text(dir / "server_config.toml",
               read_text(kSampleConfig) + "\n[serve]\nunix_socket = \"" + socket.string() + "\"\n");
    ServerProcess server(dir / "server_config.toml", dir.path());
    const auto sent = run_command({kArbiter, "send", events, socket.string()}, dir.path());
    ASSERT_EQ(sent.exit_status, 0) << sent.err;
    expect_hostile_players_shown_apart(sent.out);
}

TEST(Cli, ReviewQueueShowsHostileAndLookAlikeAccountsEscapedAndMarked) {
    TempDir dir;
    const std::string events = import_hostile_players(dir);
    std::string config = read_text(kSampleConfig);
    config.replace(config.find("[sinks]"), 7, "[store]\npath = \"review.db\"\n\n[sinks]");
    write_text(dir / "server_config.toml", config);
    const std::string cfg = (dir / "server_config.toml").string();
    ASSERT_EQ(run_command({kArbiter, "replay", cfg, events}, dir.path()).exit_status, 0);
    const auto queue = run_command({kArbiter, "review", cfg, "queue"}, dir.path());
    ASSERT_EQ(queue.exit_status, 0) << queue.err;
    expect_hostile_players_shown_apart(queue.out);
}

TEST(Cli, EvaluateShowsAProfileFromARecordingEscaped) {
    TempDir dir;
    // A label from a recording's own rows, as `arbiter import --labels` keeps it.
    std::string rows;
    for (int t = 0; t < 3; ++t)
        rows += R"({"source":"s","game":"g","player":"p","t_seconds":)" + std::to_string(t) +
                R"(,"action_kind":"position","x":0,"y":0,"profile":"aim\u001b[2J\r\nbot"})" "\n";
    write_text(dir / "in.jsonl", rows);
    const auto imported = run_command({kArbiter, "import", (dir / "in.jsonl").string(),
                                       (dir / "in.arbev").string(), "--labels",
                                       (dir / "in.truth.json").string()},
                                      dir.path());
    ASSERT_EQ(imported.exit_status, 0) << imported.err;
    const auto evaluated =
        run_command({kArbiter, "evaluate", kSampleConfig, (dir / "in.arbev").string(), "--truth",
                     (dir / "in.truth.json").string()},
                    dir.path());
    ASSERT_EQ(evaluated.exit_status, 0) << evaluated.err;
    for (const char raw : {'\x1b', '\r'})
        EXPECT_EQ(evaluated.out.find(raw), std::string::npos) << evaluated.out;
    EXPECT_THAT(evaluated.out, HasSubstr("aim\\x1b[2J\\x0d\\x0abot"));
}

TEST(Cli, ReplayWithJsonPrintsOneObjectPerLine) {
    TempDir dir;
    auto result =
        run_command({kArbiter, "replay", kSampleConfig, kSampleMatch, "--json"}, dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 6u) << result.out;
    std::map<int, std::string> actions;
    for (const auto& line : lines) {
        auto object = nlohmann::json::parse(line, nullptr, false);
        ASSERT_FALSE(object.is_discarded()) << "not JSON: " << line;
        ASSERT_TRUE(object.is_object()) << line;
        actions[object.at("player").get<int>()] = object.at("action").get<std::string>();
        EXPECT_EQ(object.at("relay_id"), "sample-relay");
        ASSERT_TRUE(object.at("signals").is_array());
        for (const auto& signal : object.at("signals"))
            EXPECT_TRUE(signal.at("evidence").is_object());
    }
    std::map<int, std::string> expected = {{1, "Clear"},         {2, "Clear"},
                                           {3, "Clear"},         {4, "Clear"},
                                           {5, "FlagForReview"}, {6, "FlagForReview"}};
    EXPECT_EQ(actions, expected);
}

TEST(Cli, PluginsListsEveryBundledPluginWithItsVersions) {
    TempDir dir;
    auto result = run_command({kArbiter, "plugins", kSampleConfig}, dir.path());
    EXPECT_EQ(result.exit_status, 0) << result.err;
    auto lines = lines_of(result.out);
    // The header, then the plugins in the order of the file.
    const std::vector<std::string> names = {"reference", "accounts", "lagpool", "kaladin"};
    ASSERT_EQ(lines.size(), names.size() + 1) << result.out;
    auto header = words_of(lines[0]);
    ASSERT_EQ(header.size(), 10u);
    for (size_t line = 1; line < lines.size(); ++line) {
        auto row = words_of(lines[line]);
        ASSERT_EQ(row.size(), 10u) << lines[line];
        std::map<std::string, std::string> fields;
        for (size_t i = 0; i < header.size(); ++i)
            fields[header[i]] = row[i];
        const std::string& name = names[line - 1];
        EXPECT_EQ(fields["key"], name);
        EXPECT_EQ(fields["plugin"], name);
        EXPECT_EQ(fields["abi"], "1.1");
        EXPECT_EQ(fields["abi-min"], "1.0");  // rebuilt against 1.1, needing nothing of it
        EXPECT_EQ(fields["schema"], "1.2");
        EXPECT_EQ(fields["schema-min"], "1.0");
        EXPECT_EQ(fields["class"], name == "kaladin" ? "behavioural" : "validation");
        EXPECT_THAT(fields["library"], HasSubstr("arbiter-" + name + ".so"));
    }
}

TEST(Cli, PluginsShowsARefusedPluginAndExitsWith3) {
    TempDir dir;
    write_text(dir / "server_config.toml",
               "[plugins.reference]\nlibrary = \"reference\"\n\n[plugins.ghost]\nlibrary = "
               "\"./ghost.so\"\n");
    auto result =
        run_command({kArbiter, "plugins", (dir / "server_config.toml").string()}, dir.path());
    EXPECT_EQ(result.exit_status, 3);
    EXPECT_THAT(
        result.out,
        HasSubstr("ghost        REFUSED: " + (dir / "server_config.toml").string() +
                  ":4:10: plugin 'ghost' (" + (dir / "ghost.so").string() + "): file not found"));
    EXPECT_THAT(result.out, HasSubstr("reference    reference"));
}

TEST(Cli, AConfigSyntaxErrorExitsWith2AndPointsAtIt) {
    TempDir dir;
    // Line 3: the string is never closed; the parser meets the line feed at column 18.
    write_text(dir / "server_config.toml",
               "[host]\nserver_id = \"x\"\nlog_level = \"warn\n\n[plugins.reference]\nlibrary = "
               "\"reference\"\n");
    const std::string config = (dir / "server_config.toml").string();
    auto result = run_command({kArbiter, "replay", config, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err, HasSubstr(config + ":3:18: "));
    EXPECT_EQ(result.out, "") << "nothing is assessed with a config that cannot be read";

    // A table header never closed: line 1, at the line feed after "[host".
    write_text(dir / "server_config.toml", "[host\nserver_id = \"x\"\n");
    result = run_command({kArbiter, "plugins", config}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err, HasSubstr(config + ":1:6: "));
}

TEST(Cli, AnUnknownKeyIsReportedWithItsPosition) {
    TempDir dir;
    write_text(
        dir / "server_config.toml",
        "[plugins.reference]\nlibrary = \"reference\"\n\n[aggregation]\nmonitor_threshold = 0.3\n"
        "review_treshold = 0.7\n");
    const std::string config = (dir / "server_config.toml").string();
    auto result = run_command({kArbiter, "replay", config, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err, HasSubstr(config + ":6:1: unknown key 'aggregation.review_treshold' "
                                               "(did you mean 'review_threshold'?)"));
}

TEST(Cli, AMistypedCommandIsAnsweredWithTheNearestOne) {
    TempDir dir;
    auto result = run_command({kArbiter, "replya", kSampleConfig, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 1);
    EXPECT_THAT(result.err, HasSubstr("unknown command 'replya' (did you mean 'replay'?)"));
    // Nothing near: no guess.
    result = run_command({kArbiter, "frobnicate"}, dir.path());
    EXPECT_THAT(result.err, HasSubstr("unknown command 'frobnicate'\n"));
}

TEST(Cli, AMistypedBundledPluginIsRefusedWithTheBundledNames) {
    TempDir dir;
    write_text(dir / "server_config.toml", "[plugins.reference]\nlibrary = \"refrence\"\n");
    const std::string config = (dir / "server_config.toml").string();
    auto result = run_command({kArbiter, "replay", config, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err,
                HasSubstr(config + ":1:10: plugin 'reference': no bundled plugin 'refrence' in "));
    EXPECT_THAT(result.err,
                HasSubstr("(bundled: accounts, kaladin, lagpool, luanti, reference) (did you mean "
                          "'reference'?)"));
    EXPECT_THAT(result.err, HasSubstr("arbiter replay: " + config +
                                      ": not used: plugin 'reference' cannot be loaded"));
    EXPECT_EQ(result.out, "") << "nothing is assessed with a config that cannot be used";
}

// Issue 47: a plugin that could not be loaded left the rest of the config running, while
// an unknown key refused the whole file, and a reload refused the whole file for either.
// Now a config is taken whole or not at all everywhere: replay, evaluate and serve refuse
// it at start, saying which plugin and what to do; [host] partial_start = true is the
// operator's choice to run without it, said after the results.
TEST(Cli, AConfigWhosePluginCannotBeLoadedIsRefusedWholeUnlessPartialStartIsSet) {
    TempDir dir;
    const std::string plugins =
        "[plugins.reference]\nlibrary = \"reference\"\n\n[plugins.mine]\nlibrary = "
        "\"./arbiter-mine.so\"\n";
    write_text(dir / "server_config.toml", plugins);
    const std::string config = (dir / "server_config.toml").string();
    const std::string not_used = config +
                                 ": not used: plugin 'mine' cannot be loaded; a config "
                                 "is taken whole or not at all";
    // A match with its truth beside it, for evaluate.
    const std::string match = (dir / "m.arbev").string();
    ASSERT_EQ(
        run_command({kArbiter, "simulate", match, "--players", "honest=2", "--duration-s", "5"},
                    dir.path())
            .exit_status,
        0);
    for (const char* command : {"replay", "evaluate"}) {
        auto result = run_command({kArbiter, command, config, match}, dir.path());
        EXPECT_EQ(result.exit_status, 2) << command << "\n" << result.err;
        EXPECT_THAT(result.err,
                    HasSubstr(config + ":4:10: plugin 'mine' (" +
                              (dir / "arbiter-mine.so").string() + "): file not found"));
        EXPECT_THAT(result.err, HasSubstr(std::string("arbiter ") + command + ": " + not_used));
        EXPECT_THAT(result.err, HasSubstr("or set [host] partial_start = true to run without it"));
        EXPECT_EQ(result.out, "") << command;
    }
    try {
        ServerProcess server(config, dir.path(), {"--unix", (dir / "r.sock").string()});
        ADD_FAILURE() << "serve started with a plugin it cannot load";
    } catch (const std::runtime_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("exited before listening"));
        EXPECT_THAT(error.what(), HasSubstr("arbiter serve: cannot serve: " + not_used));
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "r.sock")) << "nothing left listening";

    // The operator's choice: run without it, and be told so after the table.
    write_text(dir / "server_config.toml", "[host]\npartial_start = true\n\n" + plugins);
    for (const char* command : {"replay", "evaluate"}) {
        auto partial = run_command({kArbiter, command, config, match}, dir.path());
        EXPECT_EQ(partial.exit_status, 3) << command << "\n" << partial.err;
        EXPECT_NE(partial.out, "") << command;
        EXPECT_THAT(partial.err,
                    HasSubstr(std::string("arbiter ") + command +
                              ": WARNING: assessed WITHOUT the refused plugin(s) mine"));
    }
}

// Long work shows a progress line on a terminal, erased before anything else is printed;
// --quiet, or output that is not a terminal, shows none. `script` gives the command a
// pseudo-terminal as stdout and stderr.
TEST(Cli, AProgressLineOnATerminalOnlyAndNeverInTheWay) {
    TempDir dir;
    if (run_command({"/usr/bin/script", "--version"}, dir.path()).exit_status != 0)
        GTEST_SKIP() << "script (util-linux) is not installed";
    auto on_terminal = [&](const std::string& command) {
        return run_command({"/usr/bin/script", "-qec", command, "/dev/null"}, dir.path()).out;
    };
    const std::string replay = kArbiter + " replay " + kSampleConfig + " " + kSampleMatch;
    const std::string shown = on_terminal(replay);
    EXPECT_THAT(shown, HasSubstr("\rreplay    ["));
    // Erased before the table: the header starts a clean line.
    EXPECT_THAT(shown, HasSubstr("\r\x1b[Krelay         match"));
    EXPECT_THAT(on_terminal(replay + " --quiet"), Not(HasSubstr("replay    [")));

    const std::string simulate = kArbiter + " simulate " + (dir / "m.arbev").string() +
                                 " --players honest=2 --duration-s 5 --human-traces builtin";
    const std::string simulated = on_terminal(simulate);
    EXPECT_THAT(simulated, HasSubstr("\rsimulate  ["));
    EXPECT_THAT(simulated, HasSubstr("\r\x1b[Ksimulated 5 s"));
    EXPECT_THAT(on_terminal(simulate + " --quiet"), Not(HasSubstr("simulate  [")));

    // Not a terminal: nothing, as every other test here sees.
    auto piped = run_command({kArbiter, "replay", kSampleConfig, kSampleMatch}, dir.path());
    EXPECT_THAT(piped.err, Not(HasSubstr("replay    [")));
}

TEST(Cli, AConfigThatEnablesNoPluginIsRefusedByTheCommandsThatJudgePlayers) {
    TempDir dir;
    write_text(dir / "empty.toml", "");
    write_text(dir / "disabled.toml",
               "[plugins.reference]\nlibrary = \"reference\"\nenabled = false\n");
    for (const char* file : {"empty.toml", "disabled.toml"}) {
        const std::string config = (dir / file).string();
        for (const char* command : {"replay", "evaluate"}) {
            auto result = run_command({kArbiter, command, config, kSampleMatch}, dir.path());
            EXPECT_EQ(result.exit_status, 2) << command << " " << file;
            EXPECT_THAT(result.err, HasSubstr(config + " enables no plugin, so every player would "
                                                       "be Clear"));
            EXPECT_TRUE(result.out.empty()) << result.out;
        }
        auto result = run_command({kArbiter, "plugins", config}, dir.path());
        EXPECT_EQ(result.exit_status, 2);
        EXPECT_THAT(result.err, HasSubstr("enables no plugin"));
    }
}

TEST(Cli, AnUnknownKeyInAPluginsOwnTableIsReportedWithItsPosition) {
    TempDir dir;
    write_text(
        dir / "server_config.toml",
        "[plugins.reference]\nlibrary = \"reference\"\n\n[plugins.reference.config.movement]\n"
        "max_speed = 20.0\nmax_sped = 20.0\n");
    const std::string config = (dir / "server_config.toml").string();
    auto result = run_command({kArbiter, "replay", config, kSampleMatch}, dir.path());
    // The plugin refused its config, and the config is not used: as for a key of the host's.
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err,
                HasSubstr(config + ":6:1: plugin 'reference' refused its config: "
                                   "plugins.reference.config.movement.max_sped: unknown key"));
    EXPECT_EQ(result.out, "");
}

TEST(Cli, ReplayOfADamagedFileNamesTheOffsetAndExitsWith3) {
    TempDir dir;
    auto bytes = read_bytes(kSampleMatch);
    bytes.resize(bytes.size() - 5);
    write_bytes(dir / "cut.arbev", bytes);
    auto result =
        run_command({kArbiter, "replay", kSampleConfig, (dir / "cut.arbev").string()}, dir.path());
    EXPECT_EQ(result.exit_status, 3);
    EXPECT_THAT(result.err, HasSubstr((dir / "cut.arbev").string() + ": offset "));
    EXPECT_THAT(result.err, HasSubstr("truncated record"));
    // The rest was read, and the verdict stands.
    std::map<int, std::string> expected = {{1, "Clear"},         {2, "Clear"},
                                           {3, "Clear"},         {4, "Clear"},
                                           {5, "FlagForReview"}, {6, "FlagForReview"}};
    EXPECT_EQ(actions_in_table(result.out), expected) << result.out;
}

// Simulated files all call their match sim-relay/1: replayed together, each is read (the
// second begins again after the first's end, a new match under the same id), and the
// same file named twice is read once.
TEST(Cli, ReplayOfTwoMatchesUnderOneIdReadsBothAndOfOneFileTwiceReadsItOnce) {
    TempDir dir;
    for (const char* seed : {"1", "2"}) {
        const auto made =
            run_command({kArbiter, "simulate", (dir / (std::string(seed) + ".arbev")).string(),
                         "--seed", seed, "--duration-s", "10", "--players", "honest=2"},
                        dir.path());
        ASSERT_EQ(made.exit_status, 0) << made.err;
    }
    const std::string one = (dir / "1.arbev").string(), two = (dir / "2.arbev").string();
    auto both = run_command({kArbiter, "replay", kSampleConfig, one, two}, dir.path());
    EXPECT_EQ(both.exit_status, 0) << both.err;
    EXPECT_THAT(both.err, HasSubstr("0 refused batch(es)"));
    EXPECT_THAT(both.err, HasSubstr("a new match under the same id"));
    auto twice = run_command({kArbiter, "replay", kSampleConfig, one, one}, dir.path());
    EXPECT_EQ(twice.exit_status, 3) << twice.err;
    EXPECT_THAT(twice.err, HasSubstr("duplicate of the first batch"));
}

// Every command answers --help and -h with its own usage and exit 0 (before this, replay
// said "unknown option", plugins opened a file named --help, simulate said it needed a
// value), and the version is one flag away.
TEST(Cli, EveryCommandAnswersHelpWithItsUsage) {
    TempDir dir;
    for (const char* command : {"replay", "plugins", "check-plugin", "simulate", "import",
                                "evaluate", "baseline", "serve", "ctl"}) {
        for (const char* flag : {"--help", "-h"}) {
            const auto result = run_command({kArbiter, command, flag}, dir.path());
            EXPECT_EQ(result.exit_status, 0) << command << " " << flag << ": " << result.err;
            EXPECT_THAT(result.out,
                        ::testing::StartsWith(std::string("usage: arbiter ") + command + " "))
                << command << " " << flag;
        }
    }
    const auto version = run_command({kArbiter, "--version"}, dir.path());
    EXPECT_EQ(version.exit_status, 0);
    EXPECT_THAT(version.out, ::testing::StartsWith("arbiter 0."));
    EXPECT_THAT(version.out, HasSubstr("(plugin ABI 1.1, event schema 1.2)"));
}

// A misspelt level used to turn logging off (spdlog reads it as "off"), hiding the very
// error that a plugin was refused.
TEST(Cli, AnUnknownLogLevelIsAUsageError) {
    TempDir dir;
    const auto result = run_command(
        {kArbiter, "replay", kSampleConfig, kSampleMatch, "--log-level", "verbose"}, dir.path());
    EXPECT_EQ(result.exit_status, 1);
    EXPECT_THAT(result.err, HasSubstr("unknown log level 'verbose'"));
    EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(Cli, ReplayOfAMissingFileExitsWith2) {
    TempDir dir;
    const std::string missing = (dir / "nowhere.arbev").string();
    auto result = run_command({kArbiter, "replay", kSampleConfig, missing}, dir.path());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.err,
                HasSubstr(missing + ": cannot open the event file: No such file or directory"));
}

TEST(Cli, ReplayOfOneMissingFileBesideAGoodOneExitsWith3) {
    TempDir dir;
    const std::string missing = (dir / "nowhere.arbev").string();
    auto result =
        run_command({kArbiter, "replay", kSampleConfig, missing, kSampleMatch}, dir.path());
    EXPECT_EQ(result.exit_status, 3);
    EXPECT_EQ(actions_in_table(result.out)[6], "FlagForReview");
}

TEST(Cli, UsageErrorsExitWith1) {
    TempDir dir;
    EXPECT_EQ(run_command({kArbiter}, dir.path()).exit_status, 1);
    EXPECT_EQ(run_command({kArbiter, "replay", kSampleConfig}, dir.path()).exit_status, 1);
    EXPECT_EQ(run_command({kArbiter, "replay", kSampleConfig, kSampleMatch, "--jsn"}, dir.path())
                  .exit_status,
              1);
    EXPECT_EQ(run_command({kArbiter, "frobnicate"}, dir.path()).exit_status, 1);
}

// Every command reads its options one way (host/cli/options.hpp): a mistake is named with
// the command, then the usage, and nothing runs. Before, a misspelt option at the end of
// simulate's line was "needs a value", review said "expected a whole number" without the
// number, and a repeated --seed quietly took the last.
TEST(Cli, EveryCommandSaysAMistakeInItsOptionsTheSameWay) {
    TempDir dir;
    struct Case {
        std::vector<std::string> args;
        const char* said;
    };
    const Case cases[] = {
        {{"replay", kSampleConfig, kSampleMatch, "--jsn"},
         "arbiter replay: unknown option --jsn (did you mean '--json'?)\nusage: arbiter replay "},
        {{"replay", kSampleConfig, kSampleMatch, "--log-level"},
         "arbiter replay: --log-level needs a value (trace, debug, info, warn, error, off)\n"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--qiet"},
         "arbiter simulate: unknown option --qiet (did you mean '--quiet'?)\n"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--seed", "1", "--seed", "2"},
         "arbiter simulate: --seed is given twice; give it once\n"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--seed", "99999999999999999999"},
         "--seed '99999999999999999999' is too large: --seed takes a non-negative integer\n"},
        {{"simulate", "m.arbev", "--players", "honest=1", "--seed=3"},
         "unknown option --seed=3 (the value goes after a space: --seed 3)"},
        {{"soak", kSampleConfig, "--players", "2000000"},
         "arbiter soak: --players '2000000' is too large: --players takes a whole number from 0 "
         "to 1000000\n"},
        {{"evaluate", kSampleConfig, kSampleMatch, "--truth"},
         "arbiter evaluate: --truth needs a value"},
        {{"import", "in.csv", "out.arbev", "--on-error", "skp"},
         "arbiter import: --on-error 'skp' is neither stop nor skip (did you mean 'skip'?)\n"},
        {{"import", "in.csv", "out.arbev", "--format", "tsv"},
         "arbiter import: --format 'tsv' is neither csv nor jsonl (did you mean 'csv'?)\n"},
        {{"import", "in.csv", "out.arbev", "--tick-rate", "1e999"},
         "arbiter import: --tick-rate '1e999' is not a number\n"},
        {{"send", kSampleMatch, "relay.sock", "--relay", std::string(65, 'r')},
         "arbiter send: --relay takes at most 64 bytes\n"},
        {{"review", kSampleConfig, "queue", "--limit", "0"},
         "arbiter review: --limit '0' is too small: --limit takes a whole number from 1 to "
         "100000\n"},
        {{"baseline", kSampleConfig, kSampleMatch, "--log-level"},
         "arbiter baseline: --log-level needs a value"},
        {{"serve", kSampleConfig, "--unx", "x.sock"},
         "arbiter serve: unknown option --unx (did you mean '--unix'?)"},
        {{"ctl", "x.sock", "status", "--jsno"},
         "arbiter ctl: unknown option --jsno (did you mean '--json'?)"},
        {{"check-plugin", "lib.so", "--config"}, "arbiter check-plugin: --config needs a value"},
        {{"plugins", kSampleConfig, "--json"}, "arbiter plugins: unknown option --json"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> argv = {kArbiter};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        const auto result = run_command(argv, dir.path());
        EXPECT_EQ(result.exit_status, 1) << c.said << ": " << result.err;
        EXPECT_THAT(result.err, HasSubstr(c.said));
        EXPECT_EQ(result.out, "") << c.said;
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "nothing runs on a mistake";
}

TEST(Cli, TheRegeneratedSampleIsByteIdenticalToTheCommittedOne) {
    TempDir dir;
    const auto regenerated = dir / "sample-match.arbev";
    auto result = run_command({MAKE_SAMPLE_EXE, regenerated.string()}, dir.path());
    ASSERT_EQ(result.exit_status, 0) << result.err;
    EXPECT_TRUE(read_bytes(regenerated) == read_bytes(kSampleMatch))
        << "samples/sample-match.arbev is not what samples/make_sample_match.cpp writes; "
           "regenerate it";
}

// Issue 16: the main job writes to a store, and `arbiter review` puts the sample's two
// cheaters at the top with their evidence; a verdict takes one off the queue, and the
// export is a truth file `arbiter evaluate` reads.
TEST(Cli, ReviewShowsTheSamplesCheatersFirstAndRecordsVerdicts) {
    TempDir dir;
    std::string config = read_text(kSampleConfig);
    config.replace(config.find("[sinks]"), 7, "[store]\npath = \"review.db\"\n\n[sinks]");
    write_text(dir / "server_config.toml", config);
    const std::string cfg = (dir / "server_config.toml").string();
    auto replay = run_command({kArbiter, "replay", cfg, kSampleMatch}, dir.path());
    ASSERT_EQ(replay.exit_status, 0) << replay.err;

    auto queue = run_command({kArbiter, "review", cfg, "queue"}, dir.path());
    ASSERT_EQ(queue.exit_status, 0) << queue.err;
    const auto lines = lines_of(queue.out);
    ASSERT_GE(lines.size(), 3u) << queue.out;
    EXPECT_EQ(words_of(lines[1])[1], "trent") << queue.out;
    EXPECT_THAT(queue.out, HasSubstr("mallory"));
    EXPECT_THAT(queue.out, Not(HasSubstr("alice")));

    auto dossier = run_command({kArbiter, "review", cfg, "dossier", "trent", "--json"}, dir.path());
    ASSERT_EQ(dossier.exit_status, 0) << dossier.err;
    const auto json = nlohmann::json::parse(dossier.out);
    ASSERT_FALSE(json["events"].empty());
    EXPECT_TRUE(json["events"][0]["evidence"].is_object());
    EXPECT_EQ(json["matches"][0]["action"], "FlagForReview");

    auto verdict = run_command({kArbiter, "review", cfg, "verdict", "trent", "confirmed",
                                "--reviewer", "alice", "--note", "teleports"},
                               dir.path());
    EXPECT_EQ(verdict.exit_status, 0) << verdict.err;
    auto bad = run_command({kArbiter, "review", cfg, "verdict", "trent", "guilty", "--reviewer",
                            "alice"},
                           dir.path());
    EXPECT_EQ(bad.exit_status, 1);
    EXPECT_THAT(bad.err, HasSubstr("expected confirmed, false_positive or inconclusive"));
    auto after = run_command({kArbiter, "review", cfg, "queue"}, dir.path());
    EXPECT_THAT(after.out, Not(HasSubstr("trent")));

    auto exported =
        run_command({kArbiter, "review", cfg, "export", (dir / "reviewed.truth.json").string()},
                    dir.path());
    ASSERT_EQ(exported.exit_status, 0) << exported.err;
    auto evaluated = run_command({kArbiter, "evaluate", kSampleConfig, kSampleMatch, "--truth",
                                  (dir / "reviewed.truth.json").string(), "--json"},
                                 dir.path());
    EXPECT_THAT(evaluated.out + evaluated.err, HasSubstr("confirmed"));

    auto none = run_command({kArbiter, "review", kSampleConfig, "queue"}, dir.path());
    EXPECT_EQ(none.exit_status, 2);
    EXPECT_THAT(none.err, HasSubstr("has no store: set [store] path"));
}

// Issue 47: a verdict without --reviewer named the store's rule for a reviewer's name, not
// the option that was missing. Nothing is recorded without one.
TEST(Cli, AVerdictWithoutAReviewerNamesTheOption) {
    TempDir dir;
    std::string config = read_text(kSampleConfig);
    config.replace(config.find("[sinks]"), 7, "[store]\npath = \"review.db\"\n\n[sinks]");
    write_text(dir / "server_config.toml", config);
    const std::string cfg = (dir / "server_config.toml").string();
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{}, std::vector<std::string>{"--reviewer", ""},
          std::vector<std::string>{"--note", "teleports"}}) {
        std::vector<std::string> argv = {kArbiter, "review", cfg, "verdict", "trent", "confirmed"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto result = run_command(argv, dir.path());
        EXPECT_EQ(result.exit_status, 1) << result.err;
        EXPECT_THAT(result.err, HasSubstr("a verdict needs --reviewer NAME"));
        EXPECT_THAT(result.err, Not(HasSubstr("1 to 200 bytes")));
        EXPECT_EQ(result.out, "");
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "review.db")) << "refused before the store";
}

}  // namespace
}  // namespace arbiter::test
