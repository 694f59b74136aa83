// `import`: good CSV and JSON Lines become the same matches; every kind of bad row is
// reported by its line, and stops the import (nothing written) or is skipped (counted),
// as asked; no temporary file is ever left behind.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include <arbiter/sdk/events.hpp>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/tools/import.hpp"
#include "arbiter/tools/truth.hpp"
#include "support.hpp"

namespace arbiter::tools::test {
namespace {

// Two games of one source, three players, rows out of time order, a held key, a
// position row, a target, a tick and a profile.
constexpr const char* kGoodCsv =
    "source,game,player,t_seconds,action_kind,x,y,z,target_x,target_y,target_player,tick,claimed_"
    "tick,repeat,profile\n"
    "club,g1,ann,0.50,command,,,,10,20,,,,,\n"
    "club,g1,bob,0.40,selection,,,,,,,,,,\n"
    "club,g1,ann,0.50,command_repeat,,,,,,,,,,\n"
    "club,g1,ann,0.25,position,1,2,3,,,,,,,\n"
    "club,g1,bob,0.90,command,5,6,,,,ann,,17,,bot\n"
    "\n"
    "club,\"g2, the rematch\",ann,1.00,key_press,,,,,,,40,,true,\n"
    "club,\"g2, the rematch\",cat,0.10,key_press,,,,,,,,,false,\n";

constexpr const char* kGoodJsonl =
    R"({"source": "club", "game": "g1", "player": "ann", "t_seconds": 0.5, "action_kind": "command", "target_x": 10, "target_y": 20})"
    "\n"
    R"({"source": "club", "game": "g1", "player": "bob", "t_seconds": 0.4, "action_kind": "selection"})"
    "\n"
    R"({"source": "club", "game": "g1", "player": "ann", "t_seconds": 0.5, "action_kind": "command_repeat"})"
    "\n"
    R"({"source": "club", "game": "g1", "player": "ann", "t_seconds": 0.25, "action_kind": "position", "x": 1, "y": 2, "z": 3})"
    "\n"
    R"({"source": "club", "game": "g1", "player": "bob", "t_seconds": 0.9, "action_kind": "command", "x": 5, "y": 6, "target_player": "ann", "claimed_tick": 17, "profile": "bot"})"
    "\n\n"
    R"({"source": "club", "game": "g2, the rematch", "player": "ann", "t_seconds": 1.0, "action_kind": "key_press", "tick": 40, "repeat": true})"
    "\n"
    R"({"source": "club", "game": "g2, the rematch", "player": "cat", "t_seconds": 0.1, "action_kind": "key_press", "repeat": false})"
    "\n";

ImportOptions options(TraceFormat format, OnBadRow on_bad_row = OnBadRow::stop) {
    ImportOptions o;
    o.format = format;
    o.on_bad_row = on_bad_row;
    o.tick_rate_hz = 10;
    return o;
}

void check_good_import(const std::filesystem::path& file, const ImportReport& report) {
    EXPECT_TRUE(report.written);
    EXPECT_TRUE(report.problems.empty());
    EXPECT_EQ(report.rows_seen, 7u);
    EXPECT_EQ(report.rows_imported, 7u);
    EXPECT_EQ(report.matches, 2u);
    EXPECT_EQ(report.players, 4u);                     // ann, bob / ann, cat
    EXPECT_EQ(report.orders, 6u);                      // every row but the position row
    EXPECT_EQ(report.positions, 2u);                   // the position row, and bob's x, y
    EXPECT_EQ(report.events, 6u + 2u + 2u * 2u + 4u);  // + positions, starts and ends, joins

    MatchFile match = read_match(file);
    ASSERT_EQ(match.roots.size(), 2u);
    EXPECT_EQ(match.roots[0]->match_id(), 1u);
    EXPECT_EQ(match.roots[1]->match_id(), 2u);
    EXPECT_EQ(match.roots[0]->relay_id()->str(), "import");

    const auto* g1 = match.roots[0]->events();
    ASSERT_EQ(g1->size(), 1u + 2u + 5u + 1u + 1u);
    const auto* start = g1->Get(0)->body_as_MatchStart();
    ASSERT_NE(start, nullptr);
    EXPECT_EQ(start->game()->str(), "club");
    EXPECT_EQ(start->map()->str(), "g1");
    EXPECT_FLOAT_EQ(start->tick_rate_hz(), 10.0f);
    EXPECT_EQ(g1->Get(1)->body_as_PlayerJoin()->account_id()->str(), "ann");  // first seen
    EXPECT_EQ(g1->Get(2)->body_as_PlayerJoin()->account_id()->str(), "bob");
    // Sorted by time: ann's position (0.25), bob's selection (0.40), ann's two (0.50) in
    // file order, bob's position and command (0.90).
    const auto* position = g1->Get(3)->body_as_PositionUpdate();
    ASSERT_NE(position, nullptr);
    EXPECT_EQ(g1->Get(3)->relay_time_us(), 250'000);
    EXPECT_EQ(g1->Get(3)->tick(), 2u);
    EXPECT_FLOAT_EQ(position->position()->z(), 3.0f);
    EXPECT_EQ(g1->Get(4)->body_as_Order()->kind()->str(), "selection");
    const auto* command = g1->Get(5)->body_as_Order();
    EXPECT_EQ(command->kind()->str(), "command");
    EXPECT_TRUE(command->has_target());
    EXPECT_FLOAT_EQ(command->target()->y(), 20.0f);
    EXPECT_FALSE(command->repeat());
    const auto* held = g1->Get(6)->body_as_Order();
    EXPECT_EQ(held->kind()->str(), "command_repeat");
    EXPECT_TRUE(held->repeat());
    EXPECT_NE(g1->Get(7)->body_as_PositionUpdate(), nullptr);
    const auto* aimed = g1->Get(8)->body_as_Order();
    EXPECT_EQ(g1->Get(8)->player(), 2u);
    EXPECT_EQ(aimed->target_player(), 1u);
    EXPECT_EQ(aimed->claimed_tick(), 17u);
    EXPECT_EQ(g1->Get(9)->body_type(), fb::EventBody::MatchEnd);

    const auto* g2 = match.roots[1]->events();
    ASSERT_EQ(g2->size(), 1u + 2u + 2u + 1u);
    EXPECT_EQ(g2->Get(0)->body_as_MatchStart()->map()->str(), "g2, the rematch");
    EXPECT_EQ(g2->Get(3)->body_as_Order()->repeat(), false);  // cat at 0.1
    EXPECT_EQ(g2->Get(4)->tick(), 40u);                       // the row's own tick
    EXPECT_TRUE(g2->Get(4)->body_as_Order()->repeat());
}

TEST(Import, GoodCsv) {
    TempDir dir;
    write_text(dir / "in.csv", kGoodCsv);
    ImportOptions o = options(TraceFormat::csv);
    o.labels = dir / "in.truth.json";
    ImportReport report = import_traces(dir / "in.csv", dir / "out.arbev", o);
    check_good_import(dir / "out.arbev", report);

    Truth labels = read_truth(dir / "in.truth.json");
    ASSERT_EQ(labels.matches.size(), 2u);
    EXPECT_EQ(labels.matches[0].source, "club");
    EXPECT_EQ(labels.matches[1].game, "g2, the rematch");
    ASSERT_EQ(labels.matches[0].players.size(), 2u);
    EXPECT_EQ(labels.matches[0].players[0].account, "ann");
    EXPECT_EQ(labels.matches[0].players[0].profile, "honest");
    EXPECT_FALSE(labels.matches[0].players[0].cheater);
    EXPECT_EQ(labels.matches[0].players[1].profile, "bot");
    EXPECT_TRUE(labels.matches[0].players[1].cheater);
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"in.csv", "in.truth.json", "out.arbev"}));
}

