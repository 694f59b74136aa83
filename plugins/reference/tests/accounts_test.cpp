// The accounts plugin (accounts_analyzer.hpp): one account connected in two places at once,
// in two matches, on two relays, or twice in one match. The check moved here from the
// reference analyzer's sessions area when the host began to shard that plugin; its signal,
// score, confidence, evidence and report rules are the ones the reference gave. A test that
// says a signal does not come first shows that it comes without what prevents it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "accounts_analyzer.hpp"
#include "event_script.hpp"
#include "evidence_reader.hpp"

namespace arbiter::reference {
namespace {

using Accounts = arbiter::testing::Harness<AccountsAnalyzer>;
using test::EventScript;
using test::Signals;

constexpr uint32_t kHonest = 1;
constexpr uint32_t kCheat = 5;
constexpr const char* kCode = "sessions.two_places";

build::PlayerJoin join(const std::string& account, uint64_t address = 42, bool reconnect = false) {
    return test::player_join(account, reconnect, "1.4.2", "arena/7", address);
}

// One event of a match, in a batch of its own.
template <class E>
std::vector<uint8_t> event(const std::string& relay, uint64_t match, double t_s, uint32_t player,
                           E body) {
    const int64_t t = test::us(t_s);
    return BatchBuilder(relay, match)
        .add(t, static_cast<uint64_t>(t / test::kTickUs), player, body)
        .finish();
}

Signals two_places(const Signals& signals, uint32_t player) {
    return test::only(signals, player, kCode);
}

// ---------------------------------------------------------------- the plugin

TEST(AccountsPlugin, IsNotShardedAndKeepsItsState) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    const auto& negotiation = harness.negotiation();
    EXPECT_STREQ(negotiation.name, "accounts");
    EXPECT_EQ(negotiation.model_class, ARB_CLASS_VALIDATION);
    EXPECT_FALSE(negotiation.capabilities & ARB_CAP_SHARD_BY_MATCH)
        << "a shard would miss the pairs that straddle two shards";
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_STATE);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_MATCH_END);
    EXPECT_TRUE(negotiation.capabilities & ARB_CAP_RECONFIGURE);

    // The reference plugin, rid of its one check across matches, is sharded as it says.
    test::Harness reference;
    ASSERT_TRUE(reference.ok()) << reference.error();
    EXPECT_TRUE(reference.negotiation().capabilities & ARB_CAP_SHARD_BY_MATCH);
}

