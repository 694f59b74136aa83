// Hot reload and config changes on a running host: state carried across, a v1 → v2 → v1
// swap loading v1 afresh, broken versions refused with the old one still running, and
// each kind of config change applied.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/host.hpp"
#include "arbiter/host/reload_coordinator.hpp"
#include "arbiter/host/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using arbiter::host::Host;
using arbiter::host::ReloadReport;

class Reload : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("arbiter-reload-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        deploy(COUNTER_V1);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Replaces the watched file the way deploy tools do: a new file renamed over it.
    void deploy(const fs::path& library) {
        fs::copy_file(library, dir_ / "incoming.tmp", fs::copy_options::overwrite_existing);
        fs::rename(dir_ / "incoming.tmp", plugin_path());
    }
    void deploy_text(const std::string& text) {
        std::ofstream(dir_ / "incoming.tmp") << text;
        fs::rename(dir_ / "incoming.tmp", plugin_path());
    }
    fs::path plugin_path() const { return dir_ / "arbiter-counter.so"; }

    arbiter::host::ServerConfig config(int report_at, double weight = 1.0,
                                       const std::string& extra = "") {
        std::string text = "[plugins.counter]\nlibrary = \"" + plugin_path().string() +
                           "\"\nweight = " + std::to_string(weight) +
                           "\n[plugins.counter.config]\nreport_at = " + std::to_string(report_at) +
                           "\n" + extra;
        return arbiter::host::parse_config(text, "server_config.toml", dir_);
    }

    arbiter::host::ServerConfig config_pinned(int report_at, const std::string& sha256) {
        std::string text =
            "[plugins.counter]\nlibrary = \"" + plugin_path().string() + "\"\nsha256 = \"" +
            sha256 + "\"\n[plugins.counter.config]\nreport_at = " + std::to_string(report_at) +
            "\n";
        return arbiter::host::parse_config(text, "server_config.toml", dir_);
    }

    // One position update of a player as its own batch.
    std::vector<uint8_t> update(uint32_t player) {
        time_us_ += 1;
        builder_.add(time_us_, static_cast<uint64_t>(time_us_ / 50'000), player,
                     arbiter::build::Position{.position = {0, 0, 0}});
        return builder_.finish();
    }

    // The evidence of the counter's signal for a player, or "".
    static std::string evidence_of(const Host& host, uint32_t player) {
        auto assessment = host.assessment({"relay", 1, player});
        if (!assessment) return "";
        for (const auto& check : assessment->checks)
            if (check.code == "test.count") return check.evidence_json;
        return "";
    }

    fs::path dir_;
    arbiter::BatchBuilder builder_{"relay", 1};
    int64_t time_us_ = 0;
};

TEST_F(Reload, HistoryCarriesAcrossAReloadAndNoEventIsLostOrSeenTwice) {
    Host host(config(100));
    ASSERT_TRUE(host.plugin_errors().empty());
    for (int i = 0; i < 60; ++i)
        host.push(update(1));

    deploy(COUNTER_V2);
    ReloadReport report = host.reload_plugin("counter");
    ASSERT_TRUE(report.ok) << report.error;
    EXPECT_EQ(report.from_version, "1.0.0");
    EXPECT_EQ(report.to_version, "2.0.0");
    EXPECT_EQ(report.state.rfind("carried", 0), 0u) << report.state;
    EXPECT_TRUE(report.old_library_left);
    EXPECT_GE(report.pause_us, 0.0);
    // The pause's parts: a save and a restore were made, and they are part of it.
    EXPECT_GT(report.save_us, 0.0);
    EXPECT_GT(report.restore_us, 0.0);
    EXPECT_LE(report.save_us + report.restore_us, report.pause_us);
    EXPECT_NE(report.describe().find(" (save "), std::string::npos) << report.describe();

    for (int i = 0; i < 39; ++i)
        host.push(update(1));
    EXPECT_EQ(evidence_of(host, 1), "");  // 99 updates: not yet
    host.push(update(1));                 // the 100th, seen once, by version 2
    EXPECT_NE(evidence_of(host, 1).find("\"seen\":100"), std::string::npos) << evidence_of(host, 1);
    EXPECT_NE(evidence_of(host, 1).find("\"version\":\"2.0.0\""), std::string::npos);
}

TEST_F(Reload, SwappingBackToAnEarlierVersionLoadsItAfresh) {
    Host host(config(3));
    host.push(update(1));
    deploy(COUNTER_V2);
    ASSERT_TRUE(host.reload_plugin("counter").ok);
    host.push(update(1));
    deploy(COUNTER_V1);
    auto back = host.reload_plugin("counter");
    ASSERT_TRUE(back.ok) << back.error;
    EXPECT_EQ(back.to_version, "1.0.0");
    host.push(update(1));
    // Had the first v1 library still been in memory, its instance count would be 2.
    EXPECT_NE(evidence_of(host, 1).find("\"instances_created_by_this_library\":1"),
              std::string::npos)
        << evidence_of(host, 1);
    EXPECT_NE(evidence_of(host, 1).find("\"version\":\"1.0.0\""), std::string::npos);
}

TEST_F(Reload, ABrokenVersionIsRefusedAndTheOldOneKeepsRunning) {
    Host host(config(4));
    host.push(update(1));
    host.push(update(1));
    deploy_text("this is not a shared library");
    ReloadReport report = host.reload_plugin("counter");
    EXPECT_FALSE(report.ok);
    EXPECT_NE(report.error.find("not a loadable shared library"), std::string::npos)
        << report.error;
    EXPECT_NE(report.describe().find("the running generation stays"), std::string::npos);
    host.push(update(1));
    host.push(update(1));
    EXPECT_NE(evidence_of(host, 1).find("\"seen\":4"), std::string::npos);

    fs::remove(plugin_path());
    report = host.reload_plugin("counter");
    EXPECT_FALSE(report.ok);
    EXPECT_NE(report.error.find("file not found"), std::string::npos) << report.error;
    EXPECT_FALSE(host.reload_plugin("no-such-plugin").ok);
}

// Issue 17, pinned files: with `sha256` in its table a plugin loads only the build with
// that hash. Another build dropped in is refused with both hashes and the pinned one runs
// on; pinning the new hash in the config loads it, state and all.
TEST_F(Reload, APinnedPluginRefusesAnyOtherBuild) {
    auto hash_of = [](const fs::path& file) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
        return arbiter::host::sha256_hex(bytes);
    };
    const std::string v1 = hash_of(COUNTER_V1), v2 = hash_of(COUNTER_V2);
    ASSERT_NE(v1, v2);
    {
        Host pinned_wrong(config_pinned(3, v2));
        ASSERT_EQ(pinned_wrong.plugins().size(), 1u);
        EXPECT_FALSE(pinned_wrong.plugins()[0].active());
        EXPECT_NE(pinned_wrong.plugins()[0].error.find("its SHA-256 is " + v1 + ", not the " + v2),
                  std::string::npos)
            << pinned_wrong.plugins()[0].error;
    }
    Host pinned(config_pinned(3, v1));
    ASSERT_TRUE(pinned.plugins()[0].active()) << pinned.plugins()[0].error;
    EXPECT_EQ(pinned.plugins()[0].library->sha256(), v1);
    pinned.push(update(1));
    deploy(COUNTER_V2);
    ReloadReport refused = pinned.reload_plugin("counter");
    EXPECT_FALSE(refused.ok);
    EXPECT_NE(refused.error.find("not the " + v1 + " the config pins"), std::string::npos)
        << refused.error;
    EXPECT_EQ(pinned.plugins()[0].library->identity().version, "1.0.0");
    // The operator pins the new build: the config change loads it, with its state.
    auto reports = pinned.apply_config(config_pinned(3, v2));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(reports[0].ok) << reports[0].error;
    EXPECT_EQ(pinned.plugins()[0].library->identity().version, "2.0.0");
    pinned.push(update(1));
    pinned.push(update(1));
    EXPECT_NE(evidence_of(pinned, 1).find("\"seen\":3"), std::string::npos)
        << evidence_of(pinned, 1);
}

