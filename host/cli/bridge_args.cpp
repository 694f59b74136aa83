#include "bridge_args.hpp"

#include <csignal>
#include <cstdio>

#include "commands.hpp"
#include "options.hpp"

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
    status = kExitUsage;
    BridgeArgs parsed;
    std::optional<std::string> token_file;
    OptionReader options(command, usage);
    options.flag("--once", parsed.connection.once);
    options.flag("--json", parsed.connection.json);
    options.flag("--quiet", parsed.connection.quiet);
    options.text("--relay", parsed.connection.relay);
    options.text("--token-file", token_file);
    for (const auto& own : own_options)
        options.value(own, [&parsed, own](const std::string& value) {
            parsed.values[own] = value;
            return std::string();
        });
    if (!options.read(args)) return std::nullopt;
    const auto& positional = options.positional();
    if (positional.size() != 2) return options.fail(std::string("expected ") + positionals_wanted);
    parsed.source = positional[0];
    parsed.connection.target = positional[1];
    if (const std::string problem = relay_name_problem(parsed.connection.relay); !problem.empty())
        return options.fail(problem);
    auto token = read_relay_token(token_file, command);
    if (!token) {
        status = kExitInput;
        return std::nullopt;
    }
    status = kExitOk;
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
