// `arbiter ddnet-bridge TEEHISTORIAN_DIR|FILE TARGET`: a DDNet server's teehistorian
// followed live into a running `arbiter serve` (adapters/ddnet/src/teehistorian_bridge.hpp;
// docs/games/ddnet.md).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>

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

std::atomic<bool> stop_requested{false};

extern "C" void request_ddnet_bridge_stop(int) {
    stop_requested = true;
}

}  // namespace

int run_ddnet_bridge(const std::vector<std::string>& args) {
    ddnet::DdnetBridgeOptions options;
    std::optional<std::string> token_file;
    std::vector<std::string> positional;
    auto fail = [](const std::string& what) {
        std::fprintf(stderr, "arbiter ddnet-bridge: %s\n%s", what.c_str(), kUsage);
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
        } else if (arg == "--relay" || arg == "--token-file" || arg == "--state") {
            if (i + 1 == args.size()) return fail(arg + " needs a value");
            const std::string& value = args[++i];
            if (arg == "--relay") options.relay = value;
            if (arg == "--token-file") token_file = value;
            if (arg == "--state") options.state = value;
        } else if (arg.starts_with("--")) {
            return fail("unknown option " + arg);
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2)
        return fail("expected a teehistorian folder or file and a server to send to");
    options.source = positional[0];
    options.target = positional[1];
    std::error_code error;
    if (!std::filesystem::exists(options.source, error)) {
        std::fprintf(stderr,
                     "arbiter ddnet-bridge: %s does not exist: it is the teehistorian/ folder "
                     "of the server's storage (the server runs with sv_tee_historian 1)\n",
                     options.source.c_str());
        return kExitInput;
    }
    if (options.relay.size() > 64) return fail("--relay takes at most 64 bytes");
    if (!options.relay.empty() && options.relay.find('\0') != std::string::npos)
        return fail("--relay must be text");
    auto token = read_relay_token(token_file, "ddnet-bridge");
    if (!token) return kExitInput;
    options.token = *token;

    std::signal(SIGTERM, request_ddnet_bridge_stop);
    std::signal(SIGINT, request_ddnet_bridge_stop);
    std::signal(SIGPIPE, SIG_IGN);
    ddnet::DdnetBridge bridge(options);
    const int status = bridge.run(stop_requested);
    const ddnet::DdnetBridgeCounts& counts = bridge.counts();
    if (!options.quiet)
        std::fprintf(stderr,
                     "arbiter ddnet-bridge: %llu file(s), %llu records, %llu damaged "
                     "stretch(es), %llu batches sent, %llu already delivered, %llu reconnects\n",
                     static_cast<unsigned long long>(counts.files),
                     static_cast<unsigned long long>(counts.records),
                     static_cast<unsigned long long>(counts.damaged),
                     static_cast<unsigned long long>(counts.batches),
                     static_cast<unsigned long long>(counts.already_delivered),
                     static_cast<unsigned long long>(counts.reconnects));
    return status;
}

}  // namespace arbiter::cli
