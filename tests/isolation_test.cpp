// Plugins the operator does not trust, run isolated (`isolation = "process"`): real
// libraries that crash, spin, leak, open a socket, write a file or fork, each in a
// confined child. The host keeps running, the other plugins get every batch, and the bad
// one is restarted (from its checkpoint, its history intact) and then quarantined, with
// messages that say what it did. The bundled plugins isolated give the same assessments,
// byte for byte, as in the host's process.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/host.hpp"
#include "support/cli.hpp"
#include "support/host_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kArbiter = ARBITER_EXE;
const std::string kSampleMatch = std::string(SAMPLES_DIR) + "/sample-match.arbev";

constexpr bool kSanitized =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

// The sample's config: the bundled plugins, each isolated when asked.
std::string bundled_config(bool isolated) {
    std::string text = "[host]\nserver_id = \"isolation\"\n" + runner_user_line();
    for (const char* name : {"reference", "accounts", "lagpool", "kaladin", "luanti"}) {
        text += std::string("\n[plugins.") + name + "]\nlibrary = \"" + name + "\"\n";
        if (isolated) text += "isolation = \"process\"\n";
    }
    // As samples/server_config.toml sets it.
    text += "[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = 1.1\nwindow_s = 1.0\n";
    return text;
}

// A leaking plugin touches 64 MiB a call: on a loaded machine that can take longer than
// 300 ms, and the deadline would end it before the memory limit does. It gets time enough
// for the limit to be what ends it.
std::string misbehaving_table(const std::string& mode, const std::string& extra = "") {
    const char* deadline_ms = mode == "leak" ? "20000" : "300";
    return plugin_table("bad", test_plugin("misbehaves")) +
           "isolation = \"process\"\ndeadline_ms = " + deadline_ms +
           "\nmemory_mb = 256\nmax_restarts = 2\n" + extra + "[plugins.bad.config]\nmode = \"" +
           mode + "\"\n";
}

TEST(Isolation, TheBundledPluginsIsolatedAssessTheSampleByteForByteAsInProcess) {
    TempDir dir;
    {
        std::ofstream(dir / "in_process.toml") << bundled_config(false);
        std::ofstream(dir / "isolated.toml") << bundled_config(true);
    }
    const auto in_process = run_command(
        {kArbiter, "replay", (dir / "in_process.toml").string(), kSampleMatch, "--json"}, dir.path());
    const auto isolated = run_command(
        {kArbiter, "replay", (dir / "isolated.toml").string(), kSampleMatch, "--json"}, dir.path());
    ASSERT_EQ(in_process.exit_status, 0) << in_process.err;
    ASSERT_EQ(isolated.exit_status, 0) << isolated.err;
    EXPECT_EQ(lines_of(in_process.out).size(), 6u);
    EXPECT_EQ(isolated.out, in_process.out);
}

// The README's mixed match (40 honest players and 3 of each cheating profile, 2 minutes):
// every check of every area fires somewhere in it, through the boundary and back.
TEST(Isolation, TheBundledPluginsIsolatedAssessTheReadmesMixedMatchByteForByte) {
    TempDir dir;
    {
        std::ofstream(dir / "in_process.toml") << bundled_config(false);
        std::ofstream(dir / "isolated.toml") << bundled_config(true);
    }
    const auto mix = (dir / "mix.arbev").string();
    const auto simulated = run_command(
        {kArbiter, "simulate", mix, "--seed", "7", "--duration-s", "120", "--tick-rate", "20",
         "--quiet", "--players",
         "honest=40,speed_hack=3,teleport=3,clock_speedup=3,fly=3,hit_range=3,hit_through_wall=3,"
         "rapid_fire=3,item_dup=3,xp_rate=3,reconnect_spam=3,metronome=3,reaction_bot=3,rate_bot=3,"
         "humanised_bot=3"},
        dir.path());
    ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
    const auto in_process = run_command(
        {kArbiter, "replay", (dir / "in_process.toml").string(), mix, "--json", "--quiet"},
        dir.path());
    const auto isolated = run_command(
        {kArbiter, "replay", (dir / "isolated.toml").string(), mix, "--json", "--quiet"},
        dir.path());
    ASSERT_EQ(in_process.exit_status, 0) << in_process.err;
    ASSERT_EQ(isolated.exit_status, 0) << isolated.err;
    EXPECT_EQ(lines_of(in_process.out).size(), 82u);
    EXPECT_EQ(isolated.out, in_process.out);
}

