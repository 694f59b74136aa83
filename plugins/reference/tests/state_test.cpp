// Hot reload: the state saved mid-match and restored into a new instance carries on exactly
// as if nothing happened (the signals held back and the movement checks' runs and stretches
// included), version 1 to 3 blobs are still read, and a blob that is not whole and ours is
// refused without harm.
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/state.hpp>

#include "evidence_reader.hpp"
#include "match_script.hpp"

namespace arbiter::reference {
namespace {

using test::Batches;
using test::Harness;
using test::MatchScript;
using test::Mover;
using test::Signals;

constexpr uint32_t kHacker = 5;
constexpr uint32_t kLagger = 3;
constexpr uint32_t kJumper = 6;

// 16 s of play, cut at 8 s: a speed hacker who speeds up again after the cut (so that the
// second half reports only the rise), an honest runner whose lag spike straddles the cut,
// and a 60 m jump soon after it (seen only by a window reaching back before the cut).
MatchScript reload_match() {
    MatchScript script;
    script.add(kHacker, Mover().run(10.0, 4.0).run(26.0, 5.0).run(32.0, 4.0).run(10.0, 3.0));
    script.add(kLagger, test::lag_spike(Mover({0, 50, 0}).run(19.5, 16.0).updates(), 7.6, 0.8));
    script.latencies(kLagger, 0.5, 16.0, 60'000).latency(kLagger, 8.45, 850'000);
    script.add(kJumper, Mover({0, -50, 0}).run(5.0, 8.1).jump({0, 60, 0}).run(5.0, 7.8));
    return script;
}

constexpr size_t kCut = 32;  // batches of 0.25 s: the cut is at 8 s

Batches first_half(const Batches& all) {
    return {all.begin(), all.begin() + kCut};
}
Batches second_half(const Batches& all) {
    return {all.begin() + kCut, all.end()};
}

using Key = std::tuple<std::string, uint32_t, double, double, std::string, int64_t>;

std::vector<Key> keys(const Signals& signals) {
    std::vector<Key> out;
    for (const auto& s : signals)
        out.emplace_back(s.code, s.player, s.score, s.confidence, s.evidence, s.relay_time_us);
    return out;
}

// The same without the relay time, which is the harness's clock: an instance that has seen
// no batch yet reports at 0.
std::vector<Key> content(const Signals& signals) {
    std::vector<Key> out = keys(signals);
    for (Key& key : out)
        std::get<5>(key) = 0;
    return out;
}

// What an uninterrupted instance reports over the second half, then at the end of the match.
Signals uninterrupted_second_half(const Batches& all) {
    Harness harness;
    test::feed_all(harness, first_half(all));
    Signals out = test::feed_all(harness, second_half(all));
    const Signals at_end = harness.end_match("test-relay", 1);
    out.insert(out.end(), at_end.begin(), at_end.end());
    return out;
}

std::vector<uint8_t> saved_after_first_half(const Batches& all) {
    Harness harness;
    test::feed_all(harness, first_half(all));
    auto blob = harness.save_state();
    if (!blob) throw std::runtime_error("save_state failed: " + harness.error());
    return *blob;
}

uint32_t version_of(const std::vector<uint8_t>& blob) {
    uint32_t version = 0;
    if (blob.size() >= 12) std::memcpy(&version, blob.data() + 8, sizeof version);
    return version;
}

TEST(Reload, SecondHalfReportsWhatAnUninterruptedRunDoes) {
    const Batches all = reload_match().batches();
    ASSERT_GT(all.size(), kCut + 8);
    const Signals expected = uninterrupted_second_half(all);
    // Guards against a vacuous comparison: the second half has something to report, and
    // it is not what a fresh instance would report (the state matters).
    ASSERT_FALSE(test::only(expected, kHacker, "movement.speed").empty());
    ASSERT_FALSE(test::only(expected, kJumper, "movement.teleport").empty());
    {
        Harness fresh;
        EXPECT_NE(keys(test::feed_all(fresh, second_half(all))), keys(expected));
    }

    Harness restored;
    ASSERT_EQ(restored.restore_state(saved_after_first_half(all)), ARB_OK) << restored.error();
    Signals actual = test::feed_all(restored, second_half(all));
    const Signals at_end = restored.end_match("test-relay", 1);
    // The end of the match reports the hacker's held rise: it is part of the comparison.
    ASSERT_FALSE(test::only(at_end, kHacker, "movement.speed").empty());
    actual.insert(actual.end(), at_end.begin(), at_end.end());
    EXPECT_EQ(keys(actual), keys(expected));
    EXPECT_TRUE(test::only(actual, kLagger, "movement.speed").empty());
}

TEST(Reload, HeldSignalsSurviveIt) {
    // At the cut the hacker has a rise held (26 m/s after the reported 25.x): ending the
    // match right after restoring reports it as the uninterrupted instance would.
    const Batches all = reload_match().batches();
    const auto blob = saved_after_first_half(all);
    EXPECT_EQ(version_of(blob), 6u);

    Harness uninterrupted;
    test::feed_all(uninterrupted, first_half(all));
    const Signals expected = uninterrupted.end_match("test-relay", 1);
    ASSERT_FALSE(test::only(expected, kHacker, "movement.speed").empty());

    Harness restored;
    ASSERT_EQ(restored.restore_state(blob), ARB_OK) << restored.error();
    const Signals actual = restored.end_match("test-relay", 1);
    EXPECT_EQ(content(actual), content(expected));
    // Only what was held, one rise of each check (the hacker's speed, and its sustained
    // speed, whose mean rises with every window at 26 m/s): the rises already reported are
    // not reported again.
    ASSERT_EQ(actual.size(), 2u);
    EXPECT_EQ(test::only(actual, kHacker, "movement.speed").size(), 1u);
    EXPECT_EQ(test::only(actual, kHacker, "movement.sustained_speed").size(), 1u);
}

TEST(Reload, BlobIsStableAndRoundTrips) {
    const Batches all = reload_match().batches();
    const auto blob = saved_after_first_half(all);
    EXPECT_EQ(saved_after_first_half(all), blob);  // the same state, the same bytes

    Harness restored;
    ASSERT_EQ(restored.restore_state(blob), ARB_OK) << restored.error();
    EXPECT_EQ(restored.save_state(), blob);
}

TEST(Reload, EmptyStateRoundTrips) {
    Harness first;
    const auto blob = first.save_state();
    ASSERT_TRUE(blob.has_value()) << first.error();
    Harness second;
    EXPECT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    EXPECT_EQ(second.save_state(), blob);
}

// ---------------------------------------------------------------- version 1 blobs

// A player as a version 1 blob held it: track, round trips, the scores reported.
struct V1Player {
    uint32_t id = 0;
    std::vector<Sample> samples;
    std::vector<RttSample> rtts;
    std::vector<std::pair<std::string, double>> reported;
};

// What every version writes first for a player: its id, movement samples, round trips
// and the signals already reported.
void write_player_core(StateWriter& out, const V1Player& p) {
    out.put<uint32_t>(p.id);
    out.put<uint64_t>(p.samples.size());
    for (const Sample& s : p.samples) {
        out.put<int64_t>(s.t_us);
        out.put<double>(s.position.x);
        out.put<double>(s.position.y);
        out.put<double>(s.position.z);
    }
    out.put<uint64_t>(p.rtts.size());
    for (const RttSample& r : p.rtts) {
        out.put<int64_t>(r.t_us);
        out.put<uint32_t>(r.rtt_us);
    }
    out.put<uint64_t>(p.reported.size());
    for (const auto& [code, score] : p.reported) {
        out.put_string(code);
        out.put<double>(score);
    }
}

// One match's players in the version 1 layout; with held_counts, in the version 2 layout
// (each player followed by a count of held signals, here none).
void write_match(StateWriter& out, const std::string& relay_id, uint64_t match_id,
                 const std::vector<V1Player>& players, bool held_counts) {
    out.put_string(relay_id);
    out.put<uint64_t>(match_id);
    out.put<uint64_t>(players.size());
    for (const V1Player& p : players) {
        write_player_core(out, p);
        if (held_counts) out.put<uint64_t>(0);
    }
}

// Two players walking at 5 m/s along x from 0 to 2 s (player 2 at y = 10); player 1 has
// had movement.speed reported at `reported_speed` (none if 0).
std::vector<V1Player> walkers(double reported_speed) {
    V1Player one{1, {}, {}, {}}, two{2, {}, {}, {}};
    for (int64_t t = 0; t <= test::us(2.0); t += test::kTickUs) {
        const double x = 5.0 * static_cast<double>(t) / 1e6;
        one.samples.push_back({t, {x, 0, 0}});
        two.samples.push_back({t, {x, 10, 0}});
    }
    one.rtts = {{test::us(1.0), 60'000}, {test::us(2.0), 60'000}};
    if (reported_speed > 0) one.reported = {{"movement.speed", reported_speed}};
    return {one, two};
}

std::vector<uint8_t> blob_of(uint32_t version, const std::vector<V1Player>& players,
                             bool held_counts) {
    StateWriter out("REF1", version);
    out.put<uint64_t>(1);
    write_match(out, "relay", 9, players, held_counts);
    return out.finish();
}

// After the blob: player 1 at 32 m/s from x = 10 on, player 2 250 m from where it was.
MatchScript after_the_walk() {
    auto drop_first = [](const Mover& m) {
        return std::vector<test::Update>(m.updates().begin() + 1, m.updates().end());
    };
    MatchScript script("relay", 9);
    script.add(1, drop_first(Mover({10, 0, 0}, 2.0).run(32.0, 5.0)));
    script.add(2, drop_first(Mover({10, 10, 0}, 2.0).jump({250, 0, 0}).run(5.0, 2.0)));
    return script;
}

TEST(Version1Blob, IsRead) {
    Harness harness;
    ASSERT_EQ(harness.restore_state(blob_of(1, walkers(0.85), false)), ARB_OK) << harness.error();
    const Signals during = test::feed_all(harness, after_the_walk().batches());

    // The track was read: player 2's first update is 250 m from the blob's last position.
    const Signals teleport = test::only(during, 2, "movement.teleport");
    ASSERT_FALSE(teleport.empty());
    EXPECT_EQ(test::evidence_string(teleport.front().evidence, "kind"), "single_update");
    EXPECT_NE(teleport.front().evidence.find("\"from\":{\"t_us\":2000000,\"x\":10,"),
              std::string::npos)
        << teleport.front().evidence;

    // So was what was reported: 32 m/s scores 0.897, less than a step over 0.85, so it is
    // held, and reported only when the match ends.
    EXPECT_TRUE(test::only(during, 1, "movement.speed").empty());
    const auto blob = harness.save_state();
    ASSERT_TRUE(blob.has_value()) << harness.error();
    EXPECT_EQ(version_of(*blob), 6u);  // written back as version 6, with the held signal
    const Signals at_end = test::only(harness.end_match("relay", 9), 1, "movement.speed");
    ASSERT_EQ(at_end.size(), 1u);
    EXPECT_NEAR(at_end.front().score, excess_score(32.0, 22.0), 1e-3);

    Harness again;
    ASSERT_EQ(again.restore_state(*blob), ARB_OK) << again.error();
    EXPECT_EQ(content(test::only(again.end_match("relay", 9), 1, "movement.speed")),
              content(at_end));
}

TEST(Version1Blob, WithoutTheReportedScoreReportsAtOnce) {
    // The counterpart of the test above: no score reported before, so 32 m/s is reported
    // during the match.
    Harness harness;
    ASSERT_EQ(harness.restore_state(blob_of(1, walkers(0.0), false)), ARB_OK) << harness.error();
    const Signals during = test::feed_all(harness, after_the_walk().batches());
    EXPECT_FALSE(test::only(during, 1, "movement.speed").empty());
}

TEST(Version1Blob, ReadsLikeTheSameVersion2Blob) {
    // A version 1 blob and the version 2 blob with the same state and no held signals lead
    // to the same signals.
    Harness v1, v2;
    ASSERT_EQ(v1.restore_state(blob_of(1, walkers(0.85), false)), ARB_OK) << v1.error();
    ASSERT_EQ(v2.restore_state(blob_of(2, walkers(0.85), true)), ARB_OK) << v2.error();
    EXPECT_EQ(v1.save_state(), v2.save_state());
    EXPECT_EQ(keys(test::feed_all(v1, after_the_walk().batches())),
              keys(test::feed_all(v2, after_the_walk().batches())));
    EXPECT_EQ(keys(v1.end_match("relay", 9)), keys(v2.end_match("relay", 9)));
}

// ---------------------------------------------------------------- version 3 blobs

// The same players in the version 3 layout: each with none of the other areas' state, the
// match with no start seen, no account live (or, with `live`, account-1 live as player 1,
// as a build before the accounts plugin wrote it).
// With version 4, each player's movement run and stretches follow, none under way.
std::vector<uint8_t> v3_blob(const std::vector<V1Player>& players, uint32_t version = 3,
                             bool live = false) {
    StateWriter out("REF1", version);
    auto no_sample = [&out] {
        out.put<int64_t>(0);
        for (int i = 0; i < 3; ++i)
            out.put<double>(0.0);
    };
    out.put<uint64_t>(1);
    out.put_string("relay");
    out.put<uint64_t>(9);
    out.put<uint64_t>(players.size());
    for (const V1Player& p : players) {
        write_player_core(out, p);
        out.put<uint64_t>(0);  // held
        out.put<int64_t>(-1);  // arrivals: last heard
        out.put<uint64_t>(0);  // silences
        out.put<uint64_t>(0);  // shots
        out.put<uint64_t>(0);  // kills
        out.put<int64_t>(0);   // hits without line of sight
        out.put<int64_t>(0);   // hits on dead targets
        out.put<uint64_t>(0);  // acquisitions
        out.put<uint64_t>(0);  // experience
        out.put<uint64_t>(0);  // hits taken
        out.put<uint64_t>(0);  // damage taken
        out.put<uint64_t>(0);  // resources
        out.put<int64_t>(0);   // spends not spent
        out.put<int64_t>(0);   // orders ahead
        out.put<uint64_t>(0);  // clock samples
        if (version < 4) continue;
        out.put<uint8_t>(0);  // sustained run: not active, its samples and figures
        for (int i = 0; i < 3; ++i)
            no_sample();
        for (int i = 0; i < 3; ++i)
            out.put<double>(0.0);
        out.put<int64_t>(0);
        out.put<uint8_t>(0);  // airborne stretch: not active
        no_sample();
        no_sample();
        out.put<int64_t>(0);
        out.put<int64_t>(0);
        out.put<int64_t>(0);  // updates under the terrain, since
        no_sample();
    }
    out.put<double>(0.0);  // tick_s
    out.put<int64_t>(-1);  // started_unix_us
    out.put<uint8_t>(0);   // damage reported
    out.put<uint64_t>(0);  // reconnects
    out.put<uint64_t>(0);  // accounts
    if (!live) {
        out.put<uint64_t>(0);  // live sessions
        return out.finish();
    }
    out.put<uint64_t>(1);  // live sessions: one account
    out.put_string("account-1");
    out.put<uint64_t>(1);  // its one session
    out.put_string("relay");
    out.put<uint64_t>(9);
    out.put<uint32_t>(1);
    out.put<uint64_t>(42);
    out.put<int64_t>(1'000'000);
    return out.finish();
}

TEST(Version3Blob, ReadsLikeTheSameVersion2Blob) {
    // Version 3 added state the version 2 blob cannot have: with all of it empty, both lead
    // to the same state (written back as version 6) and the same signals.
    Harness v2, v3;
    ASSERT_EQ(v2.restore_state(blob_of(2, walkers(0.85), true)), ARB_OK) << v2.error();
    ASSERT_EQ(v3.restore_state(v3_blob(walkers(0.85))), ARB_OK) << v3.error();
    const auto saved = v3.save_state();
    ASSERT_TRUE(saved.has_value()) << v3.error();
    EXPECT_EQ(version_of(*saved), 6u);
    EXPECT_EQ(v2.save_state(), saved);
    const Signals during = test::feed_all(v3, after_the_walk().batches());
    EXPECT_FALSE(test::only(during, 2, "movement.teleport").empty());  // the track was read
    EXPECT_EQ(keys(test::feed_all(v2, after_the_walk().batches())), keys(during));
    EXPECT_EQ(keys(v2.end_match("relay", 9)), keys(v3.end_match("relay", 9)));
}

TEST(Version4Blob, ReadsLikeTheSameVersion3Blob) {
    // Version 5 changed how samples are written, not what is kept: the version 4 blob and
    // the version 3 blob of the same state lead to the same state and the same signals.
    Harness v3, v4;
    ASSERT_EQ(v3.restore_state(v3_blob(walkers(0.85))), ARB_OK) << v3.error();
    ASSERT_EQ(v4.restore_state(v3_blob(walkers(0.85), 4)), ARB_OK) << v4.error();
    const auto saved = v4.save_state();
    ASSERT_TRUE(saved.has_value()) << v4.error();
    EXPECT_EQ(version_of(*saved), 6u);
    EXPECT_EQ(v3.save_state(), saved);
    const Signals during = test::feed_all(v4, after_the_walk().batches());
    EXPECT_FALSE(test::only(during, 2, "movement.teleport").empty());  // the track was read
    EXPECT_EQ(keys(test::feed_all(v3, after_the_walk().batches())), keys(during));
    EXPECT_EQ(keys(v3.end_match("relay", 9)), keys(v4.end_match("relay", 9)));
}

TEST(Version5Blob, SamplesComeBackAsTheyWereInEitherEncoding) {
    // Positions that are floats (as every position from a relay is) are written compactly;
    // others (0.1 m steps) whole. Either way a restored plugin writes the same blob again
    // and reports what the plugin it was saved from reports.
    for (const double step : {0.25, 0.1}) {
        std::vector<V1Player> players = walkers(0.85);
        for (V1Player& p : players)
            for (size_t i = 0; i < p.samples.size(); ++i)
                p.samples[i].position.x = step * static_cast<double>(i);
        Harness first;
        ASSERT_EQ(first.restore_state(blob_of(1, players, false)), ARB_OK) << first.error();
        const auto saved = first.save_state();
        ASSERT_TRUE(saved.has_value()) << first.error();
        Harness second;
        ASSERT_EQ(second.restore_state(*saved), ARB_OK) << second.error();
        EXPECT_EQ(second.save_state(), saved) << step;
        const Signals a = test::feed_all(first, after_the_walk().batches());
        const Signals b = test::feed_all(second, after_the_walk().batches());
        EXPECT_FALSE(test::only(a, 2, "movement.teleport").empty()) << step;
        EXPECT_EQ(keys(a), keys(b)) << step;
        ASSERT_FALSE(test::only(a, 2, "movement.teleport").empty());
        EXPECT_EQ(test::only(a, 2, "movement.teleport").front().evidence,
                  test::only(b, 2, "movement.teleport").front().evidence)
            << step;
    }
}

TEST(Version3Blob, PlayersStartWithNoMovementRunOrStretch) {
    // A version 3 blob knows no sustained run: a speed hacker mid-run when it was saved
    // starts a new run after the restore, as a player who just joined would.
    Harness restored;
    ASSERT_EQ(restored.restore_state(v3_blob(walkers(0.0))), ARB_OK) << restored.error();
    auto drop_first = [](const Mover& m) {
        return std::vector<test::Update>(m.updates().begin() + 1, m.updates().end());
    };
    MatchScript script("relay", 9);
    script.add(1, drop_first(Mover({10, 0, 0}, 2.0).run(30.0, 5.0)));
    const Signals during = test::feed_all(restored, script.batches());
    const Signals sustained = test::only(during, 1, "movement.sustained_speed");
    ASSERT_FALSE(sustained.empty());
    // The run starts at the first window over the limit after 2 s (2.7 s), not before it.
    EXPECT_NE(sustained.front().evidence.find("\"first_over\":{\"t_us\":2700000,"),
              std::string::npos)
        << sustained.front().evidence;
}

// ---------------------------------------------------------------- version 4: movement

constexpr uint32_t kFlyer = 8;
constexpr uint32_t kDiver = 9;
constexpr uint32_t kRunner = 10;

// 16 s cut at 8 s: a flyer off the ground from 5 s to 13 s, a no-clipper sinking under the
// terrain from 7.6 s (more than 1 m under from 7.9 s), a speed hacker at 30 m/s from 6 s on,
// and an honest hopper whose lag spike straddles the cut. Every run and stretch is under way
// at the cut, and each check's score still rising.
MatchScript ground_match() {
    MatchScript script;
    Mover flyer({0, 100, 0});
    flyer.report_ground().run(10, 5).fly(10, 12, 8).land().run(10, 3);
    script.add(kFlyer, flyer);
    Mover diver({0, 200, 5.0});
    diver.report_ground(5.0).run(8, 7.6).fly(8, -3, 4).land().run(8, 4.4);
    script.add(kDiver, diver);
    script.add(kHacker, Mover({0, 300, 0}).run(10, 6).run(30, 10));
    Mover hopper({0, 400, 0});
    hopper.report_ground();
    for (int i = 0; i < 8; ++i)
        hopper.run(15, 1.0).hop(15);
    script.add(kRunner, test::lag_spike(hopper.updates(), 7.5, 0.8));
    return script;
}

std::vector<uint8_t> ground_blob() {
    Harness harness;
    test::feed_all(harness, first_half(ground_match().batches()));
    auto blob = harness.save_state();
    if (!blob) throw std::runtime_error("save_state failed: " + harness.error());
    return *blob;
}

// The blob with another version in its header (the checksum covers the payload only).
std::vector<uint8_t> marked(std::vector<uint8_t> blob, uint32_t version) {
    std::memcpy(blob.data() + 8, &version, sizeof version);
    return blob;
}

TEST(Reload, MovementRunsAndStretchesSurviveIt) {
    const Batches all = ground_match().batches();
    const Signals expected = uninterrupted_second_half(all);
    // What the second half reports depends on what was under way at the cut.
    for (const auto& [player, code] :
         std::vector<std::pair<uint32_t, std::string>>{{kFlyer, "movement.airborne"},
                                                       {kDiver, "movement.below_terrain"},
                                                       {kHacker, "movement.sustained_speed"}})
        ASSERT_FALSE(test::only(expected, player, code).empty()) << code;
    EXPECT_TRUE(test::only(expected, kRunner, "movement.airborne").empty());
    {
        Harness fresh;
        Signals from_scratch = test::feed_all(fresh, second_half(all));
        const Signals at_end = fresh.end_match("test-relay", 1);
        from_scratch.insert(from_scratch.end(), at_end.begin(), at_end.end());
        EXPECT_NE(keys(from_scratch), keys(expected));
    }

    Harness restored;
    ASSERT_EQ(restored.restore_state(ground_blob()), ARB_OK) << restored.error();
    EXPECT_EQ(version_of(*restored.save_state()), 6u);
    Signals actual = test::feed_all(restored, second_half(all));
    const Signals at_end = restored.end_match("test-relay", 1);
    actual.insert(actual.end(), at_end.begin(), at_end.end());
    EXPECT_EQ(keys(actual), keys(expected));
    // The airborne time counts from the takeoff before the cut (5.05 s).
    const Signals airborne = test::only(actual, kFlyer, "movement.airborne");
    ASSERT_FALSE(airborne.empty());
    EXPECT_NE(airborne.front().evidence.find("\"takeoff\":{\"t_us\":5050000,"), std::string::npos)
        << airborne.front().evidence;
}

TEST(Reload, MovementBlobIsStableAndRoundTrips) {
    const auto blob = ground_blob();
    EXPECT_EQ(ground_blob(), blob);
    Harness restored;
    ASSERT_EQ(restored.restore_state(blob), ARB_OK) << restored.error();
    EXPECT_EQ(restored.save_state(), blob);
}

// ---------------------------------------------------------------- live sessions

// Until the accounts plugin took one account in two places, the blob's last section held
// where each account was connected. The section stays, written empty under the same
// version, so that a build from before the split restores this one's blobs; a blob that has
// live sessions is read whole and they are dropped (the accounts plugin starts without
// them: a host hands a plugin only its own blobs).
TEST(LiveSessions, AreReadFromAnOlderBlobAndDropped) {
    Harness with, without;
    ASSERT_EQ(with.restore_state(v3_blob(walkers(0.85), 4, true)), ARB_OK) << with.error();
    ASSERT_EQ(without.restore_state(v3_blob(walkers(0.85), 4, false)), ARB_OK) << without.error();
    const auto blob = with.save_state();
    ASSERT_TRUE(blob.has_value()) << with.error();
    EXPECT_EQ(blob, without.save_state());
    // And the rest of the blob was read as it was: the walkers carry on as without them.
    EXPECT_EQ(keys(test::feed_all(with, after_the_walk().batches())),
              keys(test::feed_all(without, after_the_walk().batches())));
}

TEST(LiveSessions, StayInTheBlobAsAnEmptySection) {
    // A match a player joined with an account: the match's own section ends in the
    // account's name, so that the zeros below are the live sessions' count and nothing else.
    build::PlayerJoin join;
    join.account_id = "account-1";
    Harness harness;
    harness.feed(BatchBuilder("relay", 9).add(1'000'000, 20, 1, join).finish());
    const auto blob = harness.save_state();
    ASSERT_TRUE(blob.has_value()) << harness.error();
    EXPECT_EQ(version_of(*blob), 6u);
    ASSERT_GE(blob->size(), 8u);
    EXPECT_EQ(std::vector<uint8_t>(blob->end() - 8, blob->end()), std::vector<uint8_t>(8, 0));
    Harness again;
    ASSERT_EQ(again.restore_state(*blob), ARB_OK) << again.error();
    EXPECT_EQ(again.save_state(), blob);
    // It is read, not skipped: the same blob without it is refused.
    const std::vector<uint8_t> payload(
        blob->begin() + static_cast<std::ptrdiff_t>(detail::kStateHeaderSize), blob->end() - 8);
    StateWriter shorter("REF1", 6);
    for (uint8_t byte : payload)
        shorter.put<uint8_t>(byte);
    Harness cut;
    EXPECT_EQ(cut.restore_state(shorter.finish()), ARB_ERR_STATE);
    EXPECT_NE(cut.error().find("ends early"), std::string::npos) << cut.error();
}

// ---------------------------------------------------------------- damaged blobs

struct Damage {
    std::string name;
    std::function<std::vector<uint8_t>(std::vector<uint8_t>)> apply;
};

// A blob sealed properly around a payload this plugin did not write.
std::vector<uint8_t> sealed(const char* tag, uint32_t version,
                            const std::function<void(StateWriter&)>& payload) {
    StateWriter out(tag, version);
    payload(out);
    return out.finish();
}

void PrintTo(const Damage& c, std::ostream* os) {
    *os << c.name;
}

class DamagedBlob : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedBlob, IsRefusedAndTheFreshInstanceStillWorks) {
    const Batches all = reload_match().batches();
    const auto blob = GetParam().apply(saved_after_first_half(all));

