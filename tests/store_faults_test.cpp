// `arbiter serve` and its store when things go wrong (issue 39): a recorded match sent
// again to a restarted server, and a store whose disk fills up while relays stream. Real
// parts: the server process, its relay socket, an SQLite file, a small tmpfs the test
// fills.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/host/config.hpp"
#include "store/store.hpp"
#include "support/cli.hpp"
#include "support/http_client.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using arbiter::test::ServerProcess;

// A server of the sample match's plugins (as docs/review.md runs them) on the store at
// `store`.
std::string config_text(const fs::path& store, const fs::path& socket,
                        const std::string& store_extra = "",
                        const std::string& serve_extra = "") {
    return "[host]\nserver_id = \"host-a\"\n\n[aggregation]\nmonitor_threshold = 0.3\n"
           "review_threshold = 0.7\n\n[sinks]\nreport_threshold = 0.3\n\n[store]\npath = \"" +
           store.string() + "\"\ncommit_interval_ms = 20\n" + store_extra +
           "\n[serve]\nunix_socket = \"" + socket.string() + "\"\n" + serve_extra +
           "\n[plugins.reference]\nlibrary = \"reference\"\n"
           "[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = 1.1\n"
           "window_s = 1.0\n[plugins.accounts]\nlibrary = \"accounts\"\n"
           "[plugins.lagpool]\nlibrary = \"lagpool\"\n[plugins.kaladin]\nlibrary = \"kaladin\"\n";
}

arbiter::test::CommandResult send_sample(const fs::path& socket, const fs::path& work_dir) {
    return arbiter::test::run_command(
        {ARBITER_EXE, "send", (fs::path(SAMPLES_DIR) / "sample-match.arbev").string(),
         socket.string()},
        work_dir);
}

// Flags per player in the store's queue.
std::map<std::string, uint64_t> flags_in(const fs::path& store) {
    arbiter::host::StoreSettings settings;
    settings.path = store.string();
    arbiter::host::ReviewStore review(settings);
    std::map<std::string, uint64_t> flags;
    for (const auto& entry : review.queue()) flags[entry.subject] = entry.events;
    return flags;
}

size_t occurrences(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

// The tester's case: the server restarted, and the same recorded match sent again was
// taken in whole, mallory's 17 flags becoming 34. The ledger is kept in the store now: the
// match is refused as the duplicate it is.
TEST(StoreFaults, AMatchSentAgainToARestartedServerIsNotCountedTwice) {
    arbiter::test::TempDir dir;
    const fs::path socket = dir / "relays.sock", store = dir / "review.db";
    arbiter::test::write_text(dir / "server_config.toml", config_text(store, socket));
    {
        ServerProcess server(dir / "server_config.toml", dir.path());
        const auto sent = send_sample(socket, dir.path());
        ASSERT_EQ(sent.exit_status, 0) << sent.err;
        EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
    }
    const auto first = flags_in(store);
    ASSERT_EQ(first.at("mallory"), 17u);
    ASSERT_EQ(first.at("trent"), 4u);
    {
        ServerProcess server(dir / "server_config.toml", dir.path());
        const auto again = send_sample(socket, dir.path());
        // Every batch a duplicate, as it is to a server that did not restart.
        EXPECT_EQ(again.exit_status, 3) << again.out;
        EXPECT_NE(again.err.find("is a duplicate of the first batch"), std::string::npos)
            << again.err;
        EXPECT_NE(again.err.find("1181 more refusal(s) not shown"), std::string::npos)
            << again.err;
        EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
    }
    EXPECT_EQ(flags_in(store), first);
}

// A disk that fills while relays stream: they are served all the same, the records the
// store cannot take are counted on /metrics and in the log, and SIGTERM gives the store
// one drain (30 s, said once) and stops, saying what was lost.
TEST(StoreFaults, AServerWhoseDiskFillsServesOnCountsWhatItLostAndStops) {
    arbiter::test::TempDir dir;
    const fs::path small = dir / "small";
    fs::create_directories(small);
    // 4 MiB of tmpfs, mounted by the test: a full disk it can make. It needs root
    // (CAP_SYS_ADMIN); elsewhere the test says so and skips.
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m") != 0)
        GTEST_SKIP() << "cannot mount a small tmpfs to fill (" << std::strerror(errno)
                     << "): run as root for this test";
    struct Unmount {
        fs::path at;
        ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
    } unmount{small};
    const fs::path socket = dir / "relays.sock";
    arbiter::test::write_text(dir / "server_config.toml",
                              config_text(small / "review.db", socket, "max_queued = 5\n",
                                          "metrics_listen = \"127.0.0.1:0\"\n"));
    ServerProcess server(dir / "server_config.toml", dir.path());
    {
        std::ofstream filler(small / "filler", std::ios::binary);
        const std::string block(64 * 1024, 'x');
        while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) &&
               filler.flush()) {
        }
    }
    // The relay is answered to the end of its match: the store holds nothing up.
    const auto sent = send_sample(socket, dir.path());
    EXPECT_EQ(sent.exit_status, 0) << sent.err;
    EXPECT_NE(sent.out.find("mallory"), std::string::npos) << sent.out;
    const std::string metrics = arbiter::test::http_exchange(server.metrics_address(), "GET /metrics HTTP/1.0\r\n\r\n");
    const std::string series = "\narbiter_store_records_lost_total ";
    const auto at = metrics.find(series);
    ASSERT_NE(at, std::string::npos) << metrics.substr(0, 400);
    EXPECT_GT(std::stod(metrics.substr(at + series.size())), 0.0);
    EXPECT_TRUE(server.wait_for_log("record(s) lost")) << server.log();
    EXPECT_EQ(server.stop(SIGTERM), 0);
    const std::string log = server.log();
    EXPECT_EQ(occurrences(log, "still not written after 30 s"), 1u) << log;
    EXPECT_NE(log.find("could not write; they are lost"), std::string::npos) << log;
}
