#include "bridge_args.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"

namespace arbiter::cli {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void request_bridge_stop(int) {
    stop_requested = true;
}

}  // namespace

std::optional<BridgeArgs> parse_bridge_args(const std::vector<std::string>& args,
                                            const char* command, const char* usage,
                                            const std::vector<std::string>& own_options,
                                            const char* positionals_wanted, int& status) {
    auto fail = [&](const std::string& what) {
        std::fprintf(stderr, "arbiter %s: %s\n%s", command, what.c_str(), usage);
        status = kExitUsage;
        return std::nullopt;
    };
    BridgeArgs parsed;
    std::optional<std::string> token_file;
    std::vector<std::string> positional;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const bool own = std::find(own_options.begin(), own_options.end(), arg) != own_options.end();
        if (arg == "--once") {
            parsed.connection.once = true;
        } else if (arg == "--json") {
            parsed.connection.json = true;
        } else if (arg == "--quiet") {
            parsed.connection.quiet = true;
        } else if (arg == "--relay" || arg == "--token-file" || own) {
            if (i + 1 == args.size()) return fail(arg + " needs a value");
            const std::string& value = args[++i];
            if (arg == "--relay") parsed.connection.relay = value;
            else if (arg == "--token-file") token_file = value;
            else parsed.values[arg] = value;
        } else if (arg.starts_with("--")) {
            return fail("unknown option " + arg);
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2) return fail(std::string("expected ") + positionals_wanted);
    parsed.source = positional[0];
    parsed.connection.target = positional[1];
    if (parsed.connection.relay.size() > 64) return fail("--relay takes at most 64 bytes");
    if (!host::is_valid_utf8(parsed.connection.relay) || parsed.connection.relay.find('\0') != std::string::npos)
        return fail("--relay must be text (UTF-8, no NUL)");
    auto token = read_relay_token(token_file, command);
    if (!token) {
        status = kExitInput;
        return std::nullopt;
    }
    parsed.connection.token = *token;
    return parsed;
}

const std::atomic<bool>& stop_on_signals() {
    std::signal(SIGTERM, request_bridge_stop);
    std::signal(SIGINT, request_bridge_stop);
    std::signal(SIGPIPE, SIG_IGN);
    return stop_requested;
}

}  // namespace arbiter::cli
