// "The assessments for a given event stream are the same whatever the batch size and the
// number of threads" (ARCHITECTURE.md, "Aggregation"): matches played at once, their batches
// interleaved as a relay box would send them, through every bundled plugin with 1, 2 and 7
// worker threads, give byte-identical assessments, the same calls to the sinks in the same
// order, and the same security-event log.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/arbiter_host.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/host/parallel_dispatch.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/sinks.hpp"
#include "arbiter/host/snapshot_handover.hpp"
#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/simulate.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

std::filesystem::path bundled(const std::string& name) {
    return std::filesystem::path(BUNDLED_PLUGIN_DIR) / ("arbiter-" + name + ".so");
}

// Every call a sink hears, as text, in order.
class TranscriptSink : public host::Sink {
  public:
    void on_signal(const host::SignalRecord& s) override {
        text += "signal " + s.plugin + " " + s.code + " " + s.player.relay_id + "/" +
                std::to_string(s.player.match_id) + "/" + std::to_string(s.player.player) + " " +
                std::to_string(s.score) + " " + s.evidence_json + "\n";
    }
    void on_action(const host::Assessment& a) override {
        text += "action " + host::assessment_json(a) + "\n";
    }
    void on_match_end(const std::string& relay_id, uint64_t match_id, bool complete,
                      const std::vector<host::Assessment>& players) override {
        text += "end " + relay_id + "/" + std::to_string(match_id) + (complete ? " complete" : "") +
                "\n";
        for (const auto& a : players)
            text += "  " + host::assessment_json(a) + "\n";
    }
    std::string text;
};

// "" when equal, else the first line that differs in each (cut short), so that a failure
// says where without printing megabytes.
std::string first_difference(const std::string& expected, const std::string& actual) {
    if (expected == actual) return "";
    std::istringstream a(expected), b(actual);
    std::string line_a, line_b;
    for (size_t line = 1;; ++line) {
        const bool more_a = static_cast<bool>(std::getline(a, line_a));
        const bool more_b = static_cast<bool>(std::getline(b, line_b));
        if (!more_a && !more_b) return "they differ only in their last newline";
        if (!more_a || !more_b || line_a != line_b)
            return "line " + std::to_string(line) +
                   ":\n  one thread: " + (more_a ? line_a.substr(0, 400) : "(ended)") +
                   "\n  several:    " + (more_b ? line_b.substr(0, 400) : "(ended)");
    }
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Three matches on two relays, simulated once for the whole suite, with the same account
// names in every match ("player-000001", ...), so with the matches played at once each
// account is in two places: the check that spans matches has work to do.
class Threads : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        const auto rhythm = tools::HumanRhythm::builtin();
        struct Match {
            const char* relay;
            uint64_t id;
            uint64_t seed;
            const char* players;
        };
        // The README's mix (a shorter match), and two more.
        const Match matches[] = {
            {"relay-a", 1, 7,
             "honest=40,speed_hack=3,teleport=3,clock_speedup=3,fly=3,hit_range=3,"
             "hit_through_wall=3,rapid_fire=3,item_dup=3,xp_rate=3,reconnect_spam=3,metronome=3,"
             "reaction_bot=3,rate_bot=3,humanised_bot=3"},
            {"relay-a", 2, 8, "honest=20,speed_hack=2,reconnect_spam=2,rapid_fire=2"},
            {"relay-b", 3, 9, "honest=20,metronome=2,fly=2,teleport=2"},
        };
        std::vector<std::vector<std::vector<uint8_t>>> per_match;
        for (const Match& m : matches) {
            tools::SimulationOptions o;
            o.out = *dir_ / ("m" + std::to_string(m.id) + ".arbev");
            o.seed = m.seed;
            o.duration_s = 40;
            o.relay_id = m.relay;
            o.match_id = m.id;
            o.accounts = "player";
            o.batch_events = 512;
            o.players = tools::parse_player_mix(m.players);
            tools::simulate(o, rhythm);
            host::EventFileReader reader(o.out);
            std::vector<std::vector<uint8_t>> batches;
            while (auto item = reader.next())
                if (item->kind == host::EventFileItem::Kind::record)
                    batches.emplace_back(item->payload.begin(), item->payload.end());
            per_match.push_back(std::move(batches));
        }
        // Round robin, as a relay box running the three at once would send them.
        batches_ = new std::vector<std::vector<uint8_t>>();
        for (size_t i = 0;; ++i) {
            bool any = false;
            for (const auto& match : per_match)
                if (i < match.size()) {
                    batches_->push_back(match[i]);
                    any = true;
                }
            if (!any) break;
        }
    }
    static void TearDownTestSuite() {
        delete batches_;
        delete dir_;
    }

    struct Outcome {
        std::string assessments;  // JSON Lines, as `arbiter replay --json` prints them
        std::string transcript;   // every sink call
        std::string security_log;
        host::HostCounters counters;
        uint32_t shards = 0;
    };

    static std::string config_text(const std::filesystem::path& dir, const std::string& threads) {
        std::string text = host_table(dir / "work") + threads +
                           "\n[sinks]\nsecurity_log = " + toml_literal(dir / "security.jsonl") +
                           "\nreport_threshold = 0.0\n";
        for (const char* name : {"reference", "lagpool", "kaladin", "accounts", "luanti"})
            text += plugin_table(name, bundled(name));
        return text;
    }

    static Outcome run(const std::string& threads) {
        TempDir dir;
        Outcome outcome;
        {
            host::Host host(parse(config_text(dir.path(), threads), dir.path()));
            EXPECT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
            auto transcript = std::make_shared<TranscriptSink>();
            host.add_sink(transcript);
            for (const auto& batch : *batches_) {
                auto refused = host.push(batch);
                EXPECT_FALSE(refused) << *refused;
            }
            EXPECT_TRUE(host.close());
            for (const auto& assessment : host.assessments())
                outcome.assessments += host::assessment_json(assessment) + "\n";
            outcome.transcript = transcript->text;
            outcome.counters = host.counters();
            outcome.shards = host.shards();
        }
        outcome.security_log = read_file(dir / "security.jsonl");
        return outcome;
    }

    // Whether the reload of the `next`th of `plugins` plugins must begin at batch i even
    // though the one before is still going over (begin_install then waits for it first):
    // each begins once the one before is across, or at the latest when its share of the
    // stream after `start` has gone, so that every plugin is reloaded before the stream
    // ends however slowly the machine carries them.
    static bool due(size_t i, size_t start, size_t next, size_t plugins) {
        return i >= start + (batches_->size() - start) * next / plugins;
    }

    // The stream with `order`'s plugins reloaded one after another as serve reloads them
    // (Host::begin_install, never installed whole), from a quarter of the way in, while
    // batches keep coming; every report. `fork_shard_players` as Host::set_fork_shard_players.
    static Outcome run_reloading(const std::string& threads, const std::vector<std::string>& order,
                                 size_t fork_shard_players,
                                 std::vector<host::ReloadReport>& reports) {
        TempDir dir;
        Outcome outcome;
        {
            host::Host host(parse(config_text(dir.path(), threads), dir.path()));
            host.set_fork_shard_players(fork_shard_players);
            auto transcript = std::make_shared<TranscriptSink>();
            host.add_sink(transcript);
            size_t next = 0;
            const size_t start = batches_->size() / 4;
            for (size_t i = 0; i < batches_->size(); ++i) {
                if (i >= start && next < order.size() &&
                    (!host.installing() || due(i, start, next, order.size()))) {
                    host::PluginSettings settings;
                    for (const auto& slot : host.plugins())
                        if (slot.settings.name == order[next]) settings = slot.settings;
                    ++next;
                    EXPECT_FALSE(host.begin_install(host.prepare_plugin(settings)))
                        << "installed whole";
                }
                EXPECT_FALSE(host.push((*batches_)[i]));
                if (auto report = host.finished_install()) reports.push_back(*report);
            }
            EXPECT_EQ(next, order.size()) << "the matches ended before every plugin was reloaded";
            EXPECT_TRUE(host.close());
            while (auto report = host.finished_install())
                reports.push_back(*report);
            for (const auto& assessment : host.assessments())
                outcome.assessments += host::assessment_json(assessment) + "\n";
            outcome.transcript = transcript->text;
        }
        outcome.security_log = read_file(dir.path() / "security.jsonl");
        return outcome;
    }

    static TempDir* dir_;
    static std::vector<std::vector<uint8_t>>* batches_;
};