// Issue 17, signed plugins: with `signed_by` a plugin loads only a build that minisign
// signed with that key, checked on the private copy. The author signs v1, it loads; v2 is
// dropped in beside the old signature and refused with the reason, v1 running on; v2
// signed, it loads; its signature gone, or signed by another key, a reload is refused.
// minisign is Debian's, as authors use it (scripts/install-deps.sh installs it).
TEST_F(Reload, ASignedPluginLoadsOnlyWithItsAuthorsSignature) {
    if (std::system("command -v minisign >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "minisign is not installed (apt-get install minisign): nothing here can "
                        "sign a plugin the way its authors do";
    auto run = [&](const std::string& command) {
        ASSERT_EQ(std::system(("cd '" + dir_.string() + "' && " + command + " >/dev/null 2>&1")
                                  .c_str()),
                  0)
            << command;
    };
    run("minisign -G -W -p author.pub -s author.key");
    run("minisign -G -W -p other.pub -s other.key");
    auto public_key = [&](const std::string& file) {
        std::ifstream in(dir_ / file);
        std::string comment, key;
        std::getline(in, comment);
        std::getline(in, key);
        return key;
    };
    auto signed_config = [&] {
        const std::string text =
            "[signing]\nkeys = { author = \"" + public_key("author.pub") + "\", other = \"" +
            public_key("other.pub") + "\" }\n[plugins.counter]\nlibrary = \"" +
            plugin_path().string() +
            "\"\nsigned_by = \"author\"\n[plugins.counter.config]\nreport_at = 3\n";
        return arbiter::host::parse_config(text, "server_config.toml", dir_);
    };
    const std::string sign = "minisign -S -s author.key -m arbiter-counter.so -t counter";
    {
        Host unsigned_host(signed_config());
        EXPECT_FALSE(unsigned_host.plugins()[0].active());
        const std::string& error = unsigned_host.plugins()[0].error;
        EXPECT_NE(error.find("arbiter-counter.so.minisig: cannot read it"), std::string::npos)
            << error;
    }
    run(sign);
    Host host(signed_config());
    ASSERT_TRUE(host.plugins()[0].active()) << host.plugins()[0].error;
    host.push(update(1));

    deploy(COUNTER_V2);  // the v1 signature still beside it
    ReloadReport refused = host.reload_plugin("counter");
    EXPECT_FALSE(refused.ok);
    EXPECT_NE(refused.error.find("the signature by 'author'"), std::string::npos) << refused.error;
    EXPECT_NE(refused.error.find("does not match the library's bytes"), std::string::npos);
    EXPECT_EQ(host.plugins()[0].library->identity().version, "1.0.0");

    run(sign);
    ReloadReport loaded = host.reload_plugin("counter");
    EXPECT_TRUE(loaded.ok) << loaded.error;
    EXPECT_EQ(host.plugins()[0].library->identity().version, "2.0.0");

    run("minisign -S -s other.key -m arbiter-counter.so -t counter");
    ReloadReport other = host.reload_plugin("counter");
    EXPECT_FALSE(other.ok);
    EXPECT_NE(other.error.find("which is not one the config accepts here (author)"),
              std::string::npos)
        << other.error;

    fs::remove(dir_ / "arbiter-counter.so.minisig");
    ReloadReport gone = host.reload_plugin("counter");
    EXPECT_FALSE(gone.ok);
    EXPECT_NE(gone.error.find("cannot be read"), std::string::npos) << gone.error;
    EXPECT_EQ(host.plugins()[0].library->identity().version, "2.0.0");
}

TEST_F(Reload, ANewPluginConfigIsAppliedWithoutAReload) {
    Host host(config(100));
    host.push(update(1));
    host.push(update(1));
    auto reports = host.apply_config(config(3));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].change, "reconfigured");
    EXPECT_TRUE(reports[0].ok) << reports[0].error;
    host.push(update(1));
    EXPECT_NE(evidence_of(host, 1).find("\"seen\":3"), std::string::npos);
}

