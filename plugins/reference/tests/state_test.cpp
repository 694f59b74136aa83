// Hot reload: the state saved mid-match and restored into a new instance carries on exactly
// as if nothing happened, and a blob that is not whole and ours is refused without harm.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/state.hpp>

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

// What an uninterrupted instance reports over the second half.
Signals uninterrupted_second_half(const Batches& all) {
    Harness harness;
    test::feed_all(harness, first_half(all));
    return test::feed_all(harness, second_half(all));
}

std::vector<uint8_t> saved_after_first_half(const Batches& all) {
    Harness harness;
    test::feed_all(harness, first_half(all));
    auto blob = harness.save_state();
    if (!blob) throw std::runtime_error("save_state failed: " + harness.error());
    return *blob;
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
    const Signals actual = test::feed_all(restored, second_half(all));
    EXPECT_EQ(keys(actual), keys(expected));
    EXPECT_TRUE(test::only(actual, kLagger, "movement.speed").empty());
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
                                 return sealed("REF1", 2,
                                               [](StateWriter& w) { w.put<uint64_t>(0); });
                             }},
                      Damage{"CountBeyondItsBytes",
                             [](std::vector<uint8_t>) {
                                 return sealed("REF1", 1,
                                               [](StateWriter& w) { w.put<uint64_t>(1ull << 40); });
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
    EXPECT_EQ(keys(test::feed_all(harness, second_half(all))),
              keys(uninterrupted_second_half(all)));
}

}  // namespace
}  // namespace arbiter::reference