TEST(Import, GoodJsonLinesMakeTheSameMatches) {
    TempDir dir;
    write_text(dir / "in.csv", kGoodCsv);
    write_text(dir / "in.jsonl", kGoodJsonl);
    ImportReport csv = import_traces(dir / "in.csv", dir / "csv.arbev", options(TraceFormat::csv));
    ImportReport jsonl =
        import_traces(dir / "in.jsonl", dir / "jsonl.arbev", options(TraceFormat::jsonl));
    check_good_import(dir / "jsonl.arbev", jsonl);
    EXPECT_EQ(read_text(dir / "csv.arbev"), read_text(dir / "jsonl.arbev"));
}

TEST(Import, CrLfByteOrderMarkAndColumnsInAnyOrder) {
    TempDir dir;
    write_text(
        dir / "in.csv",
        "\xEF\xBB\xBF"
        "action_kind,t_seconds,player,game,source\r\ncommand,1.5,p,g,s\r\nselection,2,p,g,s\r\n");
    ImportReport report =
        import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv));
    EXPECT_TRUE(report.written);
    EXPECT_TRUE(report.problems.empty()) << report.problems.front().str("in.csv");
    EXPECT_EQ(report.orders, 2u);
}

struct BadRow {
    const char* name;
    TraceFormat format;
    const char* row;       // the third line of the file
    const char* expected;  // in the problem
};