    Harness harness;
    EXPECT_EQ(harness.restore_state(blob), ARB_ERR_STATE);
    EXPECT_FALSE(harness.error().empty());

    // Started fresh: it sees the second half as a fresh instance does.
    Harness fresh;
    EXPECT_EQ(keys(test::feed_all(harness, second_half(all))),
              keys(test::feed_all(fresh, second_half(all))));
    EXPECT_GT(harness.max_score(kHacker, "movement.speed").value_or(0), 0.7);
}

INSTANTIATE_TEST_SUITE_P(
    Blobs, DamagedBlob,
    ::testing::Values(Damage{"FlippedPayloadByte",
                             [](std::vector<uint8_t> b) {
                                 b[b.size() / 2] ^= 0x01;
                                 return b;
                             }},
                      Damage{"FlippedMagic",
                             [](std::vector<uint8_t> b) {
                                 b[0] ^= 0x20;
                                 return b;
                             }},
                      Damage{"FlippedSizeByte",
                             [](std::vector<uint8_t> b) {
                                 b[12] ^= 0x01;
                                 return b;
                             }},
                      Damage{"TruncatedByOne",
                             [](std::vector<uint8_t> b) {
                                 b.pop_back();
                                 return b;
                             }},
                      Damage{"TruncatedInsideItsHeader",
                             [](std::vector<uint8_t> b) {
                                 b.resize(10);
                                 return b;
                             }},
                      Damage{"Empty", [](std::vector<uint8_t>) { return std::vector<uint8_t>{}; }},
                      Damage{"AnotherPluginsTag",
                             [](std::vector<uint8_t>) {
                                 return sealed("LAGP", 1,
                                               [](StateWriter& w) { w.put<uint64_t>(0); });
                             }},
                      Damage{"NewerVersion",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 7,
                                               [](StateWriter& w) { w.put<uint64_t>(0); });
                             }},
                      Damage{"OurBlobMarkedVersion7",
                             [](std::vector<uint8_t> b) {
                                 const uint32_t seven = 7;
                                 std::memcpy(b.data() + 8, &seven, sizeof seven);
                                 return b;
                             }},
                      // Version 5 writes samples as one array, version 4 one by one.
                      Damage{"Version5MarkedVersion4",
                             [](std::vector<uint8_t>) { return marked(ground_blob(), 4); }},
                      // A version 4 blob read as version 3 has bytes left over, and a
                      // version 3 blob read as version 4 runs out of them.
                      Damage{"Version4MarkedVersion3",
                             [](std::vector<uint8_t>) { return marked(ground_blob(), 3); }},
                      Damage{"Version3MarkedVersion4",
                             [](std::vector<uint8_t>) {
                                 return marked(v3_blob(walkers(0.85)), 4);
                             }},
                      // Each version read in the layout of the other.
                      Damage{"Version1WithHeldCounts",
                             [](std::vector<uint8_t>) { return blob_of(1, walkers(0.85), true); }},
                      Damage{"Version2WithoutHeldCounts",
                             [](std::vector<uint8_t>) { return blob_of(2, walkers(0.85), false); }},
                      Damage{"HeldCountBeyondItsBytes",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 2, [](StateWriter& w) {
                                     w.put<uint64_t>(1);
                                     write_match(w, "relay", 9, {V1Player{1, {}, {}, {}}}, false);
                                     w.put<uint64_t>(1ull << 40);
                                 });
                             }},
                      Damage{"CountBeyondItsBytes",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 1,
                                               [](StateWriter& w) { w.put<uint64_t>(1ull << 40); });
                             }},
                      // Live sessions are dropped, but read first: a damaged section is
                      // refused like any other.
                      Damage{"LiveSessionsBeyondTheirBytes",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 5, [](StateWriter& w) {
                                     w.put<uint64_t>(0);
                                     w.put<uint64_t>(1ull << 40);
                                 });
                             }},
                      Damage{"TrailingBytes",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 1, [](StateWriter& w) {
                                     w.put<uint64_t>(0);
                                     w.put<uint8_t>(7);
                                 });
                             }}),
    [](const auto& row) { return row.param.name; });

TEST(DamagedBlobMidMatch, LeavesTheRunningStateAlone) {
    const Batches all = reload_match().batches();
    auto blob = saved_after_first_half(all);
    blob[blob.size() / 2] ^= 0x01;

    Harness harness;
    test::feed_all(harness, first_half(all));
    EXPECT_EQ(harness.restore_state(blob), ARB_ERR_STATE);
    Signals actual = test::feed_all(harness, second_half(all));
    const Signals at_end = harness.end_match("test-relay", 1);
    actual.insert(actual.end(), at_end.begin(), at_end.end());
    EXPECT_EQ(keys(actual), keys(uninterrupted_second_half(all)));
}

}  // namespace
}  // namespace arbiter::reference