TEST(Isolation, AnIsolatedPluginIsLoadedInAChildAndNegotiatedThere) {
    TempDir dir;
    LogCapture log;
    host::Host host(parse(host_table(dir / "work") + misbehaving_table("none"), dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    const auto& slot = host.plugins()[0];
    EXPECT_EQ(slot.library->identity().name, "test-misbehaves");
    EXPECT_TRUE(slot.library->has(ARB_CAP_STATE));
    EXPECT_FALSE(slot.library->in_process());
    const auto status = slot.instance->isolation();
    EXPECT_TRUE(status.isolated);
    EXPECT_GT(status.pid, 0);
    EXPECT_NE(status.pid, ::getpid());
    EXPECT_THAT(log.text(), HasSubstr("isolated in process " + std::to_string(status.pid)));
    // The plugin's gauge crosses back under its own name.
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 3; ++i) ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    EXPECT_EQ(host.metrics().get("bad.seen"), 3.0);
}

TEST(Isolation, AnIsolatedPluginLogsAndIsReconfiguredThroughTheBoundary) {
    TempDir dir;
    LogCapture log;
    const std::string base = host_table(dir / "work") +
                             "[plugins.reference]\nlibrary = " + toml_literal(reference_plugin()) +
                             "\nisolation = \"process\"\n[plugins.reference.config.movement]\n";
    host::Host host(parse(base + "max_speed = 20.0\n", dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    const int64_t pid = host.plugins()[0].instance->isolation().pid;
    // A new table, taken live (ARB_CAP_RECONFIGURE) by the same child.
    const auto reports = host.apply_config(parse(base + "max_speed = 25.0\n", dir.path()));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(reports[0].ok) << reports[0].describe();
    EXPECT_EQ(reports[0].change, "reconfigured");
    EXPECT_EQ(host.plugins()[0].instance->isolation().pid, pid);
    // A table the plugin refuses is refused placed at its key, as in process.
    const auto refused = host.apply_config(parse(base + "max_speed = -3.0\n", dir.path()));
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_FALSE(refused[0].ok);
    EXPECT_THAT(refused[0].error, HasSubstr("plugins.reference.config.movement.max_speed"));

    // The plugin's own log lines cross too, tagged with its key.
    host::Host logged(parse(host_table(dir / "work2") + misbehaving_table("none"), dir.path()));
    EXPECT_THAT(log.text(), HasSubstr("[plugin bad] created, mode none"));
}

TEST(Isolation, AChangeOfIsolationInTheConfigMovesThePluginAcrossTheBoundary) {
    TempDir dir;
    const std::string base = host_table(dir / "work") + "[plugins.reference]\nlibrary = " +
                             toml_literal(reference_plugin()) + "\n";
    host::Host host(parse(base, dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    ASSERT_FALSE(host.plugins()[0].instance->isolation().isolated);

    // Into a child: a new instance there, not the old one under new settings.
    const auto isolated = host.apply_config(parse(base + "isolation = \"process\"\n", dir.path()));
    ASSERT_EQ(isolated.size(), 1u);
    EXPECT_TRUE(isolated[0].ok) << isolated[0].describe();
    EXPECT_EQ(isolated[0].change, "reload");
    const host::IsolationStatus child = host.plugins()[0].instance->isolation();
    EXPECT_TRUE(child.isolated);
    EXPECT_GT(child.pid, 0);
    EXPECT_NE(child.pid, ::getpid());

    // A new limit for the child is a new child.
    const auto limited = host.apply_config(
        parse(base + "isolation = \"process\"\nmemory_mb = 512\n", dir.path()));
    ASSERT_EQ(limited.size(), 1u);
    EXPECT_EQ(limited[0].change, "reload");
    EXPECT_NE(host.plugins()[0].instance->isolation().pid, child.pid);

    // And back into the host's process.
    const auto back = host.apply_config(parse(base, dir.path()));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].change, "reload");
    EXPECT_FALSE(host.plugins()[0].instance->isolation().isolated);
}

struct BadCase {
    const char* mode;
    const char* says;  // in the quarantine reason
};

class BadPlugin : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPlugin, IsRestartedThenQuarantinedWhileTheHostAndTheOthersGoOn) {
    const BadCase bad = GetParam();
    if (std::string(bad.mode) == "leak" && kSanitized)
        GTEST_SKIP() << "a sanitizer build runs isolated plugins without a memory limit";
    TempDir dir;
    LogCapture log;
    const auto written = dir / "written-by-plugin.txt";
    host::Host host(parse(host_table(dir / "work") + plugin_table("echo", test_plugin("echo")) +
                              misbehaving_table(bad.mode) + "path = " + toml_literal(written) + "\n",
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    auto sink = std::make_shared<RecordingSink>();
    host.add_sink(sink);

    BatchBuilder builder(kTestRelay, kTestMatch);
    const int batches = 24;
    for (int i = 0; i < batches; ++i)
        ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    host.close();

    // The host took every batch, and the good plugin answered every one.
    EXPECT_EQ(host.counters().batches, static_cast<uint64_t>(batches));
    EXPECT_EQ(sink->count("echo", "test.echo"), static_cast<size_t>(batches));
    const auto& slot = host.plugins()[1];
    const auto status = slot.instance->isolation();
    EXPECT_FALSE(slot.instance->takes_calls());
    EXPECT_EQ(status.restarts, 2u);
    EXPECT_EQ(status.pid, 0);
    EXPECT_THAT(status.quarantined, HasSubstr("3 fault(s) within 300 s (max_restarts = 2)"));
    EXPECT_THAT(status.quarantined, HasSubstr(bad.says));
    EXPECT_THAT(log.text(), HasSubstr("plugin 'bad': isolated: its process (pid "));
    EXPECT_THAT(log.text(), HasSubstr("starting a new process (1 of 2 restarts within 300 s)"));
    EXPECT_THAT(log.text(), HasSubstr("plugin 'bad': quarantined after 3 fault(s)"));
    EXPECT_THAT(log.text(), HasSubstr("`arbiter ctl reload bad`"));
    EXPECT_EQ(host.metrics().get("host.plugin_quarantined.bad"), 1.0);
    EXPECT_FALSE(std::filesystem::exists(written));
}

INSTANTIATE_TEST_SUITE_P(
    Isolation, BadPlugin,
    ::testing::Values(BadCase{"segfault", "crashed with SIGSEGV (signal 11)"},
                      BadCase{"spin", "took longer than its deadline of 300 ms and was killed"},
                      BadCase{"leak", "ran out of memory"},
                      BadCase{"socket", "may not make, socket (system call"},
                      BadCase{"write_file", "may not make, openat (system call"},
                      BadCase{"fork", "may not make, clone (system call"}),
    [](const auto& test) { return std::string(test.param.mode); });

// A plugin that crashes once goes on with its history: the checkpoint and the calls since
// are fed to the new process; the batch it crashed on is the only one it misses.
class CrashOnce : public ::testing::TestWithParam<int> {};

TEST_P(CrashOnce, KeepsThePluginsHistoryAndMissesOnlyTheBatchItCrashedOn) {
    const int checkpoint_batches = GetParam();
    TempDir dir;
    LogCapture log;
    host::Host host(parse(host_table(dir / "work") +
                              misbehaving_table("segfault", "checkpoint_batches = " +
                                                                std::to_string(checkpoint_batches) +
                                                                "\n") +
                              "at_batch = 5\nevery = false\n",
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 10; ++i) ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    const auto& slot = host.plugins()[0];
    const auto status = slot.instance->isolation();
    EXPECT_TRUE(slot.instance->takes_calls());
    EXPECT_EQ(status.restarts, 1u);
    EXPECT_THAT(status.last_fault, HasSubstr("crashed with SIGSEGV"));
    // Ten batches, one of which it crashed on.
    EXPECT_EQ(host.metrics().get("bad.seen"), 9.0);
    EXPECT_EQ(slot.stats.errors, 1u);
    EXPECT_THAT(log.text(), HasSubstr("the plugin did not see this batch (restarted)"));
    if (checkpoint_batches == 2) {
        // Checkpoints after batches 2 and 4: nothing to feed again.
        EXPECT_EQ(status.replayed, 0u);
        EXPECT_THAT(log.text(), HasSubstr("restored from its checkpoint"));
    } else {
        // No checkpoint yet: a fresh instance, fed the four batches before the crash.
        EXPECT_EQ(status.replayed, 4u);
        EXPECT_THAT(log.text(), HasSubstr("started empty, as it was created, then fed again the 4 call(s)"));
    }
}

INSTANTIATE_TEST_SUITE_P(Isolation, CrashOnce, ::testing::Values(2, 1000));

TEST(Isolation, TheOtherPluginsAssessTheSampleAsWithoutTheBadOne) {
    TempDir dir;
    {
        std::ofstream(dir / "alone.toml") << bundled_config(false);
        std::ofstream(dir / "beside.toml")
            << bundled_config(false) + misbehaving_table("segfault") + "at_batch = 100\n";
    }
    const auto alone = run_command(
        {kArbiter, "replay", (dir / "alone.toml").string(), kSampleMatch, "--json"}, dir.path());
    const auto beside = run_command(
        {kArbiter, "replay", (dir / "beside.toml").string(), kSampleMatch, "--json"}, dir.path());
    ASSERT_EQ(alone.exit_status, 0) << alone.err;
    EXPECT_EQ(beside.out, alone.out);
    EXPECT_THAT(beside.err, HasSubstr("plugin 'bad': quarantined after 3 fault(s)"));
    EXPECT_THAT(beside.err, HasSubstr("crashed with SIGSEGV"));
}

TEST(Isolation, AReloadEndsAQuarantineAndCarriesTheStateAcrossTheBoundary) {
    TempDir dir;
    LogCapture log;
    std::string config = host_table(dir / "work") + misbehaving_table("none");
    host::Host host(parse(config, dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 4; ++i) ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    const int64_t first_pid = host.plugins()[0].instance->isolation().pid;

    const auto report = host.reload_plugin("bad");
    ASSERT_TRUE(report.ok) << report.describe();
    EXPECT_THAT(report.state, HasSubstr("carried"));
    const auto status = host.plugins()[0].instance->isolation();
    EXPECT_NE(status.pid, first_pid);
    ASSERT_FALSE(host.push(echo_batch(builder, 5'000'000)));
    EXPECT_EQ(host.metrics().get("bad.seen"), 5.0);
}

TEST(Isolation, AQuarantinedPluginRunsAgainAfterAReload) {
    TempDir dir;
    LogCapture log;
    host::Host host(parse(host_table(dir / "work") + misbehaving_table("segfault") +
                              "at_batch = 2\n",
                          dir.path()));
    BatchBuilder builder(kTestRelay, kTestMatch);
    for (int i = 0; i < 6; ++i) ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000 * (i + 1))));
    ASSERT_FALSE(host.plugins()[0].instance->takes_calls());
    // Still the same file: a reload is the operator's "try again".
    const auto report = host.reload_plugin("bad");
    ASSERT_TRUE(report.ok) << report.describe();
    EXPECT_THAT(report.state, HasSubstr("started fresh"));
    EXPECT_TRUE(host.plugins()[0].instance->takes_calls());
}

TEST(Isolation, ARefusedConfigReadsAsItDoesInProcess) {
    TempDir dir;
    auto error_of = [&](bool isolated) {
        host::Host host(parse(host_table(dir / (isolated ? "w1" : "w2")) +
                                  plugin_table("picky", test_plugin("config-refused")) +
                                  (isolated ? "isolation = \"process\"\n" : "isolation = \"none\"\n") +
                                  "[plugins.picky.config]\nthreshold = 7\n",
                              dir.path()));
        return joined(host.plugin_errors());
    };
    const std::string in_process = error_of(false);
    EXPECT_THAT(in_process, HasSubstr("refused its config"));
    EXPECT_EQ(error_of(true), in_process);
}

TEST(Isolation, AMissingRunnerIsAClearRefusalAndTheOthersLoad) {
    TempDir dir;
    host::Host host(parse("[host]\nwork_dir = " + toml_literal(dir / "work") +
                              "\nplugin_runner = " + toml_literal(dir / "no-such-runner") + "\n" +
                              runner_user_line() +
                              plugin_table("echo", test_plugin("echo")) + misbehaving_table("none"),
                          dir.path()));
    const std::string errors = joined(host.plugin_errors());
    EXPECT_THAT(errors, HasSubstr("plugin 'bad'"));
    EXPECT_THAT(errors, HasSubstr("could not start the plugin runner"));
    EXPECT_THAT(errors, HasSubstr("no-such-runner"));
    EXPECT_TRUE(host.plugins()[0].active());
}

TEST(Isolation, APluginThatIsNoLibraryIsRefusedByTheChildAsByTheHost) {
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") +
                              plugin_table("text", test_plugin("not-a-library")) +
                              "isolation = \"process\"\n",
                          dir.path()));
    EXPECT_THAT(joined(host.plugin_errors()), HasSubstr("not a loadable shared library"));
}

}  // namespace
}  // namespace arbiter::test
