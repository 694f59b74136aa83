#include "serve_bench.hpp"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <arbiter/sdk/batch_builder.hpp>

#include "serve/server.hpp"
#include "wire/control_client.hpp"
#include "wire/relay_client.hpp"

#include "stats.hpp"
#include "workload.hpp"

namespace arbiter::bench {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "bench-token";

// A server on sockets in a private folder, running on its own thread until destroyed.
class ServerUnderTest {
  public:
    ServerUnderTest() {
        char pattern[] = "/tmp/arbiter-bench-serve-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
        // A copy of the reference plugin of its own, so that reloads read it afresh.
        fs::copy_file(host::default_bundled_plugin_dir() / "arbiter-reference.so",
                      dir_ / "arbiter-reference.so");
        const std::string text =
            "[host]\nserver_id = \"bench\"\nlog_level = \"warn\"\n"
            "[serve]\nunix_socket = \"" +
            (dir_ / "relays.sock").string() + "\"\ntcp_listen = \"127.0.0.1:0\"\ntoken = \"" +
            kToken + "\"\ncontrol_socket = \"" + control().string() +
            "\"\nwatch = false\n"
            "[plugins.reference]\nlibrary = \"" +
            (dir_ / "arbiter-reference.so").string() +
            "\"\n[plugins.lagpool]\nlibrary = \"lagpool\"\n";
        spdlog::set_level(spdlog::level::warn);
        host::ConfigLoadOptions options;
        options.bundled_plugin_dir = host::default_bundled_plugin_dir();
        server_ = std::make_unique<host::Server>(
            host::parse_config(text, "bench-serve.toml", dir_, options),
            host::ServeOptions{.config_options = options,
                               .ready_file = dir_ / "ready.json",
                               .handle_signals = false});
        for (const auto& endpoint : server_->endpoints())
            if (endpoint.starts_with("tcp ")) tcp_ = endpoint.substr(4);
        thread_ = std::thread([this] { server_->run(); });
    }
    ~ServerUnderTest() {
        server_->stop();
        thread_.join();
        server_.reset();
        fs::remove_all(dir_);
    }

    host::RelayClient unix_client() const {
        return host::RelayClient::connect_unix((dir_ / "relays.sock").string());
    }
    host::RelayClient tcp_client() const {
        auto client = host::RelayClient::connect_tcp(tcp_);
        client.hello("bench-relay", kToken);
        return client;
    }
    fs::path control() const { return dir_ / "control.sock"; }

