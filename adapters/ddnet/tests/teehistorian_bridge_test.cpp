// `arbiter ddnet-bridge` against a real `arbiter serve`: a bridge stopped and started again,
// and one that died before it saved what it had sent, loses nothing and sends nothing
// twice; a folder whose server begins a new file is followed into it, the old file's cut
// tail reported; a saved state that is not one is a clear error.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include "support/server_process.hpp"
#include "support/temp_dir.hpp"
#include "teehistorian_bridge.hpp"
#include "teehistorian_import.hpp"
#include "teehistorian_writer.hpp"

namespace arbiter::ddnet {
namespace {

using test::ThWriter;

// Two players for `ticks` ticks: positions every tick, inputs every few.
std::vector<uint8_t> a_game(int32_t ticks, bool finished,
                            const std::string& game_uuid = "a1eb7182-796e-3b3e-941d-38ca71b2a4a8") {
    ThWriter w(R"({"game_uuid":")" + game_uuid + R"(","map_name":"Tutorial"})");
    w.begin_tick(1);
    w.join(0);
    w.message(0, test::start_info("alice"));
    w.join(1);
    w.message(1, test::start_info("bob"));
    for (int32_t tick = 2; tick <= ticks; ++tick) {
        w.begin_tick(tick);
        w.player(0, 100 + tick % 97, 300);
        w.player(1, 900 - tick % 89, 300 + tick % 5);
        ThInput in;
        in.direction = tick / 13 % 3 - 1;
        in.target_x = 40 + tick / 7 % 20;
        in.target_y = -30;
        in.fire = tick / 17;
        w.input(0, 1, in);
        in.direction = tick / 11 % 3 - 1;
        w.input(1, 2, in);
    }
    if (finished) w.finish();
    return w.bytes();
}

void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                 size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
}

class DdnetBridgeTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::filesystem::create_directories(folder());
        std::ofstream(dir_.path() / "server.toml")
            << "[host]\nserver_id = \"ddnet-bridge-test\"\n[aggregation]\nmonitor_threshold = 0.3\n"
               "review_threshold = 0.7\n[serve]\nunix_socket = \""
            << (dir_.path() / "relays.sock").string()
            << "\"\n[plugins.kaladin]\nlibrary = \"kaladin\"\n[plugins.kaladin.config]\n"
               "tick_rate_hz = 50.0\n";
        server_.emplace(dir_.path() / "server.toml", dir_.path());
    }
    std::filesystem::path folder() const { return dir_.path() / "teehistorian"; }
    DdnetBridgeOptions options() const {
        DdnetBridgeOptions o;
        o.source = folder();
        o.connection.target = (dir_.path() / "relays.sock").string();
        o.connection.relay = "ddnet-test";
        o.connection.once = true;
        o.connection.quiet = true;
        return o;
    }
    // Runs a bridge to the end of what is written; its counts.
    DdnetBridgeCounts run(int expected_status = 0) {
        DdnetBridge bridge(options());
        const std::atomic<bool> never{false};
        EXPECT_EQ(bridge.run(never), expected_status);
        return bridge.counts();
    }
    uint64_t batches_of_whole_file(const std::filesystem::path& file) {
        ThImportOptions o;
        o.relay_id = "ddnet-test";
        return import_teehistorian(file, dir_.path() / "whole.arbev", o).batches;
    }

    arbiter::test::TempDir dir_;
    std::optional<arbiter::test::ServerProcess> server_;
};