TEST(AccountsPlugin, TakesNoConfigKeys) {
    Accounts empty(ConfigValue::table({}));
    EXPECT_TRUE(empty.ok()) << empty.error();

    Accounts misplaced(test::area_config("sessions", {{"max_reconnects", 5}}));
    EXPECT_EQ(misplaced.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(misplaced.error().rfind("sessions: ", 0), 0u) << misplaced.error();

    Accounts unknown(ConfigValue::table({{"window_s", 10.0}}));
    EXPECT_EQ(unknown.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(unknown.error().rfind("window_s: ", 0), 0u) << unknown.error();
}

TEST(AccountsPlugin, ARefusedReconfigureKeepsTheSessions) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory")));
    EXPECT_EQ(harness.reconfigure(ConfigValue::table({{"strict", true}})), ARB_ERR_CONFIG);
    EXPECT_EQ(harness.error().rfind("strict: ", 0), 0u) << harness.error();
    EXPECT_EQ(harness.reconfigure(ConfigValue::table({})), ARB_OK) << harness.error();
    const Signals later = harness.feed(event("relay-b", 2, 5.0, kCheat, join("mallory")));
    EXPECT_EQ(two_places(later, kCheat).size(), 1u) << test::codes(later);
}

// ---------------------------------------------------------------- two places

TEST(TwoPlaces, OneAccountInTwoMatchesOnTwoRelays) {
    // The same match id on two relays: two matches.
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    EXPECT_TRUE(harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory", 7))).empty());
    const Signals signals = harness.feed(event("relay-b", 1, 5.0, kCheat, join("mallory", 9)));
    ASSERT_EQ(signals.size(), 1u) << test::codes(signals);
    const auto& s = signals[0];
    EXPECT_EQ(s.player, kCheat);
    EXPECT_EQ(s.code, kCode);
    EXPECT_EQ(s.score, 1.0);
    EXPECT_EQ(s.confidence, 0.95);
    EXPECT_FALSE(s.tripwire);
    // The evidence the reference analyzer gave, member for member.
    EXPECT_EQ(s.evidence,
              R"({"account_id":"mallory",)"
              R"("join":{"t_us":5000000,"account_id":"mallory","client_version":"1.4.2",)"
              R"("handshake":"arena/7","connection_id":0,"address_hash":9,"reconnect":false},)"
              R"("other":{"relay_id":"relay-a","match_id":1,"player":1,"address_hash":7,)"
              R"("since_t_us":0}})");
    EXPECT_TRUE(test::is_json_object(s.evidence));
}

TEST(TwoPlaces, FromTheSameAddressIsLessSure) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory", 7)));
    const Signals signals = harness.feed(event("relay-a", 2, 5.0, kCheat, join("mallory", 7)));
    ASSERT_EQ(signals.size(), 1u) << test::codes(signals);
    EXPECT_EQ(signals[0].confidence, 0.8);
}

TEST(TwoPlaces, TwiceInOneMatch) {
    EventScript script;
    script.at(0.0, kHonest, join("mallory"));
    script.at(1.0, kCheat, join("mallory"));
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    const Signals signals = test::feed_all(harness, script.batches());
    const Signals cheat = two_places(signals, kCheat);
    ASSERT_EQ(cheat.size(), 1u) << test::codes(signals);
    EXPECT_GE(cheat[0].score * cheat[0].confidence, 0.7);
    EXPECT_TRUE(two_places(signals, kHonest).empty()) << "the first to join is not reported";
    EXPECT_EQ(test::evidence_string(cheat[0].evidence, "relay_id"), "test-relay");
}

TEST(TwoPlaces, APlayerThatRejoinsItsMatchIsInOnePlace) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory", 7)));
    // Without a leave, as when the relay saw the connection drop before it said so.
    EXPECT_TRUE(harness.feed(event("relay-a", 1, 3.0, kHonest, join("mallory", 7, true))).empty());
    EXPECT_TRUE(harness.feed(event("relay-a", 1, 6.0, kHonest, join("mallory", 8, true))).empty());
    // Still live, once: another player of the account is in two places with it, once.
    const Signals later = harness.feed(event("relay-a", 1, 9.0, kCheat, join("mallory")));
    EXPECT_EQ(two_places(later, kCheat).size(), 1u) << test::codes(later);
}

TEST(TwoPlaces, NotAfterALeave) {
    auto run = [](bool leave) {
        Accounts harness;
        if (!harness.ok()) throw std::runtime_error(harness.error());
        harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory")));
        if (leave) harness.feed(event("relay-a", 1, 4.0, kHonest, build::PlayerLeave{}));
        return two_places(harness.feed(event("relay-b", 2, 5.0, kCheat, join("mallory"))), kCheat);
    };
    EXPECT_EQ(run(false).size(), 1u);
    EXPECT_TRUE(run(true).empty());
}

