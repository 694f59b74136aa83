// The host with worker threads ([host] threads), run by ThreadSanitizer too (the tsan
// preset's filter names ParallelDispatch): a sharded plugin (reference) and an unsharded
// one (counter) over several matches at once give what one thread gives; a sink that
// throws loses no batch; reloads and config changes land between batches.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/host.hpp"
#include "arbiter/host/sinks.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host {
namespace {

using test::TempDir;

// Six matches on two relays, eight players each, batch after batch round robin; in
// every match player 3 jumps 400 m once (the reference plugin's teleport check) and every
// player moves enough for the counter to report.
std::vector<std::vector<uint8_t>> interleaved_matches() {
    std::vector<BatchBuilder> builders;
    for (uint64_t match = 1; match <= 6; ++match)
        builders.emplace_back(match % 2 ? "relay-a" : "relay-b", match);
    std::vector<std::vector<uint8_t>> batches;
    for (int tick = 0; tick <= 120; ++tick) {
        for (size_t m = 0; m < builders.size(); ++m) {
            BatchBuilder& b = builders[m];
            const int64_t t_us = int64_t{tick} * 50'000 + 1;
            if (tick == 0) {
                build::MatchStart start;
                start.game = "test";
                b.add(t_us, 0, 0, start);
                for (uint32_t player = 1; player <= 8; ++player) {
                    build::PlayerJoin join;
                    join.account_id = "acct-" + std::to_string(m) + "-" + std::to_string(player);
                    b.add(t_us, 0, player, join);
                }
            }
            for (uint32_t player = 1; player <= 8; ++player) {
                float x = static_cast<float>(tick) * 0.2f + static_cast<float>(player) * 10.0f;
                if (player == 3 && tick >= 60) x += 400.0f;
                b.add(t_us + player, static_cast<uint64_t>(tick), player,
                      build::Position{.position = {x, 0, 0}});
            }
            if (tick == 120) b.add(t_us + 100, static_cast<uint64_t>(tick), 0, build::MatchEnd{});
            batches.push_back(b.finish());
        }
    }
    return batches;
}

ServerConfig config(const TempDir& dir, int threads) {
    const std::string text = "[host]\nserver_id = \"parallel\"\nwork_dir = '" +
                             (dir / "work").string() + "'\nthreads = " + std::to_string(threads) +
                             "\n[plugins.reference]\nlibrary = '" + std::string(REFERENCE_PLUGIN) +
                             "'\n[plugins.counter]\nlibrary = '" + std::string(COUNTER_V1) +
                             "'\n[plugins.counter.config]\nreport_at = 50\n";
    return parse_config(text, "server_config.toml", dir.path());
}

std::string all_assessments(const Host& host) {
    std::string text;
    for (const auto& assessment : host.assessments())
        text += assessment_json(assessment) + "\n";
    return text;
}

std::string run(int threads) {
    TempDir dir;
    Host host(config(dir, threads));
    EXPECT_TRUE(host.plugin_errors().empty());
    for (const auto& batch : interleaved_matches())
        EXPECT_FALSE(host.push(batch));
    EXPECT_TRUE(host.close());
    return all_assessments(host);
}

TEST(ParallelDispatch, ShardedAndUnshardedPluginsGiveWhatOneThreadGives) {
    const std::string one = run(1);
    // Something to compare: each match's jumper flagged, the counter heard from.
    EXPECT_NE(one.find("movement.teleport"), std::string::npos);
    EXPECT_NE(one.find("test.count"), std::string::npos);
    EXPECT_EQ(run(3), one);
    EXPECT_EQ(run(2), one);
}

// Throws on the first signal it hears, then behaves.
class ThrowOnce : public Sink {
  public:
    void on_signal(const SignalRecord&) override {
        if (thrown_) return;
        thrown_ = true;
        throw std::runtime_error("disk full");
    }

  private:
    bool thrown_ = false;
};

// Every signal, and every action as JSON, in order.
class Transcript : public Sink {
  public:
    void on_signal(const SignalRecord& signal) override {
        lines.push_back("signal " + signal.plugin + " " + signal.code);
    }
    void on_action(const Assessment& assessment) override {
        lines.push_back("action " + assessment_json(assessment));
    }
    std::vector<std::string> lines;
};

TEST(ParallelDispatch, ASinkThatThrowsCostsNoBatchNoSignalAndNoOtherSink) {
    TempDir dir;
    Host host(config(dir, 2));
    host.add_sink(std::make_shared<ThrowOnce>());
    auto transcript = std::make_shared<Transcript>();
    host.add_sink(transcript);
    const auto batches = interleaved_matches();
    size_t failures = 0;
    for (const auto& batch : batches) {
        const Host::PushResult pushed = host.push_batch(batch);
        EXPECT_FALSE(pushed.problem) << *pushed.problem;  // accepted, whatever a sink did
        if (pushed.sink_failure) {
            EXPECT_EQ(*pushed.sink_failure, "disk full");
            ++failures;
        }
    }
    EXPECT_TRUE(host.close());
    EXPECT_EQ(failures, 1u);
    EXPECT_EQ(host.counters().batches, batches.size());
    EXPECT_EQ(host.counters().matches_ended, 6u);
    EXPECT_EQ(host.batches_in_flight(), 0u);
    // The signal the failing sink threw on still reached the other sink and the aggregator.
    size_t signals = 0;
    for (const auto& line : transcript->lines)
        signals += line.starts_with("signal ") ? 1 : 0;
    EXPECT_EQ(signals, host.counters().signals);
    EXPECT_EQ(all_assessments(host), run(1));
}

// A sink that ends a match from inside: the workers may be inside that match's plugins.
class EndsAMatch : public Sink {
  public:
    explicit EndsAMatch(Host& host) : host_(host) {}
    void on_action(const Assessment& assessment) override {
        host_.end_match(assessment.player.relay_id, assessment.player.match_id);
    }

