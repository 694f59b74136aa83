// `arbiter check-plugin` on a good plugin and on deliberately bad ones: the verdict, the
// exit status, and the line that says why.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;

CommandResult check(const std::string& library) {
    TempDir dir;
    return run_command({ARBITER_EXE, "check-plugin", library}, dir.path());
}

TEST(CheckPlugin, TheBundledPluginIsReadyToDropIn) {
    auto result = check(REFERENCE_PLUGIN);
    EXPECT_EQ(result.exit_status, 0) << result.out << result.err;
    EXPECT_THAT(result.out, HasSubstr("PASS  exports arbiter_plugin_entry and nothing else"));
    EXPECT_THAT(result.out, HasSubstr("PASS  negotiates: reference"));
    EXPECT_THAT(result.out, HasSubstr("ABI 1.1 (requires 1.0)"));
    // The schema of its config, recorded from its own parser, with ranges and defaults.
    EXPECT_THAT(result.out, HasSubstr("PASS  describes its config (JSON Schema"));
    EXPECT_THAT(result.out, HasSubstr("\"max_speed\": {"));
    EXPECT_THAT(result.out, HasSubstr("\"exclusiveMinimum\": 0,"));
    EXPECT_THAT(result.out, HasSubstr("runs sample-match.arbev: 1201 batches"));
    EXPECT_THAT(result.out, HasSubstr("time per batch: median"));
    EXPECT_THAT(result.out, HasSubstr("PASS  unloads cleanly when released"));
    EXPECT_THAT(result.out, ::testing::Not(HasSubstr("saves no state")));
    EXPECT_THAT(result.out, HasSubstr("verdict: OK"));
}

// Every plugin installed with Arbiter, the game's plugins beside the general ones, passes
// what an operator's check would ask of a third party's.
TEST(CheckPlugin, EveryBundledPluginIsReadyToDropIn) {
    for (const char* name : {"reference", "accounts", "lagpool", "kaladin", "luanti"}) {
        const std::string library = std::string(BUNDLED_PLUGIN_DIR) + "/arbiter-" + name + ".so";
        auto result = check(library);
        EXPECT_EQ(result.exit_status, 0) << name << "\n" << result.out << result.err;
        EXPECT_THAT(result.out, HasSubstr(std::string("PASS  negotiates: ") + name));
        EXPECT_THAT(result.out, HasSubstr("verdict: OK")) << name;
    }
}

TEST(CheckPlugin, AnotherMajorIsRefused) {
    auto result = check(test_plugin("wrong-major").string());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.out, HasSubstr("built for ABI 2.0, this host speaks ABI 1.1"));
    EXPECT_THAT(result.out, HasSubstr("verdict: REFUSED"));
}

TEST(CheckPlugin, ALibraryWithoutTheEntryIsRefused) {
    auto result = check(test_plugin("no-entry").string());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.out, HasSubstr("FAIL  does not export arbiter_plugin_entry"));
}

// An SDK plugin built without its ARBITER_PLUGIN line: the verdict names the line.
TEST(CheckPlugin, AMissingEntryNamesTheLineTheAuthorForgot) {
    auto result = check(test_plugin("forgets-the-entry").string());
    EXPECT_EQ(result.exit_status, 2) << result.out;
    EXPECT_THAT(result.out, HasSubstr("FAIL  does not export arbiter_plugin_entry"));
    EXPECT_THAT(result.out, HasSubstr("ARBITER_PLUGIN(YourAnalyzer);"));
    EXPECT_THAT(result.out, HasSubstr("verdict: REFUSED"));
}

// Legal, so a warning, not a refusal: but the author learns that a reload forgets.
TEST(CheckPlugin, APluginWithoutStateIsWarnedThatAReloadLosesItsHistory) {
    auto result = check(test_plugin("echo").string());
    EXPECT_EQ(result.exit_status, 3) << result.out;
    EXPECT_THAT(result.out, HasSubstr("WARN  saves no state"));
    EXPECT_THAT(result.out, HasSubstr("every hot reload"));
    EXPECT_THAT(result.out, HasSubstr("std::vector<uint8_t> save_state()"));
    EXPECT_THAT(result.out, HasSubstr("void restore_state(std::span<const uint8_t>)"));
    // Everything else about it is fine: it is run, and its verdict is usable.
    EXPECT_THAT(result.out, HasSubstr("PASS  unloads cleanly when released"));
    EXPECT_THAT(result.out, HasSubstr("verdict: USABLE, with the warnings above"));
}

TEST(CheckPlugin, TextNamedLikeAPluginIsRefused) {
    auto result = check(test_plugin("not-a-library").string());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.out, HasSubstr("not an ELF file"));
}

TEST(CheckPlugin, AMissingFileIsRefused) {
    auto result = check("/nonexistent/arbiter-x.so");
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.out, HasSubstr("cannot read the file"));
}

TEST(CheckPlugin, ExtraExportsAreAWarning) {
    auto result = check(test_plugin("echo-unhidden").string());
    EXPECT_EQ(result.exit_status, 3) << result.out;
    EXPECT_THAT(result.out, HasSubstr("symbol(s) besides the entry"));
    EXPECT_THAT(result.out, HasSubstr("verdict: USABLE, with the warnings above"));
}

TEST(CheckPlugin, ACreateFailureIsRefusedWithThePluginsReason) {
    auto result = check(test_plugin("create-fails").string());
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_THAT(result.out, HasSubstr("does not create"));
    EXPECT_THAT(result.out, HasSubstr("database unreachable"));
}

TEST(CheckPlugin, ErrorsOnTheSampleAreAWarningWithTheFirstOne) {
    auto result = check(test_plugin("throws").string());
    EXPECT_EQ(result.exit_status, 3) << result.out;
    EXPECT_THAT(result.out, HasSubstr("first error: ARB_ERR_INTERNAL: index out of range"));
}

TEST(CheckPlugin, APluginThatCrashesYieldsAVerdictNotACrash) {
    auto result = check(test_plugin("crashes").string());
    EXPECT_EQ(result.exit_status, 2) << result.out << result.err;
    // Killed by the signal; or, under a sanitizer, ended by its report after catching it.
    EXPECT_THAT(result.out, ::testing::AnyOf(HasSubstr("the plugin crashed the process (signal 11"),
                                             HasSubstr("a sanitizer stopped it after a crash")));
    EXPECT_THAT(result.out, HasSubstr("verdict: REFUSED"));
}

}  // namespace
}  // namespace arbiter::test
