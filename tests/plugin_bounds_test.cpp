// What a plugin may take of the host, in its process and isolated (issue 39): new metric
// names, log bytes a second, signals in one call and signals about players its match never
// had are bounded on the host's side, counted, and said as a count; an isolated plugin's
// threads are bounded and it is stopped between calls; the runner is held to the plugin
// library's file rules, and a root host starts it as an unprivileged user or not at all.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/host.hpp"
#include "arbiter/host/isolated_instance.hpp"
#include "support/host_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// The misbehaving plugin in `mode` from its first batch, in the host's process or not.
std::string bad_plugin(const fs::path& work, const std::string& mode, bool isolated,
                       const std::string& table_extra = "", const std::string& config_extra = "") {
    return host_table(work) + plugin_table("bad", test_plugin("misbehaves")) +
           (isolated ? "isolation = \"process\"\n" : "") + table_extra +
           "[plugins.bad.config]\nmode = \"" + mode + "\"\nat_batch = 1\n" + config_extra;
}

// One match's batches, the echo batch again and again (players 1 to 3 join in the first).
class Match {
  public:
    void push(host::Host& host, int batches) {
        for (int i = 0; i < batches; ++i, ++sent_)
            ASSERT_FALSE(host.push(echo_batch(builder_, 1'000'000 * (sent_ + 1))));
        host.flush();
    }

  private:
    BatchBuilder builder_{kTestRelay, kTestMatch};
    int sent_ = 0;
};

void push(host::Host& host, int batches) {
    Match().push(host, batches);
}

const host::PluginSlot* slot_of(const host::Host& host, const std::string& name) {
    for (const auto& slot : host.plugins())
        if (slot.settings.name == name) return &slot;
    return nullptr;
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// One field of /proc/PID/status ("State", "Threads", "Uid"), or "".
std::string proc_status(int64_t pid, const std::string& field) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with(field + ":")) return line.substr(field.size() + 1);
    return "";
}

class Bounds : public ::testing::TestWithParam<bool> {};  // isolated or in process