TEST_F(DdnetBridgeTest, ARestartedBridgeLosesNothingAndSendsNothingTwice) {
    const auto bytes = a_game(1500, true);
    const auto file = folder() / "3f2b.teehistorian";
    const auto state = DdnetBridge::state_path(folder());
    // The server has written a third: the bridge sends it and saves its place.
    write_bytes(file, bytes, bytes.size() / 3);
    const DdnetBridgeCounts first = run();
    EXPECT_GT(first.batches, 0u);
    EXPECT_EQ(first.already_delivered, 0u);
    std::filesystem::copy_file(state, dir_.path() / "early-state.json");
    // Two thirds: sent from there, nothing again.
    write_bytes(file, bytes, bytes.size() * 2 / 3);
    const DdnetBridgeCounts second = run();
    EXPECT_EQ(second.already_delivered, 0u);
    // The bridge died before it saved what it sent the second time: started again from the
    // place saved the first time, it makes the same batches, and the host drops them.
    std::filesystem::copy_file(dir_.path() / "early-state.json", state,
                               std::filesystem::copy_options::overwrite_existing);
    write_bytes(file, bytes, bytes.size());
    const DdnetBridgeCounts third = run();
    EXPECT_EQ(third.already_delivered, second.batches);
    // Every batch of the file reached the host exactly once.
    EXPECT_EQ(first.batches + second.batches + third.batches - third.already_delivered,
              batches_of_whole_file(file));
    // Once more: the file is finished and sent, nothing is left to send.
    const DdnetBridgeCounts fourth = run();
    EXPECT_EQ(fourth.batches, 0u);
}

TEST_F(DdnetBridgeTest, ANewFileOfTheServerIsFollowedAndTheOldOnesCutTailReported) {
    const auto crashed = a_game(400, false);
    const auto old_file = folder() / "1111.teehistorian";
    write_bytes(old_file, crashed, crashed.size() - 2);  // the server died mid-record
    std::filesystem::last_write_time(
        old_file, std::filesystem::file_time_type::clock::now() - std::chrono::seconds(60));
    const DdnetBridgeCounts first = run();  // live: it waits at the cut, reporting nothing
    EXPECT_EQ(first.damaged, 0u);
    EXPECT_EQ(first.files, 1u);
    // The server started again with a new file.
    const auto next = a_game(300, true, "b2eb7182-796e-3b3e-941d-38ca71b2a4a8");
    write_bytes(folder() / "2222.teehistorian", next, next.size());
    const DdnetBridgeCounts second = run(3);
    EXPECT_EQ(second.damaged, 1u) << "the old file's cut tail";
    EXPECT_EQ(second.files, 2u) << "the rest of the old file, then the new one";
    EXPECT_EQ(second.already_delivered, 0u);
    EXPECT_GT(second.records, 600u);  // two tees moving for 300 ticks, and inputs
    // The old file is left behind: a bridge started again goes on in the new one.
    const DdnetBridgeCounts third = run();
    EXPECT_EQ(third.batches, 0u);
    EXPECT_EQ(third.damaged, 0u);
}

TEST_F(DdnetBridgeTest, ASavedStateThatIsNotOneIsAClearError) {
    std::ofstream(DdnetBridge::state_path(folder())) << R"({"version":1,"file":7})";
    run(2);
    std::ofstream(DdnetBridge::state_path(folder())) << "not json";
    run(2);
    std::ofstream(DdnetBridge::state_path(folder()))
        << R"({"version":1,"file":"../x.teehistorian","offset":0,"reader":{},"match":{}})";
    run(2);
}

TEST_F(DdnetBridgeTest, TheDefaultsNameTheServersFolder) {
    EXPECT_EQ(DdnetBridge::default_relay("/srv/ddnet-eu/teehistorian"), "ddnet-ddnet-eu");
    EXPECT_EQ(DdnetBridge::default_relay("/srv/ddnet-eu/teehistorian/"), "ddnet-ddnet-eu");
    EXPECT_EQ(DdnetBridge::state_path(folder()), folder() / ".arbiter-ddnet-bridge.json");
    EXPECT_EQ(DdnetBridge::state_path("/x/a.teehistorian"),
              std::filesystem::path("/x/a.teehistorian.arbiter-ddnet-bridge.json"));
}

}  // namespace
}  // namespace arbiter::ddnet