TempDir* Threads::dir_ = nullptr;
std::vector<std::vector<uint8_t>>* Threads::batches_ = nullptr;

TEST_F(Threads, OneTwoAndSevenThreadsGiveByteIdenticalAssessmentsSinksAndLogs) {
    const Outcome one = run("threads = 1\n");
    ASSERT_EQ(one.shards, 1u);
    // The comparison means something only if the matches produced verdicts of every kind.
    EXPECT_EQ(one.counters.matches_ended, 3u);
    EXPECT_NE(one.assessments.find("\"FlagForReview\""), std::string::npos);
    EXPECT_NE(one.assessments.find("\"Clear\""), std::string::npos);
    EXPECT_NE(one.transcript.find("movement.teleport"), std::string::npos);
    EXPECT_NE(one.transcript.find("sessions.two_places"), std::string::npos);
    EXPECT_GT(one.security_log.size(), 1000u);

    for (const char* threads : {"threads = 2\n", "threads = 7\n"}) {
        SCOPED_TRACE(threads);
        const Outcome many = run(threads);
        EXPECT_GT(many.shards, 1u);
        EXPECT_EQ(first_difference(one.assessments, many.assessments), "");
        EXPECT_EQ(first_difference(one.transcript, many.transcript), "");
        EXPECT_EQ(first_difference(one.security_log, many.security_log), "");
        EXPECT_EQ(many.counters.batches, one.counters.batches);
        EXPECT_EQ(many.counters.events, one.counters.events);
        EXPECT_EQ(many.counters.signals, one.counters.signals);
    }
}