TEST_F(Reload, AConfigThePluginRefusesLeavesTheOldOneInForce) {
    Host host(config(3));
    auto reports = host.apply_config(config(0));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_FALSE(reports[0].ok);
    EXPECT_NE(reports[0].error.find("report_at"), std::string::npos) << reports[0].error;
    for (int i = 0; i < 3; ++i)
        host.push(update(1));
    EXPECT_NE(evidence_of(host, 1).find("\"seen\":3"), std::string::npos);
}

TEST_F(Reload, AConfigWithAPluginThatCannotLoadIsRefusedWhole) {
    Host host(config(2));
    // A new weight for the running plugin and a second plugin whose file is not there: the
    // weight must not change either.
    auto reports = host.apply_config(
        config(2, 0.5, "[plugins.second]\nlibrary = \"" + (dir_ / "missing.so").string() + "\"\n"));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_FALSE(reports[0].ok);
    EXPECT_EQ(reports[0].plugin, "second");
    EXPECT_NE(reports[0].error.find("the config was not applied"), std::string::npos)
        << reports[0].error;
    EXPECT_EQ(host.plugins().size(), 1u);
    EXPECT_DOUBLE_EQ(host.plugins()[0].settings.weight, 1.0);
    EXPECT_DOUBLE_EQ(host.config().plugins[0].weight, 1.0);
    host.push(update(1));
    host.push(update(1));
    auto assessment = host.assessment({"relay", 1, 1});
    ASSERT_TRUE(assessment.has_value());
    EXPECT_DOUBLE_EQ(assessment->checks.at(0).weight, 1.0);

    // Mended, the same change applies in full.
    auto applied = host.apply_config(config(2, 0.5));
    ASSERT_EQ(applied.size(), 1u);
    EXPECT_TRUE(applied[0].ok) << applied[0].error;
    EXPECT_DOUBLE_EQ(host.plugins()[0].settings.weight, 0.5);
}

