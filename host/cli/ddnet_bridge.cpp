// `arbiter ddnet-bridge TEEHISTORIAN_DIR|FILE TARGET`: a DDNet server's teehistorian
// followed live into a running `arbiter serve` (adapters/ddnet/src/teehistorian_bridge.hpp;
// docs/games/ddnet.md).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "bridge_args.hpp"
#include "commands.hpp"
#include "teehistorian_bridge.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter ddnet-bridge TEEHISTORIAN_DIR|FILE SOCKET|ADDRESS:PORT [--relay NAME]\n"
    "                            [--token-file FILE] [--state FILE] [--once] [--json] [--quiet]\n"
    "       TEEHISTORIAN_DIR is the teehistorian/ folder of a DDNet server's storage (the\n"
    "       server runs with sv_tee_historian 1): the newest file is followed, then the next\n"
    "       one the server begins; a FILE is followed alone. --state: where the place is\n"
    "       kept (default: .arbiter-ddnet-bridge.json in the folder, FILE.arbiter-ddnet-\n"
    "       bridge.json beside a file); --once sends what is written, prints what the\n"
    "       server answers, and ends.\n";

}  // namespace

int run_ddnet_bridge(const std::vector<std::string>& args) {
    int status = kExitOk;
    const auto parsed =
        parse_bridge_args(args, "ddnet-bridge", kUsage, {"--state"},
                          "a teehistorian folder or file and a server to send to", status);
    if (!parsed) return status;
    ddnet::DdnetBridgeOptions options;
    options.source = parsed->source;
    options.connection = parsed->connection;
    if (const auto state = parsed->values.find("--state"); state != parsed->values.end())
        options.state = state->second;
    std::error_code error;
    if (!std::filesystem::exists(options.source, error)) {
        std::fprintf(stderr,
                     "arbiter ddnet-bridge: %s does not exist: it is the teehistorian/ folder "
                     "of the server's storage (the server runs with sv_tee_historian 1)\n",
                     options.source.c_str());
        return kExitInput;
    }

    ddnet::DdnetBridge bridge(options);
    status = bridge.run(stop_on_signals());
    const ddnet::DdnetBridgeCounts& counts = bridge.counts();
    if (!options.connection.quiet)
        fmt::print(stderr,
                   "arbiter ddnet-bridge: {} file(s), {} records, {} damaged stretch(es), {} "
                   "batches sent, {} already delivered, {} reconnects\n",
                   counts.files, counts.records, counts.damaged, counts.batches,
                   counts.already_delivered, counts.reconnects);
    return status;
}

}  // namespace arbiter::cli
