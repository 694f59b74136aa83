// The correlator's two threads: the event thread watching players, taking answers and
// settling matches while the lookup thread queries the store. Run under ThreadSanitizer
// too (the tsan preset's filter names it). Its effect on assessments is tested with real
// hosts in tests/correlation_test.cpp.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "store/correlator.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host {
namespace {

SignalRecord flag(uint32_t player, const std::string& account, double score) {
    SignalRecord signal;
    signal.plugin = "reference";
    signal.code = "movement.speed";
    signal.player = {"relay-a", 1, player};
    signal.score = score;
    signal.confidence = 1.0;
    signal.evidence_json = "{}";
    signal.reported_at_us = 5'000'000;
    signal.account = account;
    return signal;
}

TEST(Correlator, EveryWatchedPlayerIsAnsweredBeforeItsMatchSettles) {
    test::TempDir dir;
    StoreSettings store;
    store.path = (dir / "review.db").string();
    {
        StoreSink sink(store, "server-a", 0.3, 0.7);
        for (uint32_t i = 0; i < 50; ++i)
            sink.on_signal(flag(i + 1, "acc-" + std::to_string(i), 0.5));
        sink.flush();
    }
    CorrelationSettings settings;
    settings.enabled = true;
    settings.refresh_s = 1;
    Correlator correlator(store, settings, "server-b");
    std::vector<SignalRecord> taken;
    // Watched from this thread while the lookups run on the correlator's own; two matches.
    for (uint32_t i = 0; i < 100; ++i) {
        correlator.watch({"relay-b", 1 + i % 2, i + 1}, "acc-" + std::to_string(i % 60));
        for (auto& s : correlator.take())
            taken.push_back(std::move(s));
    }
    // Players without an account are never looked up.
    correlator.watch({"relay-b", 1, 500}, "");
    ASSERT_TRUE(correlator.settle("relay-b", 1, std::chrono::seconds(30)));
    ASSERT_TRUE(correlator.settle("relay-b", 2, std::chrono::seconds(30)));
    for (auto& s : correlator.take())
        taken.push_back(std::move(s));
    // acc-0 to acc-49 were flagged elsewhere; each was watched by one or two players.
    size_t expected = 0;
    for (uint32_t i = 0; i < 100; ++i)
        expected += (i % 60) < 50 ? 1 : 0;
    EXPECT_EQ(taken.size(), expected);
    for (const auto& s : taken) {
        EXPECT_EQ(s.plugin, "correlation");
        EXPECT_EQ(s.code, "elsewhere.validation");
        EXPECT_DOUBLE_EQ(s.score, 0.5);
        EXPECT_EQ(nlohmann::json::parse(s.evidence_json)["servers"], nlohmann::json({"server-a"}));
    }
    EXPECT_EQ(correlator.counters().signals, expected);
    // A settled match is no longer looked up: nothing more comes at the next refresh.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    EXPECT_TRUE(correlator.take().empty());
}

TEST(Correlator, StopsWhileLookupsArePending) {
    test::TempDir dir;
    StoreSettings store;
    store.path = (dir / "review.db").string();
    {
        StoreSink sink(store, "server-a", 0.3, 0.7);
        sink.on_signal(flag(1, "acc", 0.9));
        sink.flush();
    }
    CorrelationSettings settings;
    settings.enabled = true;
    for (int round = 0; round < 20; ++round) {
        Correlator correlator(store, settings, "server-b");
        for (uint32_t i = 0; i < 200; ++i)
            correlator.watch({"relay-b", 1, i + 1}, "acc");
        // Destroyed at once, with most of them still to look up.
    }
}

}  // namespace
}  // namespace arbiter::host