TEST(TwoPlaces, NotAfterTheMatchEnds) {
    // As the reference's test had it: once both matches end, joining elsewhere is one place.
    EventScript first("relay-a", 1), second("relay-b", 2), later("relay-b", 3);
    first.at(0.0, kHonest, join("mallory"));
    second.at(5.0, kCheat, join("mallory"));
    later.at(9.0, kCheat, join("mallory"));
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    test::feed_all(harness, first.batches());
    const Signals signals = two_places(test::feed_all(harness, second.batches()), kCheat);
    ASSERT_EQ(signals.size(), 1u);
    EXPECT_EQ(test::evidence_string(signals[0].evidence, "relay_id"), "relay-a");
    harness.end_match("relay-a", 1);
    // One match still live: the later join is in two places with it.
    Accounts unended;
    ASSERT_TRUE(unended.ok()) << unended.error();
    test::feed_all(unended, first.batches());
    test::feed_all(unended, second.batches());
    unended.end_match("relay-a", 1);
    EXPECT_EQ(two_places(test::feed_all(unended, later.batches()), kCheat).size(), 1u);

    harness.end_match("relay-b", 2);
    EXPECT_TRUE(test::feed_all(harness, later.batches()).empty());
}

// A leave in the lost batches: the player's session would stay live, and the account's
// next join would look like one account in two places.
TEST(TwoPlaces, NotAfterInputLostHidAtLeave) {
    auto run = [](bool tell) {
        Accounts harness;
        if (!harness.ok()) throw std::runtime_error(harness.error());
        Signals out;
        auto keep = [&](const std::vector<uint8_t>& batch) {
            for (auto& s : harness.feed(batch))
                out.push_back(std::move(s));
        };
        const build::PlayerJoin dave = join("dave", 7);
        keep(BatchBuilder("relay", 1, 0).add(1'000'000, 20, 1, dave).finish());
        // Batch 1, lost: player 1 leaves. Batch 2: the same account joins as player 2.
        if (tell)
            keep(BatchBuilder("relay", 1, 1)
                     .add(9'000'000, 180, 0,
                          build::InputLost{.first_sequence = 1,
                                           .last_sequence = 1,
                                           .last_heard_relay_us = 1'000'000,
                                           .next_heard_relay_us = 9'000'000})
                     .finish());
        keep(BatchBuilder("relay", 1, 2).add(9'000'000, 180, 2, dave).finish());
        return two_places(out, 2);
    };
    EXPECT_FALSE(run(false).empty()) << "without being told, the live session of player 1 stays";
    EXPECT_TRUE(run(true).empty());
}

TEST(TwoPlaces, AJoinWithoutAnAccountIsNowhere) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("")));
    EXPECT_TRUE(harness.feed(event("relay-b", 2, 5.0, kCheat, join(""))).empty());
    // The same two joins with an account do make a pair.
    harness.feed(event("relay-a", 1, 6.0, 2, join("mallory")));
    EXPECT_EQ(harness.feed(event("relay-b", 2, 7.0, 6, join("mallory"))).size(), 1u);
}

// ---------------------------------------------------------------- reports

// The reference's step rule, per player: a check reports again only when its weighted score
// rises by a step (0.05). Two places is 0.8 from the same address, 0.95 from another.
TEST(Reports, APlayerIsReportedAgainOnlyWhenItsScoreRises) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory", 7)));
    const Signals same = harness.feed(event("relay-b", 2, 1.0, kCheat, join("mallory", 7)));
    ASSERT_EQ(same.size(), 1u);
    EXPECT_EQ(same[0].confidence, 0.8);
    // Rejoins from another address: a rise of 0.15, reported.
    const Signals other = harness.feed(event("relay-b", 2, 2.0, kCheat, join("mallory", 9, true)));
    ASSERT_EQ(other.size(), 1u);
    EXPECT_EQ(other[0].confidence, 0.95);
    // Back at the first address, and again at the second: no rise, nothing new.
    EXPECT_TRUE(harness.feed(event("relay-b", 2, 3.0, kCheat, join("mallory", 7, true))).empty());
    EXPECT_TRUE(harness.feed(event("relay-b", 2, 4.0, kCheat, join("mallory", 9, true))).empty());
    // A player's reports go when it leaves: back, it is reported afresh.
    harness.feed(event("relay-b", 2, 5.0, kCheat, build::PlayerLeave{}));
    EXPECT_EQ(harness.feed(event("relay-b", 2, 6.0, kCheat, join("mallory", 9))).size(), 1u);
}

