// `simulate`: deterministic, ingestible, in relay-time order, batched as asked, with a
// truth file that matches the match; bad options refused before anything is written.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/simulate.hpp"
#include "arbiter/tools/truth.hpp"
#include "support.hpp"

namespace arbiter::tools::test {
namespace {

constexpr const char* kMix =
    "honest=6,speed_hack=1,teleport=1,clock_speedup=1,reconnect_spam=1,metronome=1";

SimulationOptions options(const std::filesystem::path& out, uint64_t seed,
                          double duration_s = 20.0) {
    SimulationOptions o;
    o.out = out;
    o.seed = seed;
    o.duration_s = duration_s;
    o.tick_rate_hz = 20;
    o.players = parse_player_mix(kMix);
    return o;
}

TEST(Simulate, SameSeedSameBytesOtherSeedOtherBytes) {
    TempDir dir;
    const HumanRhythm rhythm = test_rhythm();
    simulate(options(dir / "a.arbev", 42), rhythm);
    simulate(options(dir / "b.arbev", 42), rhythm);
    simulate(options(dir / "c.arbev", 43), rhythm);
    EXPECT_EQ(read_text(dir / "a.arbev"), read_text(dir / "b.arbev"));
    EXPECT_EQ(read_text(dir / "a.truth.json"), read_text(dir / "b.truth.json"));
    EXPECT_NE(read_text(dir / "a.arbev"), read_text(dir / "c.arbev"));
    EXPECT_NE(read_text(dir / "a.truth.json"), read_text(dir / "c.truth.json"));
}

TEST(Simulate, SameSeedSameBytesWithTheBuiltInRhythmToo) {
    TempDir dir;
    simulate(options(dir / "a.arbev", 5), HumanRhythm::builtin());
    simulate(options(dir / "b.arbev", 5), HumanRhythm::builtin());
    EXPECT_EQ(read_text(dir / "a.arbev"), read_text(dir / "b.arbev"));
}

TEST(Simulate, EveryBatchPassesIngestInRelayTimeOrder) {
    TempDir dir;
    SimulationOptions o = options(dir / "m.arbev", 7);
    o.relay_id = "relay-x";
    o.match_id = 99;
    SimulationSummary summary = simulate(o, test_rhythm());
    MatchFile match = read_match(o.out);  // every record through host::ingest_batch
    ASSERT_FALSE(match.events.empty());
    EXPECT_EQ(match.batches.size(), summary.batches);
    EXPECT_EQ(match.events.size(), summary.events);
    EXPECT_EQ(summary.players, 11u);
    EXPECT_EQ(summary.ticks, 400u);

    uint64_t sequence = 0;
    for (const auto* root : match.roots) {
        EXPECT_EQ(root->relay_id()->str(), "relay-x");
        EXPECT_EQ(root->match_id(), 99u);
        EXPECT_EQ(root->sequence(), sequence++);
    }
    // Relay-time order across the whole file, not only within a batch; ticks agree.
    int64_t previous_t = INT64_MIN;
    uint64_t previous_tick = 0;
    for (const fb::Event* e : match.events) {
        EXPECT_GE(e->relay_time_us(), previous_t);
        EXPECT_GE(e->tick(), previous_tick);
        EXPECT_EQ(e->tick(), static_cast<uint64_t>(e->relay_time_us() / 50'000))
            << e->relay_time_us();
        previous_t = e->relay_time_us();
        previous_tick = e->tick();
    }
    EXPECT_EQ(match.events.front()->body_type(), fb::EventBody::MatchStart);
    EXPECT_EQ(match.events.back()->body_type(), fb::EventBody::MatchEnd);
    EXPECT_LT(match.events.back()->relay_time_us(), 20'000'000);

    std::map<fb::EventBody, uint64_t> kinds;
    for (const fb::Event* e : match.events)
        ++kinds[e->body_type()];
    for (const auto& [name, count] : summary.events_by_kind) {
        const char* const* names = fb::EnumNamesEventBody();
        bool found = false;
        for (int i = 1; names[i]; ++i)
            if (name == names[i]) {
                EXPECT_EQ(kinds[static_cast<fb::EventBody>(i)], count) << name;
                found = true;
            }
        EXPECT_TRUE(found) << name;
    }
    EXPECT_EQ(kinds[fb::EventBody::TickBoundary], 400u);
    EXPECT_GT(kinds[fb::EventBody::PositionUpdate], 11u * 300u);
    EXPECT_GT(kinds[fb::EventBody::Order], 0u);
    EXPECT_GT(kinds[fb::EventBody::LatencySample], 0u);
    EXPECT_GT(kinds[fb::EventBody::Stimulus], 0u);
}

TEST(Simulate, TruthFileMatchesTheMatch) {
    TempDir dir;
    SimulationOptions o = options(dir / "m.arbev", 11);
    o.truth = dir / "elsewhere.json";
    SimulationSummary summary = simulate(o, test_rhythm());
    EXPECT_EQ(summary.truth, dir / "elsewhere.json");
    EXPECT_FALSE(std::filesystem::exists(dir / "m.truth.json"));
    Truth truth = read_truth(dir / "elsewhere.json");
    ASSERT_EQ(truth.matches.size(), 1u);
    const TruthMatch& m = truth.matches[0];
    EXPECT_EQ(m.relay_id, "sim-relay");
    EXPECT_EQ(m.match_id, 1u);
    ASSERT_EQ(m.players.size(), 11u);

    std::map<std::string, uint32_t> counts;
    std::map<uint32_t, std::string> accounts;
    for (uint32_t i = 0; i < m.players.size(); ++i) {
        const TruthPlayer& p = m.players[i];
        EXPECT_EQ(p.player, i + 1);
        EXPECT_EQ(p.cheater, p.profile != "honest");
        ++counts[p.profile];
        accounts[p.player] = p.account;
    }
    for (const PlayerMix& mix : parse_player_mix(kMix))
        EXPECT_EQ(counts[mix.profile], mix.count) << mix.profile;

    // The accounts of the joins are the truth's.
    MatchFile match = read_match(o.out);
    std::set<uint32_t> joined;
    for (const fb::Event* e : match.events) {
        if (e->body_type() != fb::EventBody::PlayerJoin) continue;
        EXPECT_EQ(e->body_as_PlayerJoin()->account_id()->str(), accounts[e->player()]);
        joined.insert(e->player());
    }
    EXPECT_EQ(joined.size(), 11u);
}

// Issue 47: every run named its players sim-000001, ... whatever the seed, match or relay,
// so that separate runs merged into one account in the store.
TEST(Simulate, SeparateRunsHaveSeparateAccountsAndTheSameOptionsTheSame) {
    TempDir dir;
    const HumanRhythm rhythm = test_rhythm();
    auto accounts_of = [&](const std::string& name, uint64_t seed, uint64_t match,
                           const std::string& relay, const std::string& named = "") {
        SimulationOptions o = options(dir / (name + ".arbev"), seed, 5.0);
        o.match_id = match;
        o.relay_id = relay;
        o.accounts = named;
        simulate(o, rhythm);
        const Truth truth = read_truth(dir / (name + ".truth.json"));
        std::set<std::string> accounts;
        for (const TruthPlayer& p : truth.matches.at(0).players)
            accounts.insert(p.account);
        return accounts;
    };
    const auto first = accounts_of("first", 42, 1, "sim-relay");
    EXPECT_EQ(first.size(), 11u);
    EXPECT_TRUE(first.count("sim-42-1-000001@sim-relay"));
    EXPECT_TRUE(first.count("sim-42-1-000011@sim-relay"));
    EXPECT_EQ(accounts_of("again", 42, 1, "sim-relay"), first);
    for (const auto& other :
         {accounts_of("seed", 43, 1, "sim-relay"), accounts_of("match", 42, 2, "sim-relay"),
          accounts_of("relay", 42, 1, "eu1")}) {
        std::vector<std::string> common;
        std::set_intersection(first.begin(), first.end(), other.begin(), other.end(),
                              std::back_inserter(common));
        EXPECT_TRUE(common.empty()) << common.front();
    }

    // Named, they are the same people in every run: one person on two relays, say.
    const auto named = accounts_of("named-a", 42, 1, "eu1", "player");
    EXPECT_EQ(accounts_of("named-b", 43, 2, "us1", "player"), named);
    EXPECT_TRUE(named.count("player-000001"));
    EXPECT_TRUE(named.count("player-000011"));
}

TEST(Simulate, BatchesHoldAtMostTheEventsAskedForAndTheSameStream) {
    TempDir dir;
    const HumanRhythm rhythm = test_rhythm();
    SimulationOptions small = options(dir / "small.arbev", 3, 10.0);
    small.batch_events = 7;
    SimulationOptions large = options(dir / "large.arbev", 3, 10.0);
    simulate(small, rhythm);
    simulate(large, rhythm);
    MatchFile a = read_match(small.out), b = read_match(large.out);
    EXPECT_GT(a.batches.size(), b.batches.size());
    for (const auto* root : a.roots)
        EXPECT_LE(root->events()->size(), 7u);
    ASSERT_EQ(a.events.size(), b.events.size());
    for (size_t i = 0; i < a.events.size(); ++i) {
        EXPECT_EQ(a.events[i]->relay_time_us(), b.events[i]->relay_time_us());
        EXPECT_EQ(a.events[i]->player(), b.events[i]->player());
        EXPECT_EQ(a.events[i]->body_type(), b.events[i]->body_type());
    }
}

TEST(Simulate, OnePlayerClaimsTheMatchLength) {
    TempDir dir;
    SimulationOptions o = options(dir / "solo.arbev", 1, 30.0);
    o.players = parse_player_mix("clock_speedup=1");
    simulate(o, HumanRhythm::builtin());
    MatchFile match = read_match(o.out);
    const auto* end = match.events.back()->body_as_MatchEnd();
    ASSERT_NE(end, nullptr);
    ASSERT_TRUE(end->claimed_length_us().has_value());
    EXPECT_GT(static_cast<double>(*end->claimed_length_us()), 30e6 * 1.1);
}

TEST(Simulate, TenThousandPlayers) {
    // The scale of the benchmarks, over a few ticks (the full minute is measured and
    // reported in the README instead).
    TempDir dir;
    SimulationOptions o;
    o.out = dir / "crowd.arbev";
    o.duration_s = 0.5;
    o.players = parse_player_mix("honest=9000,speed_hack=500,metronome=500");
    SimulationSummary summary = simulate(o, HumanRhythm::builtin());
    EXPECT_EQ(summary.players, 10'000u);
    MatchFile match = read_match(o.out);
    std::set<uint32_t> players;
    uint64_t positions = 0;
    for (const fb::Event* e : match.events) {
        if (e->body_type() == fb::EventBody::PlayerJoin) players.insert(e->player());
        if (e->body_type() == fb::EventBody::PositionUpdate) ++positions;
    }
    EXPECT_EQ(players.size(), 10'000u);
    EXPECT_GT(positions, 10'000u * 8u);
    for (const auto* root : match.roots)
        EXPECT_LE(root->events()->size(), 4096u);
    EXPECT_EQ(read_truth(summary.truth).matches.at(0).players.size(), 10'000u);
}

TEST(Simulate, PlayerMixIsCheckedAndExplained) {
    EXPECT_EQ(parse_player_mix("honest=3,fly=0").size(), 2u);
    auto refused = [](const char* text, const char* expected) {
        try {
            parse_player_mix(text);
            ADD_FAILURE() << text << " was accepted";
        } catch (const std::invalid_argument& error) {
            EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
        }
    };
    refused("wallhack=2", "unknown profile 'wallhack'");
    refused("honest", "is not PROFILE=COUNT");
    refused("honest=x", "the count of 'honest'");
    refused("honest=-1", "the count of 'honest'");
    refused("honest=1,,fly=1", "an empty entry");
    refused("honest=1,honest=2", "appears twice");
}

TEST(Simulate, BadOptionsWriteNothing) {
    TempDir dir;
    auto refused = [&](auto change, const char* expected) {
        SimulationOptions o = options(dir / "x.arbev", 1);
        change(o);
        try {
            simulate(o, HumanRhythm::builtin());
            ADD_FAILURE() << expected << ": accepted";
        } catch (const std::invalid_argument& error) {
            EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
        }
    };
    refused([](SimulationOptions& o) { o.duration_s = 0; }, "--duration-s");
    refused([](SimulationOptions& o) { o.duration_s = NAN; }, "--duration-s");
    refused([](SimulationOptions& o) { o.tick_rate_hz = 0; }, "--tick-rate");
    refused([](SimulationOptions& o) { o.batch_events = 0; }, "--batch-events");
    refused([](SimulationOptions& o) { o.players.clear(); }, "no players");
    refused([](SimulationOptions& o) { o.players = {{"honest", 0}}; }, "no players");
    refused([](SimulationOptions& o) { o.relay_id.clear(); }, "--relay");
    EXPECT_TRUE(dir.files().empty());
}

TEST(Simulate, UnwritableOutputLeavesNothing) {
    TempDir dir;
    SimulationOptions o = options(dir / "no-such-folder" / "m.arbev", 1);
    EXPECT_THROW(simulate(o, HumanRhythm::builtin()), std::runtime_error);
    EXPECT_TRUE(dir.files().empty());
}

}  // namespace
}  // namespace arbiter::tools::test
