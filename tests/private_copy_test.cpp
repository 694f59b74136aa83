// docs/abi-rules.md, rule 12: the host never loads the file it was pointed at, but a
// private copy in a mode-0700 folder, named from the content hash and a generation
// number, and removes the copy once the library is released.
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "support/host_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CopyName {
    std::string stem;
    std::string hash;
    uint64_t generation = 0;
};

// Splits "<stem>-<16 hex digits>-g<generation>.so".
std::optional<CopyName> parse_copy_name(const std::filesystem::path& copy) {
    static const std::regex pattern(R"(^(.+)-([0-9a-f]{16})-g([0-9]+)\.so$)");
    std::smatch match;
    std::string name = copy.filename().string();
    if (!std::regex_match(name, match, pattern)) return std::nullopt;
    return CopyName{match[1], match[2], std::stoull(match[3])};
}

unsigned mode_of(const std::filesystem::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return 0;
    return info.st_mode & 07777;
}

// Whether the running process has `path` mapped (a library still resident).
bool mapped(const std::filesystem::path& path) {
    return read_text("/proc/self/maps").find(path.string()) != std::string::npos;
}

TEST(PrivateCopy, LivesInAMode0700FolderUnderItsContentHashAndGeneration) {
    TempDir dir;
    host::PluginCopies store((dir / "work").string());
    EXPECT_EQ(mode_of(store.dir()), 0700u);

    const auto source = test_plugin("echo");
    auto library = host::PluginLibrary::load(source, "echo", store, nullptr);
    const auto& copy = library->private_copy();
    EXPECT_NE(copy, source);
    EXPECT_EQ(copy.parent_path(), store.dir());
    auto name = parse_copy_name(copy);
    ASSERT_TRUE(name) << copy << " is not named <stem>-<content hash>-g<generation>.so";
    EXPECT_EQ(name->stem, "arbiter-test-echo");
    EXPECT_EQ(name->generation, 1u);
    EXPECT_EQ(read_bytes(copy), read_bytes(source))
        << "the copy must be the library, byte for byte";
    EXPECT_TRUE(mapped(copy)) << "the copy is what got loaded";
    EXPECT_FALSE(mapped(source)) << "the watched file itself must never be loaded";
    // No temporary file is left from the write-then-rename.
    EXPECT_EQ(files_in(store.dir(), ".tmp").size(), 0u);
}

TEST(PrivateCopy, TheHashFollowsTheContentAndTheGenerationCountsLoads) {
    TempDir dir;
    host::PluginCopies store((dir / "work").string());
    // The same bytes under two names: the hash must not depend on the name.
    std::filesystem::create_directories(dir / "a");
    std::filesystem::copy_file(test_plugin("echo"), dir / "a" / "arbiter-test-echo.so");

    auto first = host::PluginLibrary::load(test_plugin("echo"), "echo", store, nullptr);
    auto second =
        host::PluginLibrary::load(dir / "a" / "arbiter-test-echo.so", "echo", store, nullptr);
    auto other = host::PluginLibrary::load(test_plugin("throws"), "throws", store, nullptr);
    auto a = parse_copy_name(first->private_copy());
    auto b = parse_copy_name(second->private_copy());
    auto c = parse_copy_name(other->private_copy());
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->hash, b->hash);
    EXPECT_NE(a->hash, c->hash);
    EXPECT_EQ(a->generation, 1u);
    EXPECT_EQ(b->generation, 2u);
    EXPECT_EQ(c->generation, 3u);
    // Two loads of the same content are two libraries, not one handed back twice
    // (dlopen of one path twice would return the first, with its old statics).
    EXPECT_NE(first->private_copy(), second->private_copy());
    EXPECT_TRUE(std::filesystem::exists(first->private_copy()));
    EXPECT_TRUE(std::filesystem::exists(second->private_copy()));
}

TEST(PrivateCopy, IsRemovedAndUnmappedWhenTheLibraryIsReleased) {
    TempDir dir;
    LogCapture log;
    host::PluginCopies store((dir / "work").string());
    for (const char* what : {"echo", "throws"}) {
        auto library = host::PluginLibrary::load(test_plugin(what), what, store, nullptr);
        const auto copy = library->private_copy();
        ASSERT_TRUE(std::filesystem::exists(copy));
        ASSERT_TRUE(mapped(copy));
        library.reset();
        EXPECT_FALSE(std::filesystem::exists(copy)) << what;
        // Built with the SDK's preset, the library really leaves the process
        // (docs/abi-rules.md, rule 14).
        EXPECT_FALSE(mapped(copy)) << what << " is still resident after release";
    }
    EXPECT_TRUE(files_in(store.dir(), ".so").empty());
    EXPECT_THAT(log.text(), Not(HasSubstr("still resident")));
}