constexpr const char* kHeader = "source,game,player,t_seconds,action_kind,x,y,tick,repeat\n";
constexpr const char* kGoodRow = "s,g,p,1.0,command,,,,\n";
constexpr const char* kGoodJson =
    R"({"source":"s","game":"g","player":"p","t_seconds":1.0,"action_kind":"command"})"
    "\n";

const BadRow kBadRows[] = {
    {"missing column", TraceFormat::csv, "s,g,p,2.0\n", "has 4 field(s), the header has 9"},
    {"extra column", TraceFormat::csv, "s,g,p,2.0,command,,,,,\n", "has 10 field(s)"},
    {"bad number", TraceFormat::csv, "s,g,p,two,command,,,,\n", "t_seconds 'two' is not a number"},
    {"empty time", TraceFormat::csv, "s,g,p,,command,,,,\n", "t_seconds is empty"},
    {"negative time", TraceFormat::csv, "s,g,p,-0.5,command,,,,\n", "t_seconds is negative"},
    {"infinite time", TraceFormat::csv, "s,g,p,inf,command,,,,\n", "t_seconds is not finite"},
    {"nan time", TraceFormat::csv, "s,g,p,nan,command,,,,\n", "t_seconds is not finite"},
    {"bad position", TraceFormat::csv, "s,g,p,2.0,command,1e999,2,,\n",
     "x '1e999' is not a finite number"},
    {"x without y", TraceFormat::csv, "s,g,p,2.0,command,1,,,\n", "x without y"},
    {"position without x", TraceFormat::csv, "s,g,p,2.0,position,,,,\n",
     "a position row needs x and y"},
    {"bad tick", TraceFormat::csv, "s,g,p,2.0,command,,,1.5,\n",
     "tick '1.5' is not a non-negative integer"},
    {"bad repeat", TraceFormat::csv, "s,g,p,2.0,command,,,,maybe\n",
     "repeat 'maybe' is not true or false"},
    {"empty player", TraceFormat::csv, "s,g,,2.0,command,,,,\n", "player is empty"},
    {"open quote", TraceFormat::csv, "s,\"g,p,2.0,command,,,,\n", "a quoted field is not closed"},
    {"not json", TraceFormat::jsonl, "{\"source\": \"s\",\n", "not valid JSON"},
    {"not an object", TraceFormat::jsonl, "[1, 2]\n", "not a JSON object but array"},
    {"unknown key", TraceFormat::jsonl,
     R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","speed":3})"
     "\n",
     "unknown key 'speed'"},
    {"missing key", TraceFormat::jsonl,
     R"({"source":"s","game":"g","t_seconds":2,"action_kind":"c"})"
     "\n",
     "no 'player'"},
    {"time as text", TraceFormat::jsonl,
     R"({"source":"s","game":"g","player":"p","t_seconds":"2","action_kind":"c"})"
     "\n",
     "t_seconds is string, not a number"},
    {"negative time json", TraceFormat::jsonl,
     R"({"source":"s","game":"g","player":"p","t_seconds":-2,"action_kind":"c"})"
     "\n",
     "t_seconds is negative"},
    {"negative tick json", TraceFormat::jsonl,
     R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","tick":-1})"
     "\n",
     "tick '-1' is not a non-negative integer"},
};