// Two places scores 0.8 or 0.95, so a rise under a step (a held one) comes only from a state
// saved by a build that scores otherwise. This is its blob: the account live in relay-b's
// match 2 as player 5, which reported 0.8 and holds a rise to 0.82 (the layout of
// AccountsAnalyzer::save_state).
std::vector<uint8_t> blob_with_a_held_rise() {
    StateWriter out("ACC1", 1);
    out.put<uint64_t>(1);  // matches
    out.put_string("relay-b");
    out.put<uint64_t>(2);
    out.put<uint64_t>(1);  // accounts
    out.put<uint32_t>(kCheat);
    out.put_string("mallory");
    out.put<uint64_t>(1);  // reports
    out.put<uint32_t>(kCheat);
    out.put<uint64_t>(1);  // reported
    out.put_string(kCode);
    out.put<double>(0.8);
    out.put<uint64_t>(1);  // held
    out.put_string(kCode);
    out.put<double>(1.0);
    out.put<double>(0.82);
    out.put_string(R"({"held":true})");
    out.put<uint64_t>(1);  // live sessions
    out.put_string("mallory");
    out.put<uint64_t>(1);
    out.put_string("relay-b");
    out.put<uint64_t>(2);
    out.put<uint32_t>(kCheat);
    out.put<uint64_t>(7);
    out.put<int64_t>(1'000'000);
    return out.finish();
}

void expect_the_held_rise(const Signals& signals) {
    ASSERT_EQ(signals.size(), 1u) << test::codes(signals);
    EXPECT_EQ(signals[0].player, kCheat);
    EXPECT_EQ(signals[0].code, kCode);
    EXPECT_EQ(signals[0].score, 1.0);
    EXPECT_EQ(signals[0].confidence, 0.82);
    EXPECT_EQ(signals[0].evidence, R"({"held":true})");
}

TEST(Reports, AHeldRiseIsReportedWhenThePlayerLeaves) {
    Accounts harness;
    ASSERT_EQ(harness.restore_state(blob_with_a_held_rise()), ARB_OK) << harness.error();
    expect_the_held_rise(harness.feed(event("relay-b", 2, 9.0, kCheat, build::PlayerLeave{})));
    // Reported once: the match's end has nothing left to say.
    EXPECT_TRUE(harness.end_match("relay-b", 2).empty());
}

TEST(Reports, AHeldRiseIsReportedAtTheMatchEnd) {
    Accounts harness;
    ASSERT_EQ(harness.restore_state(blob_with_a_held_rise()), ARB_OK) << harness.error();
    // Another match's end is not this one's.
    EXPECT_TRUE(harness.end_match("relay-a", 2).empty());
    expect_the_held_rise(harness.end_match("relay-b", 2));
    // And the session ended with it.
    EXPECT_TRUE(harness.feed(event("relay-c", 3, 10.0, 9, join("mallory"))).empty());
}

// ---------------------------------------------------------------- state

// One account in five matches on four relays, and another in two, cut after the first
// joins; the rest (rejoins, a leave, later joins, two matches' ends) after the cut.
struct Story {
    std::vector<std::vector<uint8_t>> before, after;
};

Story story() {
    Story s;
    s.before = {event("relay-a", 1, 0.0, kHonest, join("mallory", 7)),
                event("relay-b", 2, 1.0, kCheat, join("mallory", 7)),
                event("relay-b", 2, 1.5, 6, join("trudy", 3))};
    // Player 5 reported 0.8 before the cut: again at 0.8 is no rise, at 0.95 one.
    s.after = {event("relay-b", 2, 1.8, kCheat, join("mallory", 7, true)),
               event("relay-b", 2, 2.0, kCheat, join("mallory", 9, true)),
               event("relay-c", 3, 3.0, 9, join("mallory", 11)),
               event("relay-a", 1, 4.0, kHonest, build::PlayerLeave{}),
               event("relay-c", 4, 5.0, 2, join("trudy", 3)),
               event("relay-d", 5, 6.0, 4, join("mallory", 12))};
    return s;
}