TEST(PrivateCopy, TheBundledPluginLeavesTheProcessWhenReleased) {
    TempDir dir;
    host::PluginCopies store((dir / "work").string());
    auto library = host::PluginLibrary::load(reference_plugin(), "reference", store, nullptr);
    const auto copy = library->private_copy();
    library.reset();
    EXPECT_FALSE(std::filesystem::exists(copy));
    EXPECT_FALSE(mapped(copy));
}

TEST(PrivateCopy, StaysWhileAnInstanceStillHoldsTheLibrary) {
    TempDir dir;
    host::Metrics metrics;
    std::string text = host_table(dir / "work") + plugin_table("echo", test_plugin("echo"));
    auto config = parse(text, dir.path());
    host::PluginCopies store((dir / "work").string());

    auto library = host::PluginLibrary::load(test_plugin("echo"), "echo", store, &metrics);
    const auto copy = library->private_copy();
    auto instance = std::make_unique<host::PluginInstance>(
        library, config.plugins[0], std::span<const uint8_t>{}, 0, 1, &metrics);
    library.reset();
    EXPECT_TRUE(std::filesystem::exists(copy)) << "released while an instance still needs it";
    EXPECT_TRUE(mapped(copy));

    // And the instance still works through it.
    BatchBuilder builder(kTestRelay, kTestMatch);
    auto ingested = host::ingest_batch(echo_batch(builder, 1'000'000), 1u << 20);
    ASSERT_TRUE(ingested.ok) << ingested.problem;
    auto result = instance->on_batch(ingested.batch);
    EXPECT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(result.signals.size(), 1u);

    instance.reset();
    EXPECT_FALSE(std::filesystem::exists(copy));
    EXPECT_FALSE(mapped(copy));
}

TEST(PrivateCopy, OverwritingTheConfiguredFileDoesNotTouchTheLoadedPlugin) {
    TempDir dir;
    const auto watched = dir / "arbiter-echo.so";
    std::filesystem::copy_file(test_plugin("echo"), watched);
    host::Host host(parse(host_table(dir / "work") + plugin_table("echo", watched), dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty());

    // What an operator's careless `cp` does: rewrite the file in place. Had the host
    // mapped this file, the next call into it would crash the test.
    {
        std::ofstream out(watched, std::ios::binary | std::ios::trunc);
        out << "not a library any more";
    }
    BatchBuilder builder(kTestRelay, kTestMatch);
    ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000)));
    ASSERT_FALSE(host.push(echo_batch(builder, 2'000'000)));
    auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    EXPECT_TRUE(find_check(*assessment, "echo", "test.echo"));
}

TEST(PrivateCopy, TheHostsOwnWorkFolderIsPrivateAndLeavesWithTheHost) {
    TempDir dir;
    // With no work_dir configured the host makes a folder under $TMPDIR; point that at
    // this test's folder so that the folder can be found and nothing leaks.
    const char* old_tmpdir = std::getenv("TMPDIR");
    std::optional<std::string> saved =
        old_tmpdir ? std::optional<std::string>(old_tmpdir) : std::nullopt;
    ::setenv("TMPDIR", dir.path().c_str(), 1);

    std::filesystem::path work;
    {
        host::Host host(parse(plugin_table("echo", test_plugin("echo")), dir.path()));
        ASSERT_TRUE(host.plugin_errors().empty());
        const auto& copy = host.plugins()[0].library->private_copy();
        work = copy.parent_path();
        EXPECT_EQ(work.parent_path(), dir.path());
        EXPECT_EQ(mode_of(work), 0700u);
        EXPECT_TRUE(parse_copy_name(copy));
    }
    if (saved)
        ::setenv("TMPDIR", saved->c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    EXPECT_FALSE(std::filesystem::exists(work)) << "the host's own work folder outlived it";
}

TEST(PrivateCopy, AConfiguredWorkFolderIsMadePrivate) {
    TempDir dir;
    std::filesystem::create_directories(dir / "work");
    std::filesystem::permissions(dir / "work",
                                 std::filesystem::perms::all);  // 0777: anyone could swap a copy
    host::Host host(
        parse(host_table(dir / "work") + plugin_table("echo", test_plugin("echo")), dir.path()));
    EXPECT_EQ(mode_of(dir / "work"), 0700u);
}

TEST(PrivateCopy, TheSameLibraryUnderTwoKeysIsLoadedTwice) {
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") + plugin_table("first", test_plugin("echo")) +
                              plugin_table("second", test_plugin("echo")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty());
    const auto& a = host.plugins()[0].library->private_copy();
    const auto& b = host.plugins()[1].library->private_copy();
    EXPECT_NE(a, b) << "one copy for two keys would give both the same statics";

    BatchBuilder builder(kTestRelay, kTestMatch);
    ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000)));
    auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    EXPECT_TRUE(find_check(*assessment, "first", "test.echo"));
    EXPECT_TRUE(find_check(*assessment, "second", "test.echo"));
}