// Backpressure with a plugin slower than the pushing thread: never more than kMaxBatches
// in flight, and a push that finds the dispatch full waits for room (the oldest
// kRoomBatches taken in), not for one batch at a time; every batch is still taken in.
TEST_F(Threads, AFullDispatchWaitsForRoomAndNeverHoldsMoreThanItsLimit) {
    constexpr size_t kMax = host::ParallelDispatch::kMaxBatches;
    constexpr size_t kRoom = host::ParallelDispatch::kRoomBatches;
    TempDir dir;
    const std::string text = host_table(dir / "work") + "threads = 2\n" +
                             plugin_table("reference", bundled("reference")) +
                             plugin_table("slow", test_plugin("slow")) +
                             "[plugins.slow.config]\ndelay_us = 1000\n";
    host::Host host(parse(text, dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    const size_t count = std::min(batches_->size(), kMax + 3 * kRoom);
    ASSERT_GT(count, kMax) << "the test needs more batches than the dispatch holds";
    size_t most = 0;
    size_t full_pushes = 0;
    for (size_t i = 0; i < count; ++i) {
        const size_t before = host.batches_in_flight();
        const auto refused = host.push((*batches_)[i]);
        ASSERT_FALSE(refused) << *refused;
        const size_t after = host.batches_in_flight();
        most = std::max(most, after);
        if (before < kMax) continue;
        ++full_pushes;
        EXPECT_LE(after, kMax - kRoom + 1) << "push " << i;
    }
    // The slow plugin takes a millisecond a batch: the pushing thread fills the dispatch.
    EXPECT_GT(full_pushes, 0u);
    EXPECT_LE(most, kMax);
    EXPECT_TRUE(host.close());
    EXPECT_EQ(host.counters().batches, count);
    EXPECT_EQ(host.batches_in_flight(), 0u);
}

TEST_F(Threads, ShardedPluginsRunOneInstancePerShard) {
    TempDir dir;
    host::Host host(parse(config_text(dir.path(), "threads = 3\n"), dir.path()));
    ASSERT_EQ(host.threads(), 3u);
    // 32 shards a thread: each a small part of the players (shards_for_threads).
    ASSERT_EQ(host.shards(), 96u);
    for (const auto& slot : host.plugins()) {
        ASSERT_TRUE(slot.active()) << slot.error;
        EXPECT_EQ(slot.instance->shard_count(),
                  slot.library->has(ARB_CAP_SHARD_BY_MATCH) ? 96u : 1u)
            << slot.settings.name;
    }
}

TEST_F(Threads, WhatTheHostSaysAfterAPushIncludesThatBatch) {
    TempDir dir;
    host::Host host(parse(config_text(dir.path(), "threads = 2\n"), dir.path()));
    uint64_t events = 0;
    for (size_t i = 0; i < 300 && i < batches_->size(); ++i) {
        ASSERT_FALSE(host.push((*batches_)[i]));
        events += host::ingest_batch((*batches_)[i], 1u << 24).batch.event_count;
        // Read at once, with the workers possibly still on it: the host waits for it.
        ASSERT_EQ(host.counters().batches, i + 1);
        ASSERT_EQ(host.counters().events, events);
        ASSERT_EQ(host.batches_in_flight(), 0u);
    }
}

TEST_F(Threads, AReloadMidStreamCarriesEveryShardsStateAndChangesNothing) {
    const Outcome straight = run("threads = 2\n");
    TempDir dir;
    host::Host host(parse(config_text(dir.path(), "threads = 2\n"), dir.path()));
    const size_t half = batches_->size() / 2;
    for (size_t i = 0; i < batches_->size(); ++i) {
        if (i == half)
            for (const char* name : {"reference", "lagpool", "kaladin", "accounts", "luanti"}) {
                const auto report = host.reload_plugin(name);
                ASSERT_TRUE(report.ok) << report.describe();
                EXPECT_NE(report.state.find("carried"), std::string::npos) << report.describe();
                // The sharded plugins go shard to shard, the others as one blob.
                const bool sharded = std::string(name) != "accounts";
                EXPECT_EQ(report.shard_pause_us.size(), sharded ? 64u : 0u) << name;
                if (sharded) {
                    EXPECT_NE(report.state.find("in 64 shards"), std::string::npos)
                        << report.describe();
                }
            }
        ASSERT_FALSE(host.push((*batches_)[i]));
    }
    host.close();
    std::string assessments;
    for (const auto& assessment : host.assessments())
        assessments += host::assessment_json(assessment) + "\n";
    EXPECT_EQ(first_difference(straight.assessments, assessments), "");
}

// What `arbiter serve` does on a reload (Host::begin_install): the sharded plugins go over
// shard by shard while batches keep being pushed, one plugin after another; the unsharded
// one is installed whole at once. Every shard's state is carried, and nothing the relay
// hears changes.
TEST_F(Threads, StagedReloadsWhileBatchesFlowCarryEveryShardAndChangeNothing) {
    const Outcome straight = run("threads = 2\n");
    TempDir dir;
    host::Host host(parse(config_text(dir.path(), "threads = 2\n"), dir.path()));
    const std::vector<std::string> order = {"reference", "accounts", "lagpool", "kaladin",
                                            "luanti"};
    std::vector<host::ReloadReport> reports;
    size_t next = 0;
    auto begin_next = [&] {
        host::PluginSettings settings;
        for (const auto& slot : host.plugins())
            if (slot.settings.name == order[next]) settings = slot.settings;
        ++next;
        host::PluginSlot retired;
        if (auto report = host.begin_install(host.prepare_plugin(settings), &retired))
            reports.push_back(*report);  // installed whole, at once
        EXPECT_TRUE(host::Host::release_retired(std::move(retired)));
    };
    const size_t start = batches_->size() / 3;
    for (size_t i = 0; i < batches_->size(); ++i) {
        if (i >= start && next < order.size() &&
            (!host.installing() || due(i, start, next, order.size())))
            begin_next();
        ASSERT_FALSE(host.push((*batches_)[i]));
        host::PluginSlot retired;
        if (auto report = host.finished_install(&retired)) {
            reports.push_back(*report);
            EXPECT_TRUE(host::Host::release_retired(std::move(retired)));
        }
    }
    ASSERT_EQ(next, order.size()) << "the match ended before every plugin was reloaded";
    host.close();
    // close() lets the last staged install finish; its report waits to be taken.
    while (auto report = host.finished_install())
        reports.push_back(*report);
    ASSERT_EQ(reports.size(), order.size());
    for (const auto& report : reports) {
        SCOPED_TRACE(report.describe());
        EXPECT_TRUE(report.ok);
        const bool sharded = report.plugin != "accounts";
        EXPECT_EQ(report.staged, sharded);
        EXPECT_EQ(report.shard_pause_us.size(), sharded ? 64u : 0u);
        EXPECT_NE(report.state.find(sharded ? "carried (" : "carried"), std::string::npos);
        if (sharded) {
            EXPECT_NE(report.state.find("in 64 shards)"), std::string::npos);
            // Every shard saved and restored within its own step.
            double steps_us = 0;
            for (double us : report.shard_pause_us)
                steps_us += us;
            EXPECT_GT(report.save_us, 0.0);
            EXPECT_GT(report.restore_us, 0.0);
            EXPECT_LE(report.save_us + report.restore_us, steps_us);
        }
        // The new generation is the one running.
        for (const auto& slot : host.plugins()) {
            if (slot.settings.name == report.plugin) {
                EXPECT_EQ(slot.library->identity().version, report.to_version);
            }
        }
    }
    std::string assessments;
    for (const auto& assessment : host.assessments())
        assessments += host::assessment_json(assessment) + "\n";
    EXPECT_EQ(first_difference(straight.assessments, assessments), "");
}

// On several threads, a shard that holds many players is forked on its lane rather than
// carried (Host::forks_shard; set to 1 player here, so every shard with a match forks). Every
// bundled plugin in turn while batches flow: the states carried, and nothing the relay
// hears changes.
TEST_F(Threads, StagedReloadsThatForkTheirShardsCarryEveryStateAndChangeNothing) {
    const Outcome straight = run("threads = 2\n");
    std::vector<host::ReloadReport> reports;
    const Outcome reloaded =
        run_reloading("threads = 2\n", {"reference", "lagpool", "kaladin", "luanti"}, 1, reports);
    ASSERT_EQ(reports.size(), 4u);
    for (const auto& report : reports) {
        SCOPED_TRACE(report.describe());
        EXPECT_TRUE(report.ok);
        EXPECT_TRUE(report.staged);
        EXPECT_FALSE(report.forked);  // the one-thread handover's flag
        // The open matches' shards (three matches: one to three shards) forked.
        EXPECT_GE(report.forked_shards, 1u);
        EXPECT_LE(report.forked_shards, 3u);
        // Each forked shard's fork() is part of its step, not the whole of it or more.
        ASSERT_EQ(report.shard_fork_us.size(), report.forked_shards);
        for (const double fork_us : report.shard_fork_us) {
            EXPECT_GT(fork_us, 0.0);
            EXPECT_LE(fork_us, report.pause_us);
        }
        EXPECT_EQ(report.fork_problem, "");
        EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
        EXPECT_GT(report.save_us, 0.0);
        EXPECT_TRUE(report.old_library_left);
    }
    EXPECT_EQ(first_difference(straight.assessments, reloaded.assessments), "");
    EXPECT_EQ(first_difference(straight.transcript, reloaded.transcript), "");
    EXPECT_EQ(first_difference(straight.security_log, reloaded.security_log), "");
}

// Which shards a staged reload forks: those whose carry (growing with the shard) would hold
// them longer than a fork (growing with the whole host).
TEST(ForkedShards, AShardForksWhenItsCarryWouldHoldItLongerThanAFork) {
    TempDir dir;
    host::Host host(parse(host_table(dir.path() / "work") + "threads = 2\n", dir.path()));
    EXPECT_TRUE(host.forks_shard(1'000, 1'000));      // one match of 1,000
    EXPECT_TRUE(host.forks_shard(10'000, 10'000));    // one match of 10,000
    EXPECT_TRUE(host.forks_shard(100'000, 100'000));  // one match of 100,000
    EXPECT_FALSE(host.forks_shard(500, 1'000));       // one match of 500 of two
    EXPECT_FALSE(host.forks_shard(1'000, 10'000));    // two matches of 500 in a shard, of 20
    EXPECT_FALSE(host.forks_shard(500, 10'000));      // one match of 500 among 20
    EXPECT_FALSE(host.forks_shard(4'000, 100'000));   // eight matches of 500 among 200
    EXPECT_FALSE(host.forks_shard(100, 100));         // a small host: the fork's own cost
    EXPECT_FALSE(host.forks_shard(0, 0));
    host.set_fork_shard_players(1);
    EXPECT_TRUE(host.forks_shard(1, 100'000));
    EXPECT_FALSE(host.forks_shard(0, 100'000));
}

// The default rule weighs the players of the matches open at the reload, kept as players
// join and matches end: a match of 1,000 forks its shard; once it has ended, a match of
// 300 (whose carry is shorter than a fork) is carried, like every shard without a match.
TEST(ForkedShards, TheRuleWeighsThePlayersOfTheMatchesOpenAtTheReload) {
    TempDir dir;
    host::Host host(parse(host_table(dir.path() / "work") + "threads = 2\n" +
                              plugin_table("reference", bundled("reference")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    auto join = [&host](uint64_t match, uint32_t players, uint64_t sequence) {
        BatchBuilder batch("relay-a", match, sequence);
        for (uint32_t p = 1; p <= players; ++p)
            batch.add(static_cast<int64_t>(sequence + 1) * 1'000'000 + p, 20, p,
                      build::Latency{30'000});
        const auto refused = host.push(batch.finish());
        EXPECT_FALSE(refused) << *refused;
    };
    auto forked_shards = [&host]() -> uint32_t {
        host::PluginSettings settings = host.plugins().front().settings;
        EXPECT_FALSE(host.begin_install(host.prepare_plugin(settings))) << "installed whole";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline) {
            if (auto report = host.finished_install()) {
                EXPECT_TRUE(report->ok) << report->describe();
                EXPECT_EQ(report->shard_cpu_us.size(), host.shards());
                return report->forked_shards;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ADD_FAILURE() << "the staged reload did not end within 60 s";
        return 0;
    };
    // A match of 400 is carried; counted twice, its players would fork the shard. So its
    // players sending again (no one joined) must leave the count, and the rule, as they were.
    ASSERT_FALSE(host.forks_shard(400, 400));
    ASSERT_TRUE(host.forks_shard(800, 800));
    join(1, 400, 0);
    EXPECT_EQ(forked_shards(), 0u);
    join(1, 400, 1);
    EXPECT_EQ(forked_shards(), 0u);
    host.end_match("relay-a", 1);
    join(2, 1'000, 0);
    EXPECT_EQ(forked_shards(), 1u);
    join(2, 1'000, 1);  // the same players again: no one joined
    EXPECT_EQ(forked_shards(), 1u);
    host.end_match("relay-a", 2);
    join(3, 300, 0);
    EXPECT_EQ(forked_shards(), 0u);
    EXPECT_TRUE(host.close());
}

// With one thread, `arbiter serve`'s reload forks (SnapshotHandover): a copy of the host
// saves the old state while the old instance goes on answering, the new one restores it
// and makes again the calls made meanwhile, and takes over. Each bundled plugin in turn,
// while batches keep coming: every state carried, and nothing the relay hears changes.
TEST_F(Threads, ForkedReloadsOnOneThreadCarryEveryStateAndChangeNothing) {
    const Outcome straight = run("threads = 1\n");
    std::vector<host::ReloadReport> reports;
    const Outcome reloaded = run_reloading(
        "threads = 1\n", {"reference", "accounts", "lagpool", "kaladin", "luanti"}, 0, reports);
    ASSERT_EQ(reports.size(), 5u);
    for (const auto& report : reports) {
        SCOPED_TRACE(report.describe());
        EXPECT_TRUE(report.ok);
        EXPECT_TRUE(report.forked);
        EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
        EXPECT_GT(report.save_us, 0.0);
        EXPECT_GT(report.restore_us, 0.0);
        EXPECT_TRUE(report.old_library_left);
    }
    EXPECT_EQ(first_difference(straight.assessments, reloaded.assessments), "");
    EXPECT_EQ(first_difference(straight.transcript, reloaded.transcript), "");
    EXPECT_EQ(first_difference(straight.security_log, reloaded.security_log), "");
}

// The handover with a plugin whose every signal counts the events it has seen: the calls
// made while the forked copy saves (held until the test lets it go) are made again to
// the new instance, each once, and the signals after the reload go on counting from where
// the old instance was, as without a reload.
class ForkedReload : public Threads {
  protected:
    static std::string counts_config(const std::filesystem::path& dir, const std::string& table,
                                     int threads = 1) {
        return host_table(dir / "work") + "threads = " + std::to_string(threads) + "\n" +
               plugin_table("counts", test_plugin("counts")) + "[plugins.counts.config]\n" + table;
    }
    // Pushes the batches [from, to), with what the sinks hear.
    static void push(host::Host& host, size_t from, size_t to) {
        for (size_t i = from; i < to; ++i)
            ASSERT_FALSE(host.push((*batches_)[i]));
    }
    static std::string straight_transcript(int threads = 1) {
        TempDir dir;
        host::Host host(parse(counts_config(dir.path(), "", threads), dir.path()));
        auto transcript = std::make_shared<TranscriptSink>();
        host.add_sink(transcript);
        push(host, 0, batches_->size());
        EXPECT_TRUE(host.close());
        return transcript->text;
    }
    // Reloads `counts` at a third of the stream, with the save of the forked copy held
    // until `held` more batches were pushed; waits for the report and pushes the rest. On
    // several threads, every shard with a match is forked.
    static host::ReloadReport reload_midway(const std::string& table, size_t held,
                                            std::string& transcript_text, int threads = 1) {
        TempDir dir;
        const auto gate = dir.path() / "let-the-save-go";
        const auto mark = dir.path() / "a-copy-saves";
        host::Host host(
            parse(counts_config(dir.path(),
                                table + "forked_save_waits_for = " + toml_literal(gate) +
                                    "\nforked_save_marks = " + toml_literal(mark) + "\n",
                                threads),
                  dir.path()));
        host.set_fork_shard_players(1);
        EXPECT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
        auto transcript = std::make_shared<TranscriptSink>();
        host.add_sink(transcript);
        const size_t start = batches_->size() / 3;
        push(host, 0, start);
        std::optional<host::ReloadReport> report =
            host.begin_install(host.prepare_plugin(host.plugins().front().settings));
        EXPECT_FALSE(report) << "installed whole, not handed over";
        // On several threads a shard forks when its step reaches its lane: the batches are
        // held back until one has.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!std::filesystem::exists(mark) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        EXPECT_TRUE(std::filesystem::exists(mark)) << "no forked copy began to save";
        push(host, start, start + held);
        // On several threads a push only queues the batch: wait until the lanes have made
        // the calls, so that they are made while the save is held and not after it.
        host.flush();
        std::ofstream(gate).put('\n');
        while (!report) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            report = host.finished_install();
        }
        push(host, start + held, batches_->size());
        EXPECT_TRUE(host.close());
        transcript_text = transcript->text;
        return *report;
    }
    // Ends a match by hand while `counts` is reloaded with its save held: the call must
    // return without waiting for the handover (on several threads, for a forked shard).
    // The report, once the save was let go.
    static std::optional<host::ReloadReport> end_a_match_while_reloading(int threads) {
        TempDir dir;
        const auto gate = dir.path() / "let-the-save-go";
        host::Host host(parse(counts_config(dir.path(),
                                            "forked_save_waits_for = " + toml_literal(gate) + "\n",
                                            threads),
                              dir.path()));
        host.set_fork_shard_players(1);
        push(host, 0, batches_->size() / 3);
        EXPECT_FALSE(host.begin_install(host.prepare_plugin(host.plugins().front().settings)));
        const auto open = host.open_matches();
        if (open.empty()) {
            ADD_FAILURE() << "no open match";
            return std::nullopt;
        }
        host.end_match(open.front().first, open.front().second);
        EXPECT_TRUE(host.installing());
        EXPECT_FALSE(host.finished_install()) << "the install ended before its saves were let go";
        std::ofstream(gate).put('\n');
        EXPECT_TRUE(host.close());
        auto report = host.finished_install();
        if (report) {
            EXPECT_EQ(report->state.rfind("carried (", 0), 0u) << report->describe();
            EXPECT_GE(report->calls_made_again, 1u);  // the match end, at least
        }
        return report;
    }
    // `counts` instances made straight, without a host, for the handover's own tests; the
    // forked copy's save waits for the file `gate`.
    struct Counts {
        Counts(const std::filesystem::path& dir, const std::filesystem::path& gate,
               const std::string& table = "")
            : config(parse(counts_config(dir, table + "forked_save_waits_for = " +
                                                  toml_literal(gate) + "\n"),
                           dir)),
              store((dir / "work").string()) {}
        std::unique_ptr<host::AnalyzerInstance> make() {
            auto library =
                host::PluginLibrary::load(test_plugin("counts"), "counts", store, &metrics);
            return std::make_unique<host::PluginInstance>(library, config.plugins[0],
                                                          std::span<const uint8_t>{}, 0, 1,
                                                          &metrics);
        }
        // What one instance alone says of each batch: the evidence counts on.
        std::vector<std::string> evidence_alone(const std::vector<host::VerifiedBatch>& batches) {
            auto instance = make();
            std::vector<std::string> evidence;
            for (const auto& batch : batches)
                evidence.push_back(instance->on_batch(batch).signals.at(0).evidence_json);
            return evidence;
        }
        host::Metrics metrics;
        host::ServerConfig config;
        host::PluginCopies store;
    };
    // The stream's first `count` batches, ingested (from its start again past its end).
    static std::vector<host::VerifiedBatch> verified_batches(size_t count) {
        std::vector<host::VerifiedBatch> batches;
        for (size_t i = 0; batches.size() < count; i = (i + 1) % batches_->size()) {
            auto ingested = host::ingest_batch((*batches_)[i], 1u << 24);
            EXPECT_TRUE(ingested.ok) << ingested.problem;
            batches.push_back(std::move(ingested.batch));
        }
        return batches;
    }
};

TEST_F(ForkedReload, TheCallsMadeWhileTheCopySavesAreMadeAgainOnceEach) {
    const std::string straight = straight_transcript();
    ASSERT_NE(straight.find("test.count"), std::string::npos);
    std::string transcript;
    const host::ReloadReport report = reload_midway("", 25, transcript);
    SCOPED_TRACE(report.describe());
    EXPECT_TRUE(report.ok);
    EXPECT_TRUE(report.forked);
    EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
    EXPECT_EQ(report.calls_made_again, 25u);
    EXPECT_EQ(first_difference(straight, transcript), "");
}

TEST_F(ForkedReload, ASaveRefusedStartsTheNewVersionFreshAsAWholeReloadWould) {
    std::string transcript;
    const host::ReloadReport report = reload_midway("forked_save = \"refuse\"\n", 5, transcript);
    SCOPED_TRACE(report.describe());
    EXPECT_TRUE(report.ok);
    EXPECT_TRUE(report.forked);
    EXPECT_EQ(report.state.rfind("started fresh (the old instance could not save", 0), 0u);
    EXPECT_NE(report.state.find("refuses to save"), std::string::npos);
    EXPECT_EQ(report.calls_made_again, 0u);
    // The new version counts from nothing: the next signal says so.
    const std::string straight = straight_transcript();
    EXPECT_NE(first_difference(straight, transcript), "");
}

TEST_F(ForkedReload, ACopyThatDiesInItsSaveLeavesAWholeReloadThatCarriesTheState) {
    const std::string straight = straight_transcript();
    std::string transcript;
    const host::ReloadReport report = reload_midway("forked_save = \"die\"\n", 5, transcript);
    SCOPED_TRACE(report.describe());
    EXPECT_TRUE(report.ok);
    EXPECT_FALSE(report.forked);  // made whole, holding the stream
    EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
    EXPECT_NE(report.state.find("the forked copy failed: the forked copy ended before it "
                                "answered"),
              std::string::npos);
    EXPECT_EQ(first_difference(straight, transcript), "");
}

// Ending a match by hand during a handover does not wait for it (its match end is kept and
// made again like a batch): the call returns while the copy's save is still held.
TEST_F(ForkedReload, EndingAMatchDoesNotWaitForTheHandover) {
    EXPECT_TRUE(end_a_match_while_reloading(1));
}

// The batches kept for the catch-up are bounded: with room for three, a fourth call waits
// while the copy's save is held, and goes on once the new instance has caught up. Every
// call is still made again, once.
TEST_F(ForkedReload, ACallPastTheKeptBoundWaitsForTheCatchUp) {
    TempDir dir;
    const auto gate = dir.path() / "let-the-save-go";
    Counts counts(dir.path(), gate);
    const std::vector<host::VerifiedBatch> batches = verified_batches(12);
    // Room for the three batches after the fourth, exactly.
    const size_t room = batches[4].bytes.size() + batches[5].bytes.size() + batches[6].bytes.size();
    const std::vector<std::string> alone = counts.evidence_alone(batches);

    auto old = counts.make();
    auto fresh = counts.make();
    for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(old->on_batch(batches[i]).signals.at(0).evidence_json, alone[i]);
    std::string error;
    auto handover =
        host::SnapshotHandover::begin(old, fresh, error, room, std::chrono::seconds(60));
    ASSERT_TRUE(handover) << error;
    ASSERT_FALSE(old);

    std::atomic<size_t> made{4};
    std::vector<std::string> answered(batches.size());
    std::thread caller([&] {
        for (size_t i = 4; i < batches.size(); ++i) {
            answered[i] = handover->on_batch(batches[i]).signals.at(0).evidence_json;
            made = i + 1;
        }
    });
    // Three kept, the fourth waits for room while the save is held.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (made < 7 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(made, 7u) << "a call past the bound was kept";
    EXPECT_FALSE(handover->done());
    std::ofstream(gate).put('\n');
    caller.join();
    handover->wait_done();

    const auto result = handover->result();
    EXPECT_EQ(result.outcome, host::SnapshotHandover::Outcome::carried) << result.error;
    EXPECT_GT(result.waited_us, 0.0);
    EXPECT_LE(result.most_kept_bytes, room);
    EXPECT_GE(result.calls_made_again, 3u);
    // Whoever answered each call (the old instance, or the new one once it had caught up),
    // the answers are those of one instance that saw every batch once.
    for (size_t i = 4; i < batches.size(); ++i)
        EXPECT_EQ(answered[i], alone[i]) << "batch " << i;
}

// The same on two threads, where the shards of the open matches fork on their lanes: the
// calls a forked shard's matches make while its copy saves are made again to its new shard,
// once each, and the other shards are not held for it.
TEST_F(ForkedReload, OnTwoThreadsAShardsCallsMadeWhileItsCopySavesAreMadeAgainOnceEach) {
    const std::string straight = straight_transcript(2);
    ASSERT_NE(straight.find("test.count"), std::string::npos);
    std::string transcript;
    const host::ReloadReport report = reload_midway("", 25, transcript, 2);
    SCOPED_TRACE(report.describe());
    EXPECT_TRUE(report.ok);
    EXPECT_TRUE(report.staged);
    EXPECT_GE(report.forked_shards, 1u);
    EXPECT_EQ(report.fork_problem, "");
    EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
    // The batches pushed while the saves were held (after a fork was made), of the forked
    // shards' matches.
    EXPECT_GE(report.calls_made_again, 1u);
    EXPECT_EQ(first_difference(straight, transcript), "");
}

TEST_F(ForkedReload, OnTwoThreadsAShardWhoseCopyDiesIsCarriedAndChangesNothing) {
    const std::string straight = straight_transcript(2);
    std::string transcript;
    const host::ReloadReport report = reload_midway("forked_save = \"die\"\n", 5, transcript, 2);
    SCOPED_TRACE(report.describe());
    EXPECT_TRUE(report.ok);
    EXPECT_EQ(report.state.rfind("carried (", 0), 0u);
    EXPECT_NE(report.fork_problem.find("the forked copy ended before it answered"),
              std::string::npos);
    EXPECT_EQ(first_difference(straight, transcript), "");
}

TEST_F(ForkedReload, OnTwoThreadsEndingAMatchDoesNotWaitForAForkedShard) {
    const auto report = end_a_match_while_reloading(2);
    ASSERT_TRUE(report);
    EXPECT_GE(report->forked_shards, 1u);
}

// The embedding API's reload that does not hold the stream (arbiter_host_begin_reload), on
// one thread (forked) and on two (shard by shard; the counts plugin's few players are
// carried). On one thread the copy's save waits for a file, so the reload is seen under
// way while batches keep coming, and a second one is refused meanwhile. Either way it
// ends, and every assessment is what the stream gives without a reload: the counts
// carried, no batch lost or seen twice.
TEST_F(ForkedReload, TheEmbeddingApisReloadGoesOnBesideTheStream) {
    for (const int threads : {1, 2}) {
        SCOPED_TRACE(threads);
        auto assessments_of = [](arbiter_host* host) {
            const arbiter_assessment* all = nullptr;
            uint64_t count = 0;
            EXPECT_EQ(arbiter_host_assessments(host, &all, &count), ARBITER_OK);
            std::string json;
            for (uint64_t i = 0; i < count; ++i)
                json += std::string(all[i].json) + "\n";
            return json;
        };
        TempDir dir;
        const auto gate = dir.path() / "let-the-save-go";
        const std::string plain = counts_config(dir.path() / "plain", "", threads);
        arbiter_host* straight = nullptr;
        ASSERT_EQ(arbiter_host_create_from_text(plain.data(), plain.size(), dir.path().c_str(),
                                                &straight),
                  ARBITER_OK);
        for (const auto& batch : *batches_)
            ASSERT_EQ(arbiter_host_push(straight, batch.data(), batch.size()), ARBITER_OK);
        const std::string expected = assessments_of(straight);
        arbiter_host_destroy(straight);

        const std::string held = counts_config(
            dir.path() / "held", "forked_save_waits_for = " + toml_literal(gate) + "\n", threads);
        arbiter_host* host = nullptr;
        ASSERT_EQ(
            arbiter_host_create_from_text(held.data(), held.size(), dir.path().c_str(), &host),
            ARBITER_OK)
            << arbiter_host_last_error(host);
        EXPECT_EQ(arbiter_host_reload_outcome(host), ARBITER_ERR_INVALID_ARGUMENT);
        EXPECT_EQ(arbiter_host_begin_reload(host, nullptr), ARBITER_ERR_INVALID_ARGUMENT);
        EXPECT_EQ(arbiter_host_begin_reload(host, "nope"), ARBITER_ERR_REFUSED);
        EXPECT_NE(std::string(arbiter_host_last_error(host)).find("no plugin 'nope'"),
                  std::string::npos);
        const size_t start = batches_->size() / 3;
        size_t i = 0;
        for (; i < start; ++i)
            ASSERT_EQ(arbiter_host_push(host, (*batches_)[i].data(), (*batches_)[i].size()),
                      ARBITER_OK);
        ASSERT_EQ(arbiter_host_begin_reload(host, "counts"), ARBITER_OK)
            << arbiter_host_last_error(host);
        if (threads == 1) {
            EXPECT_EQ(arbiter_host_begin_reload(host, "counts"), ARBITER_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(arbiter_host_last_error(host)).find("still under way"),
                      std::string::npos);
            // Batches go on while it loads and while the copy's save is held.
            for (; i < start + 20; ++i) {
                ASSERT_EQ(arbiter_host_push(host, (*batches_)[i].data(), (*batches_)[i].size()),
                          ARBITER_OK);
                EXPECT_EQ(arbiter_host_reload_outcome(host), ARBITER_PENDING);
            }
        }
        std::ofstream(gate).put('\n');
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        arbiter_status outcome = ARBITER_PENDING;
        while (outcome == ARBITER_PENDING && std::chrono::steady_clock::now() < deadline) {
            if (i < batches_->size()) {
                ASSERT_EQ(arbiter_host_push(host, (*batches_)[i].data(), (*batches_)[i].size()),
                          ARBITER_OK);
                ++i;
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            outcome = arbiter_host_reload_outcome(host);
        }
        EXPECT_EQ(outcome, ARBITER_OK) << arbiter_host_last_error(host);
        EXPECT_EQ(arbiter_host_reload_outcome(host), ARBITER_OK);  // asked again: the same
        for (; i < batches_->size(); ++i)
            ASSERT_EQ(arbiter_host_push(host, (*batches_)[i].data(), (*batches_)[i].size()),
                      ARBITER_OK);
        EXPECT_EQ(first_difference(expected, assessments_of(host)), "");
        // A second reload once the first has ended, left to end with the host.
        EXPECT_EQ(arbiter_host_begin_reload(host, "counts"), ARBITER_OK);
        arbiter_host_destroy(host);
    }
}

// A catch-up that outruns its patience slows the stream: each call waits until the new
// instance has made two kept calls again, so that the kept calls run out even when the
// caller never stops and the new instance answers no faster than the old (each batch takes
// 300 us in both). Patience 0 here: the throttle holds from the catch-up's start.
TEST_F(ForkedReload, ACatchUpPastItsPatienceSlowsTheCallerUntilItEnds) {
    TempDir dir;
    const auto gate = dir.path() / "let-the-save-go";
    Counts counts(dir.path(), gate, "batch_us = 300\n");
    // 100 calls kept while the save is held; the calls after it, at least twice that many.
    constexpr size_t kKept = 100;
    const std::vector<host::VerifiedBatch> batches = verified_batches(4 * kKept);
    const std::vector<std::string> alone = counts.evidence_alone(batches);
    auto old = counts.make();
    auto fresh = counts.make();
    std::string error;
    auto handover =
        host::SnapshotHandover::begin(old, fresh, error, host::SnapshotHandover::kKeptBytes,
                                      std::chrono::seconds(60), std::chrono::seconds(0));
    ASSERT_TRUE(handover) << error;
    size_t i = 0;
    for (; i < kKept; ++i)
        ASSERT_EQ(handover->on_batch(batches[i]).signals.at(0).evidence_json, alone[i]);
    std::ofstream(gate).put('\n');
    // Once the catch-up has begun (30 ms of calls to make again), the caller goes on
    // without a pause.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!handover->result().throttled && !handover->done() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    for (; i < batches.size() && !handover->done(); ++i)
        ASSERT_EQ(handover->on_batch(batches[i]).signals.at(0).evidence_json, alone[i]);
    ASSERT_TRUE(handover->done()) << "the catch-up never ended: the caller kept up with it";
    for (; i < batches.size(); ++i)
        ASSERT_EQ(handover->on_batch(batches[i]).signals.at(0).evidence_json, alone[i]);
    const auto result = handover->result();
    EXPECT_EQ(result.outcome, host::SnapshotHandover::Outcome::carried) << result.error;
    EXPECT_TRUE(result.throttled);
    EXPECT_GT(result.throttled_us, 0.0);
    EXPECT_GE(result.calls_made_again, kKept);
}

// Whatever changes the plugins while a staged install is under way waits for it: a
// config change, a plain reload, ending a match by hand.
TEST_F(Threads, WhatChangesThePluginsWaitsForAStagedInstall) {
    TempDir dir;
    host::Host host(parse(config_text(dir.path(), "threads = 2\n"), dir.path()));
    for (size_t i = 0; i < batches_->size() / 2; ++i)
        ASSERT_FALSE(host.push((*batches_)[i]));
    auto settings_of = [&](const std::string& name) {
        for (const auto& slot : host.plugins())
            if (slot.settings.name == name) return slot.settings;
        return host::PluginSettings{};
    };
    for (int change = 0; change < 3; ++change) {
        SCOPED_TRACE(change);
        ASSERT_FALSE(host.begin_install(host.prepare_plugin(settings_of("reference"))));
        ASSERT_TRUE(host.installing());
        if (change == 0) {
            const auto reports = host.apply_config(host.config());
            EXPECT_TRUE(reports.empty());
        } else if (change == 1) {
            EXPECT_TRUE(host.reload_plugin("lagpool").ok);
        } else {
            const auto open = host.open_matches();
            ASSERT_FALSE(open.empty());
            host.end_match(open.front().first, open.front().second);
        }
        // The staged install ended first; its report waits, and nothing is under way.
        const auto report = host.finished_install();
        ASSERT_TRUE(report);
        EXPECT_TRUE(report->ok) << report->describe();
        EXPECT_TRUE(report->staged);
        EXPECT_FALSE(host.installing());
    }
}

}  // namespace
}  // namespace arbiter::test
