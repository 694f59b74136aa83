// Files the host reads and runs (issue 19): a plugin library, a baseline or a token that
// someone else can write, or that another user owns, is refused with the reason; so is a
// work folder that is a link or someone else's, and a file past its size cap.
#include "arbiter/host/file_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "arbiter/host/host.hpp"
#include "arbiter/host/plugin_library.hpp"

namespace arbiter::host {
namespace {

namespace fs = std::filesystem;

class FileTrust : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/arbiter-trust-XXXXXX";
        ASSERT_NE(::mkdtemp(pattern), nullptr);
        dir_ = pattern;
        ::chmod(dir_.c_str(), 0755);
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path file(const std::string& name, mode_t mode, const std::string& text = "x") {
        const fs::path path = dir_ / name;
        std::ofstream(path) << text;
        ::chmod(path.c_str(), mode);
        return path;
    }
    std::string counter_config(const fs::path& library) const {
        return "[plugins.counter]\nlibrary = \"" + library.string() +
               "\"\n[plugins.counter.config]\nreport_at = 3\n";
    }

    fs::path dir_;
};

TEST_F(FileTrust, TheOwnersFileIsTrustedAndOthersWriteBitsAreNot) {
    EXPECT_EQ(untrusted_file(file("ok", 0644), kBaselineRules), std::nullopt);
    // Group-writable is refused for a group not this process's own (nobody's, 65534).
    const fs::path grouped = file("group", 0664);
    EXPECT_EQ(untrusted_file(grouped, kBaselineRules), std::nullopt) << "our own group";
    if (::geteuid() == 0 && ::chown(grouped.c_str(), 0, 65534) == 0) {
        auto group = untrusted_file(grouped, kBaselineRules);
        ASSERT_TRUE(group);
        EXPECT_NE(group->find("others may write it (mode 0664)"), std::string::npos) << *group;
    }
    auto world = untrusted_file(file("world", 0646), kPluginLibraryRules);
    ASSERT_TRUE(world);
    EXPECT_NE(world->find("plugin library"), std::string::npos);
    // A secret may not be read by others either.
    EXPECT_TRUE(untrusted_file(file("token", 0640), kTokenRules));
    EXPECT_EQ(untrusted_file(file("token-ok", 0600), kTokenRules), std::nullopt);
    auto missing = untrusted_file(dir_ / "nothing", kTokenRules);
    ASSERT_TRUE(missing);
    EXPECT_NE(missing->find("cannot read it"), std::string::npos);
    EXPECT_TRUE(untrusted_file(dir_, kBaselineRules)) << "a folder is not a file";
}

TEST_F(FileTrust, AFolderOthersMayWriteIsRefusedUnlessSticky) {
    const fs::path inner = dir_ / "shared";
    fs::create_directory(inner);
    std::ofstream(inner / "lib.so") << "x";
    ::chmod((inner / "lib.so").c_str(), 0644);
    ::chmod(inner.c_str(), 0777);
    auto open = untrusted_file(inner / "lib.so", kPluginLibraryRules);
    ASSERT_TRUE(open);
    EXPECT_NE(open->find("others may write its folder"), std::string::npos) << *open;
    ::chmod(inner.c_str(), 01777);  // like /tmp: no one may replace another's file
    EXPECT_EQ(untrusted_file(inner / "lib.so", kPluginLibraryRules), std::nullopt);
}

TEST_F(FileTrust, AFileOfAnotherUserIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
    const fs::path path = file("theirs", 0644);
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    auto problem = untrusted_file(path, kBaselineRules);
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("owned by uid 65534"), std::string::npos) << *problem;
}

TEST_F(FileTrust, SizesAreCappedBeforeAndWhileReading) {
    const FileRules tiny{"test file", 8};
    EXPECT_EQ(read_trusted_file(file("small", 0644, "12345678"), tiny).size(), 8u);
    EXPECT_THROW(read_trusted_file(file("large", 0644, "123456789"), tiny), std::runtime_error);
}

TEST_F(FileTrust, AFifoInAFilesPlaceIsRefusedWithoutWaitingForAWriter) {
    ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
    try {
        read_trusted_file(dir_ / "pipe", kTokenRules);
        FAIL() << "a FIFO was read as a token file";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("not a regular file"), std::string::npos)
            << error.what();
    }
}

TEST_F(FileTrust, ALibraryOthersMayWriteIsRefusedAndTheRestRun) {
    const fs::path open = dir_ / "arbiter-counter.so";
    fs::copy_file(COUNTER_V1, open);
    ::chmod(open.c_str(), 0666);
    Host host(parse_config(counter_config(open), "server_config.toml", dir_));
    ASSERT_EQ(host.plugin_errors().size(), 1u);
    EXPECT_NE(host.plugin_errors()[0].find("others may write it (mode 0666)"), std::string::npos)
        << host.plugin_errors()[0];
    ::chmod(open.c_str(), 0755);
    Host fixed(parse_config(counter_config(open), "server_config.toml", dir_));
    EXPECT_TRUE(fixed.plugin_errors().empty());
}

TEST_F(FileTrust, AWorkFolderThatIsALinkIsRefused) {
    fs::create_directory(dir_ / "real");
    fs::create_directory_symlink(dir_ / "real", dir_ / "link");
    EXPECT_TRUE(untrusted_own_folder(dir_ / "link"));
    EXPECT_EQ(untrusted_own_folder(dir_ / "real"), std::nullopt);
    EXPECT_EQ(untrusted_own_folder(dir_ / "absent"), std::nullopt);
    const std::string text =
        "[host]\nwork_dir = \"" + (dir_ / "link").string() + "\"\n" + counter_config(COUNTER_V1);
    try {
        Host host(parse_config(text, "server_config.toml", dir_));
        FAIL() << "a linked work folder was accepted";
    } catch (const PluginError& error) {
        EXPECT_NE(std::string(error.what()).find("host.work_dir: "), std::string::npos)
            << error.what();
        EXPECT_NE(std::string(error.what()).find("symbolic link"), std::string::npos);
    }
}

}  // namespace
}  // namespace arbiter::host
