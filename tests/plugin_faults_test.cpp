// Faults of a plugin that loaded fine, met while it runs: an exception out of on_batch,
// and numbers no signal may carry. The host contains both: it logs and counts them,
// every other plugin gets the batch, and the faulty plugin gets the next one.
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/host.hpp"
#include "support/host_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PluginFaults, AnExceptionInOnBatchIsLoggedCountedAndContained) {
    TempDir dir;
    LogCapture log;
    // The thrower first, so that the echo plugin is called after the failure.
    host::Host host(parse(host_table(dir / "work") +
                              plugin_table("thrower", test_plugin("throws")) +
                              plugin_table("echo", test_plugin("echo")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty());
    auto sink = std::make_shared<RecordingSink>();
    host.add_sink(sink);

    // Sequences 0 to 3: the plugin throws on 0 and 2 and works on 1 and 3.
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 4; ++i)
        ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));

    EXPECT_EQ(host.counters().batches, 4u);
    EXPECT_EQ(host.metrics().get("host.plugin_errors.thrower"), 2.0);
    EXPECT_EQ(host.metrics().get("host.plugin_errors.echo"), 0.0);
    // Logged with the plugin's key, the call, the status and the exception's message.
    EXPECT_THAT(log.text(),
                HasSubstr("plugin 'thrower': on_batch failed for match test-relay/7 with "
                          "ARB_ERR_INTERNAL: index out of range in batch 0"));
    EXPECT_THAT(log.text(), HasSubstr("index out of range in batch 2"));

    // Every batch reached the echo plugin, the failing ones included.
    EXPECT_EQ(sink->count("echo", "test.echo"), 4u);
    // The thrower got every later batch and worked on them.
    EXPECT_EQ(sink->count("thrower", "test.after"), 2u);
    // "Signals emitted before an error are kept" (arbiter_plugin.h, on_batch).
    EXPECT_EQ(sink->count("thrower", "test.before_throw"), 2u);

    auto player2 = host.assessment({kTestRelay, kTestMatch, 2});
    ASSERT_TRUE(player2);
    EXPECT_TRUE(find_check(*player2, "thrower", "test.after"));
    auto player1 = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(player1);
    EXPECT_TRUE(find_check(*player1, "echo", "test.echo"));
}

// Issue 17: a plugin in the host's process cannot be stopped, so a call past its
// deadline_ms is logged with the plugin, the call and the time, and counted; every batch
// is still processed, and a plugin within its deadline is not named.
TEST(PluginFaults, ACallPastItsDeadlineIsLoggedAndCounted) {
    TempDir dir;
    LogCapture log;
    host::Host host(parse(host_table(dir / "work") +
                              plugin_table("slow", test_plugin("slow")) +
                              "deadline_ms = 5\n[plugins.slow.config]\ndelay_us = 20000\n" +
                              plugin_table("echo", test_plugin("echo")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty());
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 3; ++i)
        ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    EXPECT_EQ(host.counters().batches, 3u);
    const auto& slow = host.plugins()[0];
    EXPECT_EQ(slow.stats.over_deadline, 3u);
    EXPECT_GE(slow.stats.slowest_ns, 20'000'000u);
    EXPECT_EQ(host.plugins()[1].stats.over_deadline, 0u);
    EXPECT_THAT(log.text(), HasSubstr("plugin 'slow': on_batch took "));
    EXPECT_THAT(log.text(), HasSubstr("past its deadline of 5 ms (3 call(s) so far)"));
    EXPECT_THAT(log.text(), Not(HasSubstr("plugin 'echo': on_batch took")));
}

TEST(PluginFaults, BadNumbersAreDroppedCountedAndLoggedAndNeverAssessed) {
    TempDir dir;
    LogCapture log;
    host::Host host(parse(host_table(dir / "work") +
                              plugin_table("bad", test_plugin("bad-numbers")) +
                              plugin_table("echo", test_plugin("echo")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty());
    auto sink = std::make_shared<RecordingSink>();
    host.add_sink(sink);

    BatchBuilder builder(kTestRelay, kTestMatch);
    ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000)));
    ASSERT_FALSE(host.push(echo_batch(builder, 2'000'000)));

    // Four bad signals per batch, two batches.
    EXPECT_EQ(host.metrics().get("host.signals_dropped.bad"), 8.0);
    EXPECT_EQ(host.metrics().get("host.signals_dropped.echo"), 0.0);
    // The plugin was told each time (emit returned an error): it counted them itself.
    EXPECT_EQ(host.metrics().get("bad.refused"), 8.0);
    // A dropped signal is not a failed call.
    EXPECT_EQ(host.metrics().get("host.plugin_errors.bad"), 0.0);

    const std::string text = log.text();
    EXPECT_THAT(
        text,
        HasSubstr(
            "plugin 'bad': dropped a signal (code 'test.nan_score', player 3): score is nan"));
    EXPECT_THAT(text,
                HasSubstr("(code 'test.score_above_one', player 3): score 1.5 is outside [0, 1]"));
    EXPECT_THAT(text, HasSubstr("(code 'test.infinite_confidence', player 3): confidence is inf"));
    EXPECT_THAT(
        text,
        HasSubstr(
            "(code 'test.negative_confidence', player 3): confidence -0.5 is outside [0, 1]"));

    // Only the valid signal got through, to the sinks and to the assessment.
    for (const auto& signal : sink->signals) {
        if (signal.plugin == "bad") {
            EXPECT_EQ(signal.code, "test.valid");
        }
    }
    EXPECT_EQ(sink->count("bad", "test.valid"), 2u);
    auto player3 = host.assessment({kTestRelay, kTestMatch, 3});
    ASSERT_TRUE(player3);
    ASSERT_EQ(player3->checks.size(), 1u);
    EXPECT_EQ(player3->checks[0].code, "test.valid");
    EXPECT_DOUBLE_EQ(player3->combined_score, 0.2);
    EXPECT_EQ(player3->action, host::Action::clear);

    // The plugin beside it saw both batches.
    EXPECT_EQ(sink->count("echo", "test.echo"), 2u);
}

}  // namespace
}  // namespace arbiter::test
