// `arbiter luanti-bridge WORLD TARGET`: a Luanti world's Arbiter mod followed live into a
// running `arbiter serve` (adapters/luanti/bridge/bridge.hpp; docs/games/luanti.md).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "bridge.hpp"
#include "commands.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter luanti-bridge WORLD SOCKET|ADDRESS:PORT [--relay NAME] [--token-file FILE]\n"
    "                             [--once] [--json] [--quiet]\n"
    "       WORLD is the Luanti world folder the arbiter mod writes into (arbiter/events/);\n"
    "       --once sends what is there, prints what the server answers, and ends.\n";

std::atomic<bool> stop_requested{false};

extern "C" void request_stop(int) {
    stop_requested = true;
}

}  // namespace

int run_luanti_bridge(const std::vector<std::string>& args) {
    luanti::BridgeOptions options;
    std::optional<std::string> token_file;
    std::vector<std::string> positional;
    auto fail = [](const std::string& what) {
        std::fprintf(stderr, "arbiter luanti-bridge: %s\n%s", what.c_str(), kUsage);
        return kExitUsage;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--once") {
            options.once = true;
        } else if (arg == "--json") {
            options.json = true;
        } else if (arg == "--quiet") {
            options.quiet = true;
        } else if (arg == "--relay" || arg == "--token-file") {
            if (i + 1 == args.size()) return fail(arg + " needs a value");
            (arg == "--relay" ? options.relay : token_file.emplace()) = args[++i];
        } else if (arg.starts_with("--")) {
            return fail("unknown option " + arg);
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2) return fail("expected a world folder and a server to send to");
    options.world = positional[0];
    options.target = positional[1];
    if (!std::filesystem::is_directory(options.world / "arbiter" / "events")) {
        std::fprintf(stderr,
                     "arbiter luanti-bridge: %s has no arbiter/events/ folder: is the arbiter "
                     "mod enabled in this world, and has the server run with it?\n",
                     options.world.c_str());
        return kExitInput;
    }
    if (options.relay.size() > 64) return fail("--relay takes at most 64 bytes");
    auto token = read_relay_token(token_file, "luanti-bridge");
    if (!token) return kExitInput;
    options.token = *token;

    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    std::signal(SIGPIPE, SIG_IGN);
    luanti::Bridge bridge(options);
    const int status = bridge.run(stop_requested);
    const luanti::BridgeCounts& counts = bridge.counts();
    if (!options.quiet)
        std::fprintf(stderr,
                     "arbiter luanti-bridge: %llu lines, %llu refused, %llu batches sent, %llu "
                     "already delivered, %llu flags to staff\n",
                     static_cast<unsigned long long>(counts.lines),
                     static_cast<unsigned long long>(counts.refused),
                     static_cast<unsigned long long>(counts.batches),
                     static_cast<unsigned long long>(counts.already_delivered),
                     static_cast<unsigned long long>(counts.flags));
    if (!options.quiet && counts.steps_timed > 0)
        std::fprintf(stderr,
                     "arbiter luanti-bridge: %llu steps sent live, %.1f ms after the server "
                     "wrote them on average, %.1f ms at most\n",
                     static_cast<unsigned long long>(counts.steps_timed),
                     static_cast<double>(counts.delay_sum_us) / 1000.0 /
                         static_cast<double>(counts.steps_timed),
                     static_cast<double>(counts.delay_max_us) / 1000.0);
    return status;
}

}  // namespace arbiter::cli
