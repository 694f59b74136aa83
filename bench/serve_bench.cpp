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

#include <arbiter/host/control_client.hpp>
#include <arbiter/host/relay_client.hpp>
#include <arbiter/host/server.hpp>

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

}  // namespace

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