TEST_P(Bounds, ALogFloodIsCutAtItsBytesASecondAndSaidAsACount) {
    TempDir dir;
    LogCapture log;
    host::Host host(parse(bad_plugin(dir / "work", "log_flood", GetParam(),
                                     "log_bytes_per_s = 2048\n", "count = 2000\n"),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    push(host, 3);
    // 6,000 lines of 100 bytes were written; about a second's worth (2 KiB: some 20) passes.
    const size_t shown = count_of(log.text(), std::string(100, 'x'));
    EXPECT_GT(shown, 0u);
    EXPECT_LT(shown, 200u);
    const auto refused = slot_of(host, "bad")->bounds->refused();
    EXPECT_EQ(refused.log_lines + shown, 6000u);
    EXPECT_THAT(log.text(), HasSubstr("log line(s)"));
    EXPECT_THAT(log.text(), HasSubstr("log_bytes_per_s = 2048"));
    // Said as a count, not a line per refusal.
    EXPECT_LT(count_of(log.text(), "dropped, past its bounds"), 5u);
}

TEST_P(Bounds, NewMetricNamesStopAtTheBoundAndTheOldOnesStillCount) {
    TempDir dir;
    host::Host host(parse(bad_plugin(dir / "work", "metric_names", GetParam(),
                                     "max_metric_names = 10\n", "count = 50\n"),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    push(host, 4);
    size_t names = 0;
    for (const auto& [name, value] : host.metrics().snapshot())
        if (name.starts_with("bad.") && name.find('#') == std::string::npos) ++names;
    EXPECT_EQ(names, 10u);
    EXPECT_GT(slot_of(host, "bad")->bounds->refused().metric_names, 0u);
}

TEST_P(Bounds, SignalsAboutPlayersTheMatchNeverHadAreDropped) {
    TempDir dir;
    RecordingSink* sink = nullptr;
    host::Host host(parse(bad_plugin(dir / "work", "strangers", GetParam(), "", "count = 500\n"),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    auto recording = std::make_shared<RecordingSink>();
    sink = recording.get();
    host.add_sink(recording);
    push(host, 3);
    // One signal a batch about player 1, who joined; none about the 1,500 strangers.
    EXPECT_EQ(sink->count("bad", "test.misbehaves"), 3u);
    for (const auto& signal : sink->signals) EXPECT_LE(signal.player.player, 3u);
    EXPECT_EQ(slot_of(host, "bad")->bounds->refused().signals_about_strangers, 1500u);
    EXPECT_LE(host.assessments().size(), 3u);
}

TEST_P(Bounds, OneCallKeepsNoMoreSignalsThanItsBound) {
    TempDir dir;
    host::Host host(parse(bad_plugin(dir / "work", "signal_flood", GetParam(),
                                     "max_signals_per_call = 100\n", "count = 700\n"),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    auto sink = std::make_shared<RecordingSink>();
    host.add_sink(sink);
    push(host, 2);
    EXPECT_EQ(sink->count("bad", "test.misbehaves"), 200u);
    EXPECT_EQ(slot_of(host, "bad")->bounds->refused().signals_over_bound, 1200u);
}

INSTANTIATE_TEST_SUITE_P(InProcessAndIsolated, Bounds, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "Isolated" : "InProcess"; });

TEST(IsolatedBounds, AChildStartsNoMoreThreadsThanItsBound) {
    TempDir dir;
    host::Host host(parse(bad_plugin(dir / "work", "threads", true,
                                     "max_threads = 8\nmax_restarts = 100\n", "count = 200\n"),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    push(host, 1);
    const host::IsolationStatus status = slot_of(host, "bad")->instance->isolation();
    // Either the runner's limit held the plugin to its threads, or the host saw more and
    // stopped the child; never 200 threads.
    if (status.pid > 0) {
        EXPECT_LE(std::stoul(proc_status(status.pid, "Threads")), 8u);
        EXPECT_LT(host.metrics().get("bad.threads_started"), 8.0);
    } else {
        EXPECT_THAT(status.last_fault, HasSubstr("max_threads = 8"));
    }
}

TEST(IsolatedBounds, AChildIsStoppedBetweenCallsUnlessAllowedToRun) {
    TempDir dir;
    for (const bool may_run : {false, true}) {
        host::Host host(parse(bad_plugin(dir / (may_run ? "w2" : "w1"), "spin_thread", true,
                                         may_run ? "run_between_calls = true\n" : ""),
                              dir.path()));
        ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
        Match match;
        match.push(host, 2);  // a thread spins from the first batch on
        const int64_t pid = slot_of(host, "bad")->instance->isolation().pid;
        ASSERT_GT(pid, 0);
        // SIGSTOP lands a moment after it is sent: wait for the state (a stopped child
        // shows it within milliseconds; a running one never does).
        std::string state;
        for (int i = 0; i < 50; ++i) {
            state = proc_status(pid, "State");
            if (state.find("stopped") != std::string::npos) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (may_run)
            EXPECT_THAT(state, ::testing::Not(HasSubstr("stopped"))) << state;
        else
            EXPECT_THAT(state, HasSubstr("stopped")) << state;
        // And it answers the next call as before.
        match.push(host, 1);
        EXPECT_EQ(slot_of(host, "bad")->instance->isolation().restarts, 0u);
    }
}

// The runner as an attacker who may write it would leave it: refused like a library.
TEST(IsolatedBounds, ARunnerOthersMayWriteIsRefused) {
    TempDir dir;
    const fs::path runner = host::default_plugin_runner();
    for (const bool loose_folder : {false, true}) {
        const fs::path folder = dir / (loose_folder ? "open-folder" : "folder");
        fs::create_directories(folder);
        const fs::path copy = folder / "arbiter-plugin-runner";
        fs::copy_file(runner, copy);
        ::chmod(copy.c_str(), loose_folder ? 0755 : 0777);
        ::chmod(folder.c_str(), loose_folder ? 0777 : 0755);
        host::Host host(parse("[host]\nwork_dir = " + toml_literal(dir / "work") +
                                  "\nplugin_runner = " + toml_literal(copy) + "\n" +
                                  runner_user_line() +
                                  plugin_table("bad", test_plugin("misbehaves")) +
                                  "isolation = \"process\"\n",
                              dir.path()));
        const std::string errors = joined(host.plugin_errors());
        EXPECT_THAT(errors, HasSubstr("plugin runner " + copy.string()));
        EXPECT_THAT(errors, HasSubstr(loose_folder ? "others may write its folder"
                                                   : "others may write it"));
        ::chmod(folder.c_str(), 0755);
    }
}

TEST(IsolatedBounds, ARootHostStartsTheRunnerAsItsUserOrNotAtAll) {
    TempDir dir;
    const std::string plugin =
        plugin_table("bad", test_plugin("misbehaves")) + "isolation = \"process\"\n";
    if (::geteuid() != 0) {
        // Not root: a runner_user cannot be had, and is refused as such.
        host::Host host(parse("[host]\nwork_dir = " + toml_literal(dir / "work") +
                                  "\nrunner_user = \"nobody\"\n" + plugin,
                              dir.path()));
        EXPECT_THAT(joined(host.plugin_errors()), HasSubstr("needs the host to run as root"));
        return;
    }
    host::Host refused(parse("[host]\nwork_dir = " + toml_literal(dir / "w1") + "\n" + plugin,
                             dir.path()));
    EXPECT_THAT(joined(refused.plugin_errors()), HasSubstr("set [host] runner_user"));

    host::Host unknown(parse("[host]\nwork_dir = " + toml_literal(dir / "w2") +
                                 "\nrunner_user = \"no-such-user-here\"\n" + plugin,
                             dir.path()));
    EXPECT_THAT(joined(unknown.plugin_errors()), HasSubstr("no user \"no-such-user-here\""));

    host::Host host(parse("[host]\nwork_dir = " + toml_literal(dir / "w3") +
                              "\nrunner_user = \"nobody\"\n" + plugin,
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    const int64_t pid = slot_of(host, "bad")->instance->isolation().pid;
    ASSERT_GT(pid, 0);
    // Real, effective, saved and file-system uid: all nobody's (65534 on Debian).
    EXPECT_EQ(proc_status(pid, "Uid"), "\t65534\t65534\t65534\t65534");
    push(host, 2);
    EXPECT_EQ(host.metrics().get("bad.seen"), 2.0);
}

}  // namespace
}  // namespace arbiter::test