std::string file_with(const BadRow& bad) {
    if (bad.format == TraceFormat::csv) return std::string(kHeader) + kGoodRow + bad.row + kGoodRow;
    return std::string(kGoodJson) + bad.row + kGoodJson;
}

// The line of the bad row: the third in a CSV (after the header and a good row), the
// second in JSON Lines.
uint64_t bad_line(const BadRow& bad) {
    return bad.format == TraceFormat::csv ? 3 : 2;
}

TEST(Import, EveryKindOfBadRowStopsTheImportAndWritesNothing) {
    for (const BadRow& bad : kBadRows) {
        SCOPED_TRACE(bad.name);
        TempDir dir;
        const char* name = bad.format == TraceFormat::csv ? "in.csv" : "in.jsonl";
        write_text(dir / name, file_with(bad));
        ImportOptions o = options(bad.format, OnBadRow::stop);
        o.labels = dir / "labels.json";
        ImportReport report = import_traces(dir / name, dir / "out.arbev", o);
        EXPECT_FALSE(report.written);
        ASSERT_EQ(report.problems.size(), 1u);
        EXPECT_EQ(report.problems[0].line, bad_line(bad));
        const std::string message = report.problems[0].str(name);
        EXPECT_TRUE(
            message.starts_with(std::string(name) + ":" + std::to_string(bad_line(bad)) + ": "))
            << message;
        EXPECT_NE(message.find(bad.expected), std::string::npos) << message;
        // Nothing written, not even a temporary file.
        EXPECT_EQ(dir.files(), std::vector<std::string>{name});
    }
}

TEST(Import, EveryKindOfBadRowIsSkippedAndCountedOnRequest) {
    for (const BadRow& bad : kBadRows) {
        SCOPED_TRACE(bad.name);
        TempDir dir;
        const char* name = bad.format == TraceFormat::csv ? "in.csv" : "in.jsonl";
        write_text(dir / name, file_with(bad));
        ImportReport report =
            import_traces(dir / name, dir / "out.arbev", options(bad.format, OnBadRow::skip));
        EXPECT_TRUE(report.written);
        ASSERT_EQ(report.problems.size(), 1u);
        EXPECT_EQ(report.problems[0].line, bad_line(bad));
        EXPECT_NE(report.problems[0].what.find(bad.expected), std::string::npos)
            << report.problems[0].what;
        EXPECT_EQ(report.rows_seen, 3u);
        EXPECT_EQ(report.rows_skipped, 1u);
        EXPECT_EQ(report.rows_imported, 2u);
        EXPECT_EQ(report.orders, 2u);
        EXPECT_EQ(read_match(dir / "out.arbev").events.size(), 2u + 3u);
        EXPECT_EQ(dir.files(), (std::vector<std::string>{name, "out.arbev"}));
    }
}

TEST(Import, ManyBadRowsAreEachReportedInSkipMode) {
    TempDir dir;
    write_text(dir / "in.csv", std::string(kHeader) + "s,g,p,x,c,,,,\n" + kGoodRow +
                                   "s,g,p,-1,c,,,,\ns,g,,1,c,,,,\n");
    ImportReport report =
        import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv, OnBadRow::skip));
    EXPECT_TRUE(report.written);
    ASSERT_EQ(report.problems.size(), 3u);
    EXPECT_EQ(report.problems[0].line, 2u);
    EXPECT_EQ(report.problems[1].line, 4u);
    EXPECT_EQ(report.problems[2].line, 5u);
    EXPECT_EQ(report.rows_skipped, 3u);
}

