// `arbiter luanti-bridge WORLD TARGET`: a Luanti world's Arbiter mod followed live into a
// running `arbiter serve` (adapters/luanti/bridge/bridge.hpp; docs/games/luanti.md).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "bridge.hpp"
#include "bridge_args.hpp"
#include "commands.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter luanti-bridge WORLD SOCKET|ADDRESS:PORT [--relay NAME] [--token-file FILE]\n"
    "                             [--once] [--json] [--quiet]\n"
    "       WORLD is the Luanti world folder the arbiter mod writes into (arbiter/events/);\n"
    "       --once sends what is there, prints what the server answers, and ends.\n";

}  // namespace

int run_luanti_bridge(const std::vector<std::string>& args) {
    int status = kExitOk;
    const auto parsed = parse_bridge_args(args, "luanti-bridge", kUsage, {},
                                          "a world folder and a server to send to", status);
    if (!parsed) return status;
    luanti::BridgeOptions options;
    options.world = parsed->source;
    options.connection = parsed->connection;
    if (!std::filesystem::is_directory(options.world / "arbiter" / "events")) {
        std::fprintf(stderr,
                     "arbiter luanti-bridge: %s has no arbiter/events/ folder: is the arbiter "
                     "mod enabled in this world, and has the server run with it?\n",
                     options.world.c_str());
        return kExitInput;
    }

    luanti::Bridge bridge(options);
    status = bridge.run(stop_on_signals());
    const luanti::BridgeCounts& counts = bridge.counts();
    if (!options.connection.quiet)
        fmt::print(stderr,
                   "arbiter luanti-bridge: {} lines, {} refused, {} batches sent, {} already "
                   "delivered, {} flags to staff\n",
                   counts.lines, counts.refused, counts.batches, counts.already_delivered,
                   counts.flags);
    if (!options.connection.quiet && counts.steps_timed > 0)
        fmt::print(stderr,
                     "arbiter luanti-bridge: {} steps sent live, {:.1f} ms after the server "
                     "wrote them on average, {:.1f} ms at most\n",
                     counts.steps_timed,
                     static_cast<double>(counts.delay_sum_us) / 1000.0 /
                         static_cast<double>(counts.steps_timed),
                     static_cast<double>(counts.delay_max_us) / 1000.0);
    return status;
}

}  // namespace arbiter::cli
