// Loading plugins that are broken in every way an operator may meet: each is refused
// with a message that names its file and the exact reason, and the good plugin
// configured beside it goes on producing its signal.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/host.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// "file:line:column" of the first occurrence of `needle` in `text`, 1-based, as the
// host's config reader reports positions.
std::string position_of(const std::string& text, const std::string& needle,
                        const std::string& file) {
    size_t at = text.find(needle);
    if (at == std::string::npos) return "(" + needle + " not in the config)";
    size_t line_start = text.rfind('\n', at);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    size_t line = 1 + static_cast<size_t>(
                          std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    return file + ":" + std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// The good plugin still answers: one batch with player 1 moving yields its signal,
// and it reaches player 1's assessment.
void expect_echo_still_works(host::Host& host) {
    BatchBuilder builder(kTestRelay, kTestMatch);
    auto refused = host.push(echo_batch(builder, 1'000'000));
    ASSERT_FALSE(refused) << *refused;
    auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    auto echo = find_check(*assessment, "echo", "test.echo");
    ASSERT_TRUE(echo) << "the good plugin's signal did not reach the assessment";
    EXPECT_DOUBLE_EQ(echo->score, 0.9);
    EXPECT_DOUBLE_EQ(echo->confidence, 1.0);
    EXPECT_EQ(assessment->action, host::Action::flag_for_review);
}

// The slots of a config holding `broken` then `echo`: the first refused, the second active.
void expect_only_echo_active(const host::Host& host) {
    ASSERT_EQ(host.plugins().size(), 2u);
    EXPECT_EQ(host.plugins()[0].settings.name, "broken");
    EXPECT_FALSE(host.plugins()[0].active());
    EXPECT_FALSE(host.plugins()[0].library) << "a refused plugin's library must be released";
    EXPECT_EQ(host.plugins()[1].settings.name, "echo");
    EXPECT_TRUE(host.plugins()[1].active()) << joined(host.plugin_errors());
}

// What a broken library is refused for, in the host's words.
struct BrokenLibrary {
    const char* what;                  // arbiter-test-<what>.so
    std::vector<std::string> reasons;  // each must appear in the message
};

void PrintTo(const BrokenLibrary& broken, std::ostream* out) {
    *out << broken.what;
}

class BrokenLibraryTest : public ::testing::TestWithParam<BrokenLibrary> {};

TEST_P(BrokenLibraryTest, IsRefusedWithItsFileAndReasonWhileTheGoodPluginWorks) {
    TempDir dir;
    const auto broken = test_plugin(GetParam().what);
    ASSERT_TRUE(std::filesystem::exists(broken)) << broken << " was not built";
    const std::string text = host_table(dir / "work") + plugin_table("broken", broken) +
                             plugin_table("echo", test_plugin("echo"));
    host::Host host(parse(text, dir.path()));

    auto errors = host.plugin_errors();
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    // Where the config names it, then the file and the reason.
    EXPECT_THAT(errors[0], StartsWith(position_of(text, "broken]", "server_config.toml") +
                                      ": plugin 'broken' (" + broken.string() + "): "));
    for (const auto& reason : GetParam().reasons)
        EXPECT_THAT(errors[0], HasSubstr(reason));
    EXPECT_EQ(host.plugins()[0].error, errors[0]);
    expect_only_echo_active(host);

    // A refused library leaves no private copy behind: only the good plugin's remains.
    auto copies = files_in(dir / "work", ".so");
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_THAT(copies[0].filename().string(), StartsWith("arbiter-test-echo-"));

    expect_echo_still_works(host);
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, BrokenLibraryTest,
    ::testing::Values(
        BrokenLibrary{"wrong-major",
                      {"built for ABI 2.0, this host speaks ABI 1.1", "the major versions differ"}},
        BrokenLibrary{"newer-minor",
                      {"it needs ABI 1.7 (built against 1.7), newer than this host's ABI 1.1",
                       "needs a host of ABI 1.7 or later"}},
        BrokenLibrary{"no-entry", {"no entry symbol arbiter_plugin_entry"}},
        BrokenLibrary{"not-a-library", {"not a loadable shared library", "invalid ELF header"}},
        BrokenLibrary{"state-without-slot",
                      {"capability bits disagree with the slots",
                       "ARB_CAP_STATE is set but save_state is NULL"}},
        BrokenLibrary{
            "configure-without-bit",
            {"capability bits disagree with the slots", "configure", "ARB_CAP_RECONFIGURE"}},
        BrokenLibrary{"unknown-capability",
                      {"capability bits 0x10000000000", "that ABI 1.1 does not define"}}),
    [](const ::testing::TestParamInfo<BrokenLibrary>& param_info) {
        std::string name = param_info.param.what;
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });

TEST(PluginLoading, AMissingFileIsRefusedAsNotFound) {
    TempDir dir;
    const auto missing = dir / "plugins" / "arbiter-nowhere.so";
    const std::string text = host_table(dir / "work") + plugin_table("broken", missing) +
                             plugin_table("echo", test_plugin("echo"));
    host::Host host(parse(text, dir.path()));

    auto errors = host.plugin_errors();
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    EXPECT_EQ(errors[0], position_of(text, "broken]", "server_config.toml") +
                             ": plugin 'broken' (" + missing.string() + "): file not found");
    expect_only_echo_active(host);
    expect_echo_still_works(host);
}

TEST(PluginLoading, ARelativeLibraryPathResolvesAgainstTheConfigsFolder) {
    TempDir dir;
    std::filesystem::create_directories(dir / "plugins");
    std::filesystem::copy_file(test_plugin("echo"), dir / "plugins" / "echo.so");
    const std::string text =
        host_table(dir / "work") + "\n[plugins.echo]\nlibrary = \"plugins/echo.so\"\n";
    host::Host host(parse(text, dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    EXPECT_EQ(host.plugins()[0].library->source(), dir / "plugins" / "echo.so");
}

TEST(PluginLoading, AFolderIsRefusedAsNotARegularFile) {
    TempDir dir;
    std::filesystem::create_directories(dir / "folder.so");
    const std::string text = host_table(dir / "work") + plugin_table("broken", dir / "folder.so") +
                             plugin_table("echo", test_plugin("echo"));
    host::Host host(parse(text, dir.path()));
    auto errors = host.plugin_errors();
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    EXPECT_EQ(errors[0], position_of(text, "broken]", "server_config.toml") +
                             ": plugin 'broken' (" + (dir / "folder.so").string() +
                             "): not a regular file");
    expect_echo_still_works(host);
}

TEST(PluginLoading, ACreateFailureReportsThePluginsOwnLastError) {
    TempDir dir;
    const std::string text = host_table(dir / "work") +
                             plugin_table("broken", test_plugin("create-fails")) +
                             plugin_table("echo", test_plugin("echo"));
    host::Host host(parse(text, dir.path()));

    auto errors = host.plugin_errors();
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    // Points at the plugin's table in the config, names the status and the plugin's
    // own reason (its constructor threw std::runtime_error("database unreachable")).
    EXPECT_EQ(errors[0], position_of(text, "broken]", "server_config.toml") +
                             ": plugin 'broken' (" + test_plugin("create-fails").string() +
                             "): create failed with ARB_ERR_INTERNAL: database unreachable");
    expect_only_echo_active(host);
    // The library was loaded and then released: its copy is gone too.
    EXPECT_EQ(files_in(dir / "work", ".so").size(), 1u);
    expect_echo_still_works(host);
}

// A config the config-refused plugin rejects, and the key its message must point at.
struct RefusedConfig {
    const char* name;
    std::string plugin_tables;  // [plugins.broken] and its config, in one of TOML's forms
    std::string key_text;       // where the offending key stands in plugin_tables
    std::string message;        // what follows "plugin 'broken' refused its config: "
};

void PrintTo(const RefusedConfig& config, std::ostream* out) {
    *out << config.name;
}

class RefusedConfigTest : public ::testing::TestWithParam<RefusedConfig> {};

TEST_P(RefusedConfigTest, NamesTheKeysFileLineAndColumn) {
    TempDir dir;
    const auto& param = GetParam();
    const std::string text = host_table(dir / "work") + "\n[plugins.broken]\nlibrary = " +
                             toml_literal(test_plugin("config-refused")) + "\n" +
                             param.plugin_tables + plugin_table("echo", test_plugin("echo"));
    host::Host host(parse(text, dir.path()));

    auto errors = host.plugin_errors();
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    EXPECT_EQ(errors[0], position_of(text, param.key_text, "server_config.toml") +
                             ": plugin 'broken' refused its config: " + param.message)
        << text;
    expect_only_echo_active(host);
    expect_echo_still_works(host);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, RefusedConfigTest,
    ::testing::Values(
        RefusedConfig{
            "sub_table", "[plugins.broken.config]\nthreshold = 5\n", "threshold = 5",
            "plugins.broken.config.threshold: expected a finite number >= 0 and <= 1, got 5"},
        RefusedConfig{
            "nested_table", "[plugins.broken.config.limits]\nwindow_s = -2.5\n", "window_s = -2.5",
            "plugins.broken.config.limits.window_s: expected a finite number > 0, got -2.5"},
        RefusedConfig{
            "inline_table", "config = { threshold = 1.5 }\n", "threshold = 1.5",
            "plugins.broken.config.threshold: expected a finite number >= 0 and <= 1, got 1.5"},
        RefusedConfig{
            "dotted_key", "config.threshold = 7\n", "threshold = 7",
            "plugins.broken.config.threshold: expected a finite number >= 0 and <= 1, got 7"},
        RefusedConfig{
            "wrong_type", "[plugins.broken.config]\nthreshold = \"high\"\n", "threshold = \"high\"",
            "plugins.broken.config.threshold: expected a finite number >= 0 and <= 1, got high"},
        RefusedConfig{"unknown_key", "[plugins.broken.config]\nthreshhold = 0.5\n", "threshhold",
                      "plugins.broken.config.threshhold: unknown key (misspelt, or not used by "
                      "this plugin)"}),
    [](const ::testing::TestParamInfo<RefusedConfig>& param_info) {
        return std::string(param_info.param.name);
    });

}  // namespace
}  // namespace arbiter::test