  private:
    fs::path dir_;
    std::string tcp_;
    std::unique_ptr<host::Server> server_;
    std::thread thread_;
};

void stream_throughput(const char* transport, bool quick) {
    const uint32_t players = 1000;
    ServerUnderTest server;
    MovementStream stream({.players = players, .batch_events = 256});
    const auto batches = stream.prebuild(quick ? 400'000 : 2'000'000);
    host::RelayClient relay =
        std::string(transport) == "unix" ? server.unix_client() : server.tcp_client();
    const auto start = Clock::now();
    for (const auto& batch : batches)
        relay.send_batch(batch);
    json synced = json::parse(relay.sync(1, std::chrono::minutes(10)));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const uint64_t processed = synced.value("events", uint64_t{0});
    std::printf(
        "  %-5s %8llu events, %u players, 256 a batch: %6.2f s wall, %10.0f events/s; events lost "
        "%lld\n",
        transport, static_cast<unsigned long long>(stream.events()), players, seconds,
        static_cast<double>(processed) / seconds,
        static_cast<long long>(stream.events()) - static_cast<long long>(processed));
    std::fflush(stdout);
}

void swaps_under_load(uint32_t players, int reloads) {
    ServerUnderTest server;
    std::atomic<bool> sending{true};
    uint64_t sent = 0;
    std::string synced;
    std::thread relay_thread([&] {
        host::RelayClient relay = server.unix_client();
        MovementStream stream({.players = players, .batch_events = 256});
        while (sending)
            relay.send_batch(stream.next());
        synced = relay.sync(1, std::chrono::minutes(10));
        sent = stream.events();
    });
    std::this_thread::sleep_for(
        std::chrono::milliseconds(500));  // every player known, windows full
    std::vector<double> pauses;
    std::string state;  // what the last swap did with the plugin's state, and its size
    int failed = 0;
    for (int i = 0; i < reloads; ++i) {
        std::string error;
        auto answer = host::control_request(server.control().string(), "reload reference", error);
        json report = answer ? json::parse(*answer, nullptr, false) : json();
        if (!report.is_object() || !report.value("ok", false)) {
            ++failed;
            std::fprintf(stderr, "reload failed: %s\n", answer ? answer->c_str() : error.c_str());
            continue;
        }
        pauses.push_back(report["reports"][0].value("pause_us", 0.0));
        state = report["reports"][0].value("state", "");
        // Staged: shard by shard while the stream went on (the pause is the largest shard's).
        if (report["reports"][0].value("staged", false)) state += "; staged, shard by shard";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    sending = false;
    relay_thread.join();
    const uint64_t processed = json::parse(synced).value("events", uint64_t{0});
    std::printf(
        "  %7u players: %2d swaps via ctl, pause median %8.0f us, p99 %8.0f us, max %8.0f us; "
        "events sent %llu, processed %llu, lost %lld; failed reloads %d\n",
        players, reloads, median(pauses), percentile(pauses, 0.99), percentile(pauses, 1.0),
        static_cast<unsigned long long>(sent), static_cast<unsigned long long>(processed),
        static_cast<long long>(sent) - static_cast<long long>(processed), failed);
    std::printf("           state %s\n", state.c_str());
    std::fflush(stdout);
}

// This process's resident memory, in MB (the server runs in it).
double rss_mb() {
    std::FILE* status = std::fopen("/proc/self/status", "r");
    if (!status) return 0;
    char line[256];
    double kb = 0;
    while (std::fgets(line, sizeof line, status))
        if (std::sscanf(line, "VmRSS: %lf kB", &kb) == 1) break;
    std::fclose(status);
    return kb / 1024.0;
}

// One match of a relay: a start, ten players joining and walking at 5 m/s for ten seconds
// at 20 Hz (a batch every four ticks), and an end: 52 batches.
std::vector<std::vector<uint8_t>> soak_match(const std::string& relay_id, uint64_t match_id) {
    constexpr uint32_t kPlayers = 10;
    constexpr uint64_t kTicks = 200;
    constexpr int64_t kTickUs = 50'000;
    BatchBuilder builder(relay_id, match_id);
    std::vector<std::vector<uint8_t>> batches;
    build::MatchStart start;
    start.game = "soak";
    start.map = "flat";
    start.rules = "none";
    builder.add(0, 0, 0, start);
    for (uint32_t p = 1; p <= kPlayers; ++p) {
        build::PlayerJoin join;
        join.account_id = "acct-" + std::to_string(p);
        builder.add(0, 0, p, join);
    }
    batches.push_back(builder.finish());
    for (uint64_t tick = 1; tick <= kTicks; ++tick) {
        const int64_t t = static_cast<int64_t>(tick) * kTickUs;
        for (uint32_t p = 1; p <= kPlayers; ++p) {
            const float x = 5.0f * static_cast<float>(t) / 1e6f;
            build::Position position;
            position.position = fb::Vec3(x, static_cast<float>(p) * 3.0f, 0);
            builder.add(t, tick, p, position);
        }
        if (tick % 4 == 0) batches.push_back(builder.finish());
    }
    builder.add(static_cast<int64_t>(kTicks + 1) * kTickUs, kTicks + 1, 0, build::MatchEnd{});
    batches.push_back(builder.finish());
    return batches;
}

}  // namespace

void run_serve_soak(uint64_t matches) {
    constexpr int kRelays = 8;
    std::printf("arbiter serve over a long life: %llu matches of 10 players x 10 s from %d relays, "
                "8 in play at once (reference + lagpool):\n",
                static_cast<unsigned long long>(matches), kRelays);
    std::printf("  %9s %12s %10s %14s %12s\n", "matches", "play hours", "RSS MB", "players held",
                "events/s");
    ServerUnderTest server;
    std::vector<host::RelayClient> relays;
    for (int r = 0; r < kRelays; ++r) relays.push_back(server.unix_client());
    uint64_t done = 0, events = 0;
    const auto started = Clock::now();
    auto report = [&] {
        for (int r = 0; r < kRelays; ++r) (void)relays[static_cast<size_t>(r)].sync(done + 1, std::chrono::minutes(10));
        for (auto& relay : relays) (void)relay.take_received();  // the assessments, read and dropped
        std::string error;
        auto answer = host::control_request(server.control().string(), "status", error);
        const json status = answer ? json::parse(*answer, nullptr, false) : json();
        const uint64_t held = status.is_object() ? status["counters"].value("tracked_players", uint64_t{0}) : 0;
        const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
        std::printf("  %9llu %12.1f %10.1f %14llu %12.0f\n", static_cast<unsigned long long>(done),
                    static_cast<double>(done) * 10.0 / 3600.0, rss_mb(), static_cast<unsigned long long>(held),
                    static_cast<double>(events) / seconds);
        std::fflush(stdout);
    };
    const uint64_t report_every = std::max<uint64_t>(kRelays, matches / 8 / kRelays * kRelays);
    while (done < matches) {
        // Eight matches in play, one per relay, their batches interleaved.
        std::vector<std::vector<std::vector<uint8_t>>> playing;
        for (int r = 0; r < kRelays && done + playing.size() < matches; ++r)
            playing.push_back(soak_match("soak-relay-" + std::to_string(r), done + playing.size() + 1));
        for (size_t batch = 0; batch < playing.front().size(); ++batch)
            for (size_t r = 0; r < playing.size(); ++r) {
                relays[r].send_batch(playing[r][batch]);
                events += flatbuffers::GetRoot<fb::EventBatch>(playing[r][batch].data())->events()->size();
            }
        done += playing.size();
        // The client lives in this process too: what it heard is dropped as it goes, so that
        // the RSS printed is the server's.
        for (auto& relay : relays) (void)relay.take_received();
        if (done % report_every == 0 || done == matches) report();
    }
    std::printf("\n");
}

void run_serve_section(bool quick) {
    std::printf(
        "arbiter serve, end to end (reference + lagpool; one relay client on the same machine):\n");
    stream_throughput("unix", quick);
    stream_throughput("tcp", quick);
    std::printf(
        "hot reload of reference through arbiter serve while a relay streams (pause = the "
        "swap):\n");
    swaps_under_load(1000, 20);
    if (!quick) swaps_under_load(10'000, 10);
    std::printf("\n");
}

}  // namespace arbiter::bench