TEST_F(Reload, ATableOnePluginRefusesTakesBackTheOthersNewTable) {
    const std::string second = "[plugins.second]\nlibrary = \"" + std::string(COUNTER_V2) +
                               "\"\n[plugins.second.config]\nreport_at = ";
    Host host(config(3, 1.0, second + "3\n"));
    ASSERT_EQ(host.plugins().size(), 2u);
    // counter takes report_at = 5 live; second refuses 0: counter goes back to 3.
    auto reports = host.apply_config(config(5, 1.0, second + "0\n"));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].plugin, "second");
    EXPECT_FALSE(reports[0].ok);
    for (int i = 0; i < 3; ++i)
        host.push(update(1));
    auto assessment = host.assessment({"relay", 1, 1});
    ASSERT_TRUE(assessment.has_value());
    bool counter_reported = false;
    for (const auto& check : assessment->checks)
        counter_reported = counter_reported || check.plugin == "counter";
    EXPECT_TRUE(counter_reported) << "counter kept report_at = 5 after the config was refused";
}

TEST_F(Reload, WeightsAndAddedAndRemovedPlugins) {
    Host host(config(2));
    auto reweighted = host.apply_config(config(2, 0.5));
    ASSERT_EQ(reweighted.size(), 1u);
    EXPECT_EQ(reweighted[0].change, "settings");
    host.push(update(1));
    host.push(update(1));
    auto assessment = host.assessment({"relay", 1, 1});
    ASSERT_TRUE(assessment.has_value());
    EXPECT_DOUBLE_EQ(assessment->checks.at(0).weight, 0.5);

    auto added =
        host.apply_config(config(2, 0.5,
                                 "[plugins.second]\nlibrary = \"" + std::string(COUNTER_V2) +
                                     "\"\n[plugins.second.config]\nreport_at = 1\n"));
    ASSERT_EQ(added.size(), 1u);
    EXPECT_EQ(added[0].change, "added");
    EXPECT_TRUE(added[0].ok);
    EXPECT_EQ(host.plugins().size(), 2u);

    auto removed = host.apply_config(config(2, 0.5));
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_EQ(removed[0].change, "removed");
    EXPECT_EQ(host.plugins().size(), 1u);
}

TEST_F(Reload, PointingAPluginAtAnotherLibraryReloadsItWithItsState) {
    Host host(config(3));
    host.push(update(1));
    host.push(update(1));
    auto text = "[plugins.counter]\nlibrary = \"" + std::string(COUNTER_V2) +
                "\"\n[plugins.counter.config]\nreport_at = 3\n";
    auto reports = host.apply_config(arbiter::host::parse_config(text, "server_config.toml", dir_));
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].change, "reload");
    EXPECT_TRUE(reports[0].ok) << reports[0].error;
    host.push(update(1));
    EXPECT_NE(evidence_of(host, 1).find("\"version\":\"2.0.0\""), std::string::npos);
}

TEST_F(Reload, AnUnwritableSecurityLogLeavesTheOldOneInPlace) {
    Host host(
        config(3, 1.0, "[sinks]\nsecurity_log = \"" + (dir_ / "log.jsonl").string() + "\"\n"));
    auto next = config(3);
    next.sinks.security_log = "/nonexistent-dir/log.jsonl";
    auto reports = host.apply_config(std::move(next));
    ASSERT_FALSE(reports.empty());
    EXPECT_FALSE(reports.back().ok);
    EXPECT_NE(reports.back().error.find("/nonexistent-dir/log.jsonl"), std::string::npos);
    for (int i = 0; i < 3; ++i)
        host.push(update(1));
    host.close();
    std::ifstream log(dir_ / "log.jsonl");
    std::string line;
    EXPECT_TRUE(static_cast<bool>(std::getline(log, line)));
}

}  // namespace