// Two hosts in one process (a relay running two game modes, say) configured with the
// same work folder. Each PluginCopies counts generations from 1, so both name the copy
// of one library "<stem>-<hash>-g1.so": the second host renames its copy over the
// first's, dlopen() of that path hands it the first host's library (with its statics:
// the failure rule 12 exists to prevent), and when the first host releases the library
// it deletes the file the second host's copy lives under.
TEST(PrivateCopy, TwoHostsSharingAWorkFolderEachLoadTheirOwnCopy) {
    TempDir dir;
    LogCapture log;
    const std::string text = host_table(dir / "work") + plugin_table("echo", test_plugin("echo"));
    auto first = std::make_unique<host::Host>(parse(text, dir.path()));
    host::Host second(parse(text, dir.path()));
    ASSERT_TRUE(first->plugin_errors().empty());
    ASSERT_TRUE(second.plugin_errors().empty());
    const auto first_copy = first->plugins()[0].library->private_copy();
    const auto second_copy = second.plugins()[0].library->private_copy();
    EXPECT_NE(first_copy, second_copy) << "two hosts were handed one private copy";

    first.reset();
    EXPECT_TRUE(std::filesystem::exists(second_copy))
        << "releasing the first host's library deleted the second host's copy";
    EXPECT_THAT(log.text(), Not(HasSubstr("still resident")));

    BatchBuilder builder(kTestRelay, kTestMatch);
    ASSERT_FALSE(second.push(echo_batch(builder, 1'000'000)));
    auto assessment = second.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    EXPECT_TRUE(find_check(*assessment, "echo", "test.echo"));
}

// A killed process cannot remove its private folder; the next store under the same parent
// does, and never touches the folder of a store that is alive.
TEST(PrivateCopy, FoldersOfDeadProcessesAreSweptAndLiveOnesKept) {
    TempDir dir;
    const auto work = dir.path() / "work";
    std::filesystem::create_directories(work);
    // A dead process's folder: a lock file nobody holds, and a copy it left behind.
    const auto dead = work / "arbiter-Dead01";
    std::filesystem::create_directories(dead);
    std::ofstream(dead / ".owner.lock").put('\n');
    std::ofstream(dead / "arbiter-echo.so.abc.1").put('x');
    // An unrelated folder and a live store's folder.
    std::filesystem::create_directories(work / "keep-me");
    host::PluginCopies live(work.string());

    host::PluginCopies next(work.string());
    EXPECT_FALSE(std::filesystem::exists(dead));
    EXPECT_TRUE(std::filesystem::exists(live.dir())) << "a live store's folder was swept";
    EXPECT_TRUE(std::filesystem::exists(work / "keep-me"));
    EXPECT_TRUE(std::filesystem::exists(next.dir()));
}

TEST(PrivateCopy, AServerKilledWithSigkillLeavesNothingForTheNextStart) {
    TempDir dir;
    const auto work = dir.path() / "work";
    arbiter::test::write_text(dir.path() / "server_config.toml",
                              "[host]\nwork_dir = \"" + work.string() +
                                  "\"\n[serve]\nunix_socket = \"" +
                                  (dir.path() / "relays.sock").string() + "\"\n" +
                                  plugin_table("echo", test_plugin("echo")));
    auto stores = [&] {
        std::vector<std::filesystem::path> found;
        for (const auto& entry : std::filesystem::directory_iterator(work))
            if (entry.path().filename().string().starts_with("arbiter-"))
                found.push_back(entry.path());
        return found;
    };
    std::filesystem::path first;
    {
        arbiter::test::ServerProcess server(dir.path() / "server_config.toml", dir.path());
        ASSERT_EQ(stores().size(), 1u);
        first = stores()[0];
        server.stop(SIGKILL);
    }
    ASSERT_TRUE(std::filesystem::exists(first)) << "SIGKILL leaves the folder behind";
    arbiter::test::ServerProcess again(dir.path() / "server_config.toml", dir.path());
    const auto now = stores();
    ASSERT_EQ(now.size(), 1u);
    EXPECT_NE(now[0], first);
    EXPECT_TRUE(again.wait_for_log("removed " + first.string()));
}

}  // namespace
}  // namespace arbiter::test