TEST(Import, AProfileThatChangesForOnePlayerIsABadRow) {
    TempDir dir;
    write_text(dir / "in.csv",
               "source,game,player,t_seconds,action_kind,profile\ns,g,p,1,c,bot\ns,g,p,2,c,\ns,g,p,"
               "3,c,honest\n");
    ImportReport stop = import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv));
    EXPECT_FALSE(stop.written);
    ASSERT_EQ(stop.problems.size(), 1u);
    EXPECT_EQ(stop.problems[0].line, 4u);
    EXPECT_NE(stop.problems[0].what.find("differs from 'bot' given on line 2"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir / "out.arbev"));
    ImportReport skip =
        import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv, OnBadRow::skip));
    EXPECT_TRUE(skip.written);
    EXPECT_EQ(skip.rows_imported, 2u);
}

TEST(Import, ProblemsOfTheWholeFileStopEvenInSkipMode) {
    struct Case {
        const char* name;
        const char* text;
        const char* expected;
    };
    const Case cases[] = {
        {"unknown column", "source,game,player,t_seconds,action_kind,colour\ns,g,p,1,c,red\n",
         "unknown column 'colour'"},
        {"missing column", "source,game,player,action_kind\ns,g,p,c\n", "no 't_seconds' column"},
        {"twice", "source,game,player,t_seconds,action_kind,game\ns,g,p,1,c,g\n",
         "column 'game' appears twice"},
        {"empty file", "", "the file is empty"},
    };
    for (const Case& c : cases) {
        for (OnBadRow mode : {OnBadRow::stop, OnBadRow::skip}) {
            SCOPED_TRACE(std::string(c.name) + (mode == OnBadRow::stop ? " (stop)" : " (skip)"));
            TempDir dir;
            write_text(dir / "in.csv", c.text);
            ImportReport report =
                import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv, mode));
            EXPECT_FALSE(report.written);
            ASSERT_FALSE(report.problems.empty());
            EXPECT_NE(report.problems.back().what.find(c.expected), std::string::npos)
                << report.problems.back().what;
            EXPECT_EQ(dir.files(), std::vector<std::string>{"in.csv"});
        }
    }
}

TEST(Import, OnlyBadRowsWriteNothingEvenInSkipMode) {
    TempDir dir;
    write_text(dir / "in.csv", "source,game,player,t_seconds,action_kind\ns,g,p,-1,c\n");
    ImportReport report =
        import_traces(dir / "in.csv", dir / "out.arbev", options(TraceFormat::csv, OnBadRow::skip));
    EXPECT_FALSE(report.written);
    ASSERT_EQ(report.problems.size(), 2u);
    EXPECT_EQ(report.problems[0].line, 2u);
    EXPECT_EQ(report.problems[1].str("in.csv"), "in.csv: no valid rows: nothing to import");
    EXPECT_EQ(dir.files(), std::vector<std::string>{"in.csv"});
}