namespace {

// A config edit made while a reload's new version loads off the event path is never
// reverted by the swap (issue 19): host-side settings are taken as they are at the swap,
// and a version made from a plugin table the config has since changed is not installed.
TEST_F(Reload, TheSwapKeepsTheSettingsOfTheMomentAndRefusesAStaleVersion) {
    Host host(config(2));
    arbiter::host::PluginSlot prepared = host.prepare_plugin(host.plugins().at(0).settings);
    ASSERT_EQ(host.apply_config(config(2, 0.5)).at(0).change, "settings");  // mid-load
    ReloadReport swapped = host.install_plugin(std::move(prepared));
    ASSERT_TRUE(swapped.ok) << swapped.describe();
    EXPECT_DOUBLE_EQ(host.plugins().at(0).settings.weight, 0.5);
    host.push(update(1));
    host.push(update(1));
    EXPECT_DOUBLE_EQ(host.assessment({"relay", 1, 1})->checks.at(0).weight, 0.5);

    // Now the plugin's own table changes while a version loads: that version is stale.
    arbiter::host::PluginSlot stale = host.prepare_plugin(host.plugins().at(0).settings);
    ASSERT_TRUE(host.apply_config(config(5, 0.5)).at(0).ok);
    ReloadReport refused = host.install_plugin(std::move(stale));
    EXPECT_FALSE(refused.ok);
    EXPECT_TRUE(refused.stale);
    EXPECT_NE(refused.error.find("loaded again with the config as it is now"), std::string::npos);
    // The running instance is the one with the new table (report_at = 5).
    EXPECT_EQ(host.plugins().at(0).settings.config, config(5, 0.5).plugins.at(0).config);
}

// The asynchronous cycle serve and the C API share: the loads it starts are handed back
// by the test, as a loader thread would.
TEST_F(Reload, TheCoordinatorLoadsAStaleVersionAgainAndEndsWithOneReport) {
    Host host(config(2));
    std::vector<arbiter::host::PluginSettings> loads;
    arbiter::host::ReloadCoordinator coordinator(
        host, [&](const arbiter::host::PluginSettings& settings) { loads.push_back(settings); });

    ASSERT_FALSE(coordinator.begin("counter"));
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_TRUE(coordinator.under_way("counter"));
    arbiter::host::PluginSlot first = host.prepare_plugin(loads[0]);
    // The plugin's own table changes while it loads: the slot is stale, and loads again.
    ASSERT_TRUE(host.apply_config(config(5)).at(0).ok);
    EXPECT_TRUE(coordinator.loaded(std::move(first)).empty());
    ASSERT_EQ(loads.size(), 2u);
    EXPECT_EQ(loads[1].config, config(5).plugins.at(0).config);
    EXPECT_TRUE(coordinator.under_way("counter"));

    deploy(COUNTER_V2);
    std::vector<ReloadReport> ended = coordinator.loaded(host.prepare_plugin(loads[1]));
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_TRUE(ended[0].ok) << ended[0].describe();
    EXPECT_EQ(ended[0].to_version, "2.0.0");
    EXPECT_FALSE(coordinator.under_way("counter"));
    EXPECT_TRUE(coordinator.collect().empty());
}

TEST_F(Reload, TheCoordinatorRefusesAnUnknownPluginAtOnceAndOneRemovedMidLoad) {
    Host host(config(2));
    int loads_started = 0;
    std::vector<arbiter::host::PluginSlot> retired;
    arbiter::host::ReloadCoordinator coordinator(
        host, [&](const arbiter::host::PluginSettings&) { ++loads_started; },
        [&](arbiter::host::PluginSlot slot) { retired.push_back(std::move(slot)); });

    auto refused = coordinator.begin("nosuch");
    ASSERT_TRUE(refused);
    EXPECT_FALSE(refused->ok);
    EXPECT_NE(refused->error.find("no plugin 'nosuch' is configured"), std::string::npos);
    EXPECT_EQ(loads_started, 0);
    EXPECT_FALSE(coordinator.under_way("nosuch"));

    ASSERT_FALSE(coordinator.begin("counter"));
    arbiter::host::PluginSlot prepared = host.prepare_plugin(host.plugins().at(0).settings);
    // Removed from the config while it loaded: the reload ends refused, and the slot made
    // for it goes to be destroyed off the event path.
    auto without = arbiter::host::parse_config("", "server_config.toml", dir_);
    host.apply_config(std::move(without));
    std::vector<ReloadReport> ended = coordinator.loaded(std::move(prepared));
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_FALSE(ended[0].ok);
    EXPECT_NE(ended[0].error.find("is configured any more"), std::string::npos) << ended[0].error;
    EXPECT_EQ(loads_started, 1);
    EXPECT_EQ(retired.size(), 1u);
    EXPECT_FALSE(coordinator.under_way("counter"));
}

}  // namespace