Signals run_after(Accounts& harness, const Story& s) {
    Signals out = test::feed_all(harness, s.after);
    for (const auto& [relay, match] : {std::pair<std::string, uint64_t>{"relay-b", 2},
                                       std::pair<std::string, uint64_t>{"relay-c", 3}}) {
        for (auto& signal : harness.end_match(relay, match))
            out.push_back(std::move(signal));
    }
    return out;
}

TEST(State, TheRestoredInstanceReportsWhatTheUninterruptedOneDoes) {
    const Story s = story();
    Accounts uninterrupted;
    ASSERT_TRUE(uninterrupted.ok()) << uninterrupted.error();
    test::feed_all(uninterrupted, s.before);
    const Signals expected = run_after(uninterrupted, s);

    Accounts before;
    ASSERT_TRUE(before.ok()) << before.error();
    test::feed_all(before, s.before);
    const auto blob = before.save_state();
    ASSERT_TRUE(blob.has_value()) << before.error();
    Accounts restored;
    ASSERT_EQ(restored.restore_state(*blob), ARB_OK) << restored.error();
    EXPECT_EQ(restored.save_state(), blob) << "the same state, the same bytes";
    const Signals actual = run_after(restored, s);
    EXPECT_EQ(test::codes(actual), test::codes(expected));

    // The state is what carries it: a fresh instance misses the sessions live at the cut.
    ASSERT_FALSE(expected.empty());
    Accounts fresh;
    ASSERT_TRUE(fresh.ok()) << fresh.error();
    EXPECT_NE(test::codes(run_after(fresh, s)), test::codes(expected));
}

TEST(State, EmptyStateRoundTrips) {
    Accounts first;
    const auto blob = first.save_state();
    ASSERT_TRUE(blob.has_value()) << first.error();
    Accounts second;
    EXPECT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    EXPECT_EQ(second.save_state(), blob);
}

TEST(State, ABlobNotWholeAndOursChangesNothing) {
    Accounts harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    harness.feed(event("relay-a", 1, 0.0, kHonest, join("mallory")));
    const auto kept = harness.save_state();
    ASSERT_TRUE(kept.has_value()) << harness.error();

    // The reference plugin's blob: another tag.
    test::Harness reference;
    const auto theirs = reference.save_state();
    ASSERT_TRUE(theirs.has_value()) << reference.error();
    EXPECT_EQ(harness.restore_state(*theirs), ARB_ERR_STATE);
    EXPECT_NE(harness.error().find("REF1"), std::string::npos) << harness.error();

    // Damaged: one byte of the payload changed.
    auto damaged = blob_with_a_held_rise();
    damaged.back() ^= 0x01;
    EXPECT_EQ(harness.restore_state(damaged), ARB_ERR_STATE);

    // Sealed, but with more than the reader takes: the layouts disagree.
    StateWriter longer("ACC1", 1);
    longer.put<uint64_t>(0);  // matches
    longer.put<uint64_t>(0);  // live sessions
    longer.put<uint8_t>(0);
    EXPECT_EQ(harness.restore_state(longer.finish()), ARB_ERR_STATE);

    // A version this build does not know.
    StateWriter newer("ACC1", 2);
    newer.put<uint64_t>(0);
    newer.put<uint64_t>(0);
    EXPECT_EQ(harness.restore_state(newer.finish()), ARB_ERR_STATE);

    EXPECT_EQ(harness.save_state(), kept);
    const Signals later = harness.feed(event("relay-b", 2, 5.0, kCheat, join("mallory")));
    EXPECT_EQ(two_places(later, kCheat).size(), 1u) << test::codes(later);
}

}  // namespace
}  // namespace arbiter::reference