// Event strings must be UTF-8 (ingest refuses a batch otherwise), so a name that is not
// is written with U+FFFD in the events as in the labels, and the file replays whole.
TEST(Import, NamesThatAreNotUtf8AreReplacedInTheEventsAndTheLabels) {
    TempDir dir;
    write_text(dir / "in.csv",
               "source,game,player,t_seconds,action_kind\ns,g,\xff\xfe,1,comm\xc3\n");
    ImportOptions o = options(TraceFormat::csv);
    o.labels = dir / "labels.json";
    ImportReport report = import_traces(dir / "in.csv", dir / "out.arbev", o);
    ASSERT_TRUE(report.written);
    Truth labels = read_truth(dir / "labels.json");
    ASSERT_EQ(labels.matches.at(0).players.size(), 1u);
    EXPECT_EQ(labels.matches[0].players[0].account, "\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice

    arbiter::host::EventFileReader reader(dir / "out.arbev");
    std::set<std::string> accounts, kinds;
    while (auto item = reader.next()) {
        ASSERT_EQ(item->kind, arbiter::host::EventFileItem::Kind::record);
        auto batch = arbiter::host::ingest_batch(item->payload, 1 << 20);
        ASSERT_TRUE(batch.ok) << batch.problem;
        for (const auto* event : *batch.batch.root().events()) {
            if (const auto* join = event->body_as_PlayerJoin())
                accounts.insert(join->account_id()->str());
            if (const auto* order = event->body_as_Order()) kinds.insert(order->kind()->str());
        }
    }
    EXPECT_EQ(accounts, std::set<std::string>{"\xEF\xBF\xBD\xEF\xBF\xBD"});
    EXPECT_EQ(kinds, std::set<std::string>{"comm\xEF\xBF\xBD"});
}

// On b9b94b3 the problem message quoted the value with dump(), which recursed 80,000
// levels deep and crashed the import.
TEST(Import, AValueNestedDeepIsABadRowNotACrash) {
    TempDir dir;
    const std::string deep = std::string(80000, '[') + std::string(80000, ']');
    const std::string shallow = std::string(20, '[') + std::string(20, ']');
    write_text(
        dir / "in.jsonl",
        R"({"source":"s","game":"g","player":"p","t_seconds":1,"action_kind":"c","tick":)" + deep +
            "}\n" +
            R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","tick":)" +
            shallow + "}\n" +
            R"({"source":"s","game":"g","player":"p","t_seconds":3,"action_kind":"c"})" + "\n");
    ImportReport report = import_traces(dir / "in.jsonl", dir / "out.arbev",
                                        options(TraceFormat::jsonl, OnBadRow::skip));
    ASSERT_EQ(report.problems.size(), 2u);
    EXPECT_EQ(report.problems[0].line, 1u);
    EXPECT_NE(report.problems[0].str("in.jsonl").find("not valid JSON: the JSON is"),
              std::string::npos)
        << report.problems[0].str("in.jsonl");
    EXPECT_NE(report.problems[1].str("in.jsonl").find("tick is array, not a non-negative integer"),
              std::string::npos)
        << report.problems[1].str("in.jsonl");
    EXPECT_TRUE(report.written);
}

TEST(Import, AMissingInputIsReportedAndNothingWritten) {
    TempDir dir;
    ImportReport report =
        import_traces(dir / "absent.csv", dir / "out.arbev", options(TraceFormat::csv));
    EXPECT_FALSE(report.written);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_EQ(report.problems[0].str("absent.csv"),
              "absent.csv: cannot read: No such file or directory");
    EXPECT_TRUE(dir.files().empty());
}

// Look and aim columns (schema 1.2): they go on every event the row becomes, the yaw taken
// modulo 2 pi; a row without them has none.
TEST(Import, LookAndAimColumnsGoOnTheRowsPositionAndOrder) {
    constexpr const char* kCsv =
        "source,game,player,t_seconds,action_kind,x,y,yaw,pitch,aim_x,aim_y,aim_relative\n"
        "s,g,p,0.1,position,1,2,0.5,-0.25,,,\n"
        "s,g,p,0.2,fire,3,4,7.0,0.1,120.5,-40,true\n"
        "s,g,p,0.3,click,,,,,256,192,\n"
        "s,g,p,0.4,command,,,,,,,\n";
    constexpr const char* kJsonl =
        R"({"source":"s","game":"g","player":"p","t_seconds":0.1,"action_kind":"position","x":1,"y":2,"yaw":0.5,"pitch":-0.25})"
        "\n"
        R"({"source":"s","game":"g","player":"p","t_seconds":0.2,"action_kind":"fire","x":3,"y":4,"yaw":7.0,"pitch":0.1,"aim_x":120.5,"aim_y":-40,"aim_relative":true})"
        "\n"
        R"({"source":"s","game":"g","player":"p","t_seconds":0.3,"action_kind":"click","aim_x":256,"aim_y":192,"yaw":null})"
        "\n"
        R"({"source":"s","game":"g","player":"p","t_seconds":0.4,"action_kind":"command"})"
        "\n";
    for (auto [format, name, text] : {std::tuple{TraceFormat::csv, "in.csv", kCsv},
                                      std::tuple{TraceFormat::jsonl, "in.jsonl", kJsonl}}) {
        SCOPED_TRACE(name);
        TempDir dir;
        write_text(dir / name, text);
        const ImportReport report = import_traces(dir / name, dir / "out.arbev", options(format));
        ASSERT_TRUE(report.written) << (report.problems.empty() ? "" : report.problems[0].what);
        const MatchFile match = read_match(dir / "out.arbev");
        // MatchStart, PlayerJoin, position, position + fire, click, command, MatchEnd.
        ASSERT_EQ(match.events.size(), 8u);
        const fb::Event& position = *match.events[2];
        ASSERT_TRUE(look_of(position));
        EXPECT_FLOAT_EQ(look_of(position)->yaw(), 0.5f);
        EXPECT_FLOAT_EQ(look_of(position)->pitch(), -0.25f);
        EXPECT_FALSE(aim_of(position));
        for (const fb::Event* fired : {match.events[3], match.events[4]}) {
            ASSERT_TRUE(look_of(*fired));
            EXPECT_NEAR(look_of(*fired)->yaw(), 7.0 - 2 * 3.141592653589793, 1e-6);
            ASSERT_TRUE(aim_of(*fired));
            EXPECT_FLOAT_EQ(aim_of(*fired)->x(), 120.5f);
            EXPECT_FLOAT_EQ(aim_of(*fired)->y(), -40.0f);
            EXPECT_TRUE(aim_of(*fired)->relative());
        }
        EXPECT_NE(match.events[3]->body_as_PositionUpdate(), nullptr);
        EXPECT_NE(match.events[4]->body_as_Order(), nullptr);
        const fb::Event& click = *match.events[5];
        EXPECT_FALSE(look_of(click));
        ASSERT_TRUE(aim_of(click));
        EXPECT_FALSE(aim_of(click)->relative()) << "a playfield point unless aim_relative";
        EXPECT_FALSE(look_of(*match.events[6]));
        EXPECT_FALSE(aim_of(*match.events[6]));
    }
}

// Every bad look or aim value is its row's problem, named, in both formats; the good rows
// around it are imported whole in skip mode, so nothing valid is lost.
TEST(Import, BadLookAndAimValuesAreRefusedByName) {
    constexpr const char* kAimHeader =
        "source,game,player,t_seconds,action_kind,yaw,pitch,aim_x,aim_y,aim_relative\n";
    constexpr const char* kAimGood = "s,g,p,1.0,fire,0.5,0.1,10,20,false\n";
    const BadRow bad_rows[] = {
        {"yaw text", TraceFormat::csv, "s,g,p,2.0,fire,left,0,,,\n",
         "yaw 'left' is not a finite number"},
        {"yaw nan", TraceFormat::csv, "s,g,p,2.0,fire,nan,0,,,\n",
         "yaw 'nan' is not a finite number"},
        {"yaw inf", TraceFormat::csv, "s,g,p,2.0,fire,-inf,0,,,\n",
         "yaw '-inf' is not a finite number"},
        {"yaw huge", TraceFormat::csv, "s,g,p,2.0,fire,1e300,0,,,\n",
         "yaw 1e+300 is beyond +-1e6 radians"},
        {"yaw alone", TraceFormat::csv, "s,g,p,2.0,fire,1,,,,\n", "yaw without pitch"},
        {"pitch alone", TraceFormat::csv, "s,g,p,2.0,fire,,1,,,\n", "pitch without yaw"},
        {"pitch in degrees", TraceFormat::csv, "s,g,p,2.0,fire,0,45,,,\n",
         "pitch 45 is outside [-pi/2, pi/2] radians"},
        {"aim huge", TraceFormat::csv, "s,g,p,2.0,fire,,,1e30,0,\n", "aim_x 1e+30 is beyond +-1e7"},
        {"aim y nan", TraceFormat::csv, "s,g,p,2.0,fire,,,1,nan,\n",
         "aim_y 'nan' is not a finite number"},
        {"aim x alone", TraceFormat::csv, "s,g,p,2.0,fire,,,1,,\n", "aim_x without aim_y"},
        {"relative alone", TraceFormat::csv, "s,g,p,2.0,fire,,,,,true\n",
         "aim_relative without aim_x and aim_y"},
        {"relative text", TraceFormat::csv, "s,g,p,2.0,fire,,,1,2,sometimes\n",
         "aim_relative 'sometimes' is not true or false"},
        {"yaw as text json", TraceFormat::jsonl,
         R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","yaw":"0.5","pitch":0})"
         "\n",
         "yaw is string, not a number"},
        {"aim as array json", TraceFormat::jsonl,
         R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","aim_x":[1],"aim_y":2})"
         "\n",
         "aim_x is array, not a number"},
        {"aim huge json", TraceFormat::jsonl,
         R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","aim_x":1,"aim_y":-3e9})"
         "\n",
         "aim_y -3e+09 is beyond +-1e7"},
        {"pitch huge json", TraceFormat::jsonl,
         R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","yaw":0,"pitch":1e308})"
         "\n",
         "pitch 1e+308 is outside [-pi/2, pi/2]"},
        {"relative as number json", TraceFormat::jsonl,
         R"({"source":"s","game":"g","player":"p","t_seconds":2,"action_kind":"c","aim_x":1,"aim_y":2,"aim_relative":1})"
         "\n",
         "aim_relative is number, not true or false"},
    };
    for (const BadRow& bad : bad_rows) {
        SCOPED_TRACE(bad.name);
        for (OnBadRow mode : {OnBadRow::stop, OnBadRow::skip}) {
            TempDir dir;
            const bool csv = bad.format == TraceFormat::csv;
            const char* name = csv ? "in.csv" : "in.jsonl";
            write_text(dir / name, csv ? std::string(kAimHeader) + kAimGood + bad.row + kAimGood
                                       : std::string(kGoodJson) + bad.row + kGoodJson);
            const ImportReport report =
                import_traces(dir / name, dir / "out.arbev", options(bad.format, mode));
            ASSERT_EQ(report.problems.size(), 1u);
            EXPECT_EQ(report.problems[0].line, bad_line(bad));
            EXPECT_NE(report.problems[0].what.find(bad.expected), std::string::npos)
                << report.problems[0].what;
            if (mode == OnBadRow::stop) {
                EXPECT_FALSE(report.written);
                EXPECT_EQ(dir.files(), std::vector<std::string>{name});
                continue;
            }
            ASSERT_TRUE(report.written);
            EXPECT_EQ(report.rows_imported, 2u);
            const MatchFile match = read_match(dir / "out.arbev");
            ASSERT_EQ(match.events.size(), 2u + 3u);  // both good orders, whole
            if (csv) {
                for (const fb::Event* order : {match.events[2], match.events[3]}) {
                    ASSERT_TRUE(look_of(*order));
                    EXPECT_FLOAT_EQ(look_of(*order)->pitch(), 0.1f);
                    ASSERT_TRUE(aim_of(*order));
                    EXPECT_FLOAT_EQ(aim_of(*order)->y(), 20.0f);
                }
            }
        }
    }
}

TEST(Import, FormatsByNameAndExtension) {
    EXPECT_EQ(trace_format_from_name("csv"), TraceFormat::csv);
    EXPECT_EQ(trace_format_from_name("JSONL"), TraceFormat::jsonl);
    EXPECT_EQ(trace_format_from_name("ndjson"), TraceFormat::jsonl);
    EXPECT_EQ(trace_format_from_name("xml"), std::nullopt);
    EXPECT_EQ(trace_format_from_path("a/b.csv"), TraceFormat::csv);
    EXPECT_EQ(trace_format_from_path("b.jsonl"), TraceFormat::jsonl);
    EXPECT_EQ(trace_format_from_path("b.txt"), std::nullopt);
    EXPECT_EQ(trace_format_from_path("b"), std::nullopt);
}

TEST(Import, BadOptionsAreRefused) {
    ImportOptions o = options(TraceFormat::csv);
    o.tick_rate_hz = 0;
    EXPECT_THROW(check_options(o), std::invalid_argument);
    o = options(TraceFormat::csv);
    o.relay_id.clear();
    EXPECT_THROW(check_options(o), std::invalid_argument);
}

}  // namespace
}  // namespace arbiter::tools::test