  private:
    Host& host_;
};

TEST(ParallelDispatch, ASinkMayNotChangeTheHostWhileBatchesAreTakenIn) {
    TempDir dir;
    Host host(config(dir, 2));
    host.add_sink(std::make_shared<EndsAMatch>(host));
    std::string failure;
    for (const auto& batch : interleaved_matches()) {
        const Host::PushResult pushed = host.push_batch(batch);
        ASSERT_FALSE(pushed.problem);
        if (pushed.sink_failure && failure.empty()) failure = *pushed.sink_failure;
    }
    EXPECT_NE(failure.find("cannot end a match from inside a sink"), std::string::npos) << failure;
    host.close();  // whether clean depends on the refused sink: not what this test is about
    EXPECT_EQ(host.counters().matches_ended, 6u);
}

// The actions a sink hears carry the input lost as of their batch, not as of the batches
// pushed since: with threads, a gap pushed after a flagged batch was still in flight
// showed in that batch's action.
std::vector<std::string> actions_around_a_gap(int threads) {
    TempDir dir;
    Host host(config(dir, threads));
    auto transcript = std::make_shared<Transcript>();
    host.add_sink(transcript);
    BatchBuilder builder("relay-a", 1);
    for (int tick = 0; tick < 12; ++tick) {
        const int64_t t_us = int64_t{tick} * 50'000 + 1;
        for (uint32_t player = 1; player <= 2; ++player) {
            float x = static_cast<float>(tick) * 0.2f + static_cast<float>(player) * 10.0f;
            if (player == 2 && tick >= 3) x += 400.0f;  // a teleport at batch 3
            builder.add(t_us + player, static_cast<uint64_t>(tick), player,
                        build::Position{.position = {x, 0, 0}});
        }
        std::vector<uint8_t> batch = builder.finish();
        if (tick == 6) continue;  // batch 6 never arrives
        EXPECT_FALSE(host.push(batch));
    }
    host.close();
    std::vector<std::string> actions;
    for (const auto& line : transcript->lines)
        if (line.starts_with("action ")) actions.push_back(line);
    return actions;
}

TEST(ParallelDispatch, AnActionSaysTheInputLostAsOfItsOwnBatch) {
    const auto one = actions_around_a_gap(1);
    ASSERT_FALSE(one.empty());
    EXPECT_NE(one.front().find("\"lost_input\":[]"), std::string::npos) << one.front();
    EXPECT_EQ(actions_around_a_gap(2), one);
}

TEST(ParallelDispatch, AConfigChangeAndAReloadLandBetweenBatches) {
    TempDir dir;
    Host host(config(dir, 3));
    const auto batches = interleaved_matches();
    for (size_t i = 0; i < batches.size(); ++i) {
        if (i == batches.size() / 3) {
            auto reports = host.apply_config(config(dir, 3));
            EXPECT_TRUE(reports.empty() || reports.front().ok);
        }
        if (i == batches.size() / 2) {
            const auto report = host.reload_plugin("reference");
            ASSERT_TRUE(report.ok) << report.describe();
            EXPECT_NE(report.state.find("carried"), std::string::npos) << report.describe();
            EXPECT_EQ(report.shard_pause_us.size(), 96u);  // shard to shard, three at once
            EXPECT_TRUE(host.reload_plugin("counter").ok);
        }
        ASSERT_FALSE(host.push(batches[i]));
    }
    host.close();
    EXPECT_EQ(all_assessments(host), run(1));
}

// The ledger hears of a match's end when its last batch is pushed, not when the workers
// are done with it: a new match under the same id pushed right behind is a new match, not
// a duplicate of the first one's batches.
TEST(ParallelDispatch, ANewMatchUnderAnEndedOnesIdIsAcceptedRightBehindIt) {
    TempDir dir;
    Host host(config(dir, 2));
    for (int round = 0; round < 2; ++round) {
        BatchBuilder builder("relay-a", 1);
        for (int tick = 0; tick < 20; ++tick) {
            // Other positions the second time: the same bytes would be a duplicate.
            builder.add(
                int64_t{tick} * 50'000 + 1, static_cast<uint64_t>(tick), 1,
                build::Position{.position = {static_cast<float>(tick + 100 * round), 0, 0}});
            if (tick == 19) builder.add(int64_t{tick} * 50'000 + 2, 19, 0, build::MatchEnd{});
            const auto refused = host.push(builder.finish());
            ASSERT_FALSE(refused) << "round " << round << ": " << *refused;
        }
    }
    EXPECT_EQ(host.counters().matches_ended, 2u);
    EXPECT_EQ(host.counters().refused_batches, 0u);
}

}  // namespace
}  // namespace arbiter::host
