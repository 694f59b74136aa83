// ../shared/data/human-traces/dev-actions.csv, the real human traces, imported: 35
// players in 15 games, every row an order, each player's orders all there. Skipped, with
// a message, on a machine without ../shared.
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "arbiter/tools/import.hpp"
#include "arbiter/tools/truth.hpp"
#include "support.hpp"

namespace arbiter::tools::test {
namespace {

// The CSV counted independently of the importer: it has no quoted fields.
struct CsvCounts {
    uint64_t rows = 0;
    uint64_t repeats = 0;
    std::set<std::string> games;                      // source,game
    std::map<std::string, uint64_t> rows_per_player;  // source,game,player
};

CsvCounts count(const std::string& text) {
    CsvCounts counts;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        std::vector<std::string> fields;
        std::stringstream parts(line);
        for (std::string field; std::getline(parts, field, ',');)
            fields.push_back(field);
        if (fields.size() != 5) {
            ADD_FAILURE() << "unexpected line: " << line;
            continue;
        }
        ++counts.rows;
        counts.games.insert(fields[0] + "," + fields[1]);
        ++counts.rows_per_player[fields[0] + "," + fields[1] + "," + fields[2]];
        if (fields[4] == "command_repeat") ++counts.repeats;
    }
    return counts;
}

class DevActions : public ::testing::Test {
  protected:
    void SetUp() override {
        csv_ = dev_actions_csv();
        if (csv_.empty())
            GTEST_SKIP() << "../shared/data/human-traces is absent: cannot import "
                         << DEV_ACTIONS_CSV
                         << " (it is there in CI; elsewhere this test has nothing to read)";
    }
    std::filesystem::path csv_;
};

TEST_F(DevActions, ImportsEveryPlayerAndEveryRow) {
    const CsvCounts expected = count(read_text(csv_));
    ASSERT_EQ(expected.rows_per_player.size(), 35u) << "the traces' README says 35 players";

    TempDir dir;
    ImportOptions o;
    o.format = TraceFormat::csv;
    o.tick_rate_hz = 22.4;
    o.labels = dir / "dev.truth.json";
    ImportReport report = import_traces(csv_, dir / "dev.arbev", o);
    ASSERT_TRUE(report.written) << (report.problems.empty()
                                        ? ""
                                        : report.problems[0].str(csv_.string()));
    EXPECT_TRUE(report.problems.empty());
    EXPECT_EQ(report.rows_seen, expected.rows);
    EXPECT_EQ(report.rows_imported, expected.rows);
    EXPECT_EQ(report.players, 35u);
    EXPECT_EQ(report.matches, expected.games.size());
    EXPECT_EQ(report.orders, expected.rows);
    EXPECT_EQ(report.positions, 0u);
    // Every row an order; each match a start, an end, and a join per player.
    EXPECT_EQ(report.events, expected.rows + 2 * expected.games.size() + 35u);

    // Read back through the host's ingest: each player's orders, and the held keys.
    MatchFile match = read_match(dir / "dev.arbev");
    EXPECT_EQ(match.events.size(), report.events);
    std::map<std::pair<uint64_t, uint32_t>, std::string>
        names;  // (match, player) -> source,game,player
    std::map<uint64_t, std::string> games;
    std::map<std::string, uint64_t> orders_per_player;
    uint64_t repeats = 0;
    for (const auto* root : match.roots) {
        for (const fb::Event* e : *root->events()) {
            if (const auto* start = e->body_as_MatchStart())
                games[root->match_id()] = start->game()->str() + "," + start->map()->str();
            if (const auto* join = e->body_as_PlayerJoin())
                names[{root->match_id(), e->player()}] =
                    games[root->match_id()] + "," + join->account_id()->str();
            if (const auto* order = e->body_as_Order()) {
                ++orders_per_player[names[{root->match_id(), e->player()}]];
                if (order->repeat()) ++repeats;
            }
        }
    }
    EXPECT_EQ(orders_per_player, expected.rows_per_player);
    EXPECT_EQ(repeats, expected.repeats);

    Truth labels = read_truth(dir / "dev.truth.json");
    size_t labelled = 0;
    for (const auto& m : labels.matches) {
        for (const auto& p : m.players) {
            EXPECT_EQ(p.profile, "honest");
            EXPECT_FALSE(p.cheater);
            ++labelled;
        }
    }
    EXPECT_EQ(labelled, 35u);
}

TEST_F(DevActions, ShapeTheHonestRhythm) {
    HumanRhythm rhythm = HumanRhythm::from_file(csv_);
    EXPECT_TRUE(rhythm.from_traces());
    // The 30 StarCraft II players; the osu! replays are a rhythm game's.
    EXPECT_NE(rhythm.description().find("30 players"), std::string::npos) << rhythm.description();
    HumanRhythm everyone = HumanRhythm::from_file(csv_, "");
    EXPECT_NE(everyone.description().find("35 players"), std::string::npos)
        << everyone.description();
}

}  // namespace
}  // namespace arbiter::tools::test
