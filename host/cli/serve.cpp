// `arbiter serve CONFIG`: the live host beside a relay (arbiter/host/server.hpp).
#include <cstdio>

#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "options.hpp"
#include "serve/server.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter serve CONFIG [--unix PATH] [--tcp ADDRESS:PORT] [--control PATH]\n"
    "                            [--metrics ADDRESS:PORT] [--ready-file PATH] [--log-level LEVEL]\n";

}  // namespace

int run_serve(const std::vector<std::string>& args) {
    std::string level;
    std::optional<std::string> unix_socket, tcp_listen, control_socket, metrics_listen;
    std::string ready_file;
    OptionReader options("serve", kUsage);
    options.text("--unix", unix_socket);
    options.text("--tcp", tcp_listen);
    options.text("--control", control_socket);
    options.text("--metrics", metrics_listen);
    options.text("--ready-file", ready_file);
    options.text("--log-level", level, host::kLogLevelsText);
    if (!options.read(args)) return kExitUsage;
    const auto& positional = options.positional();
    if (positional.size() > 1) {
        options.complain("unexpected argument " + positional[1] + " (one config, please)");
        return kExitUsage;
    }
    if (positional.empty()) {
        std::fprintf(stderr, "%s", kUsage);
        return kExitUsage;
    }
    const std::string& config_path = positional.front();
    auto config = load_config_or_report(config_path);
    if (!config) return kExitInput;
    if (unix_socket) config->serve.unix_socket = *unix_socket;
    if (tcp_listen) config->serve.tcp_listen = *tcp_listen;
    if (control_socket) config->serve.control_socket = *control_socket;
    if (metrics_listen) config->serve.metrics_listen = *metrics_listen;
    if (!config->serve.tcp_listen.empty() && config->serve.token.empty() &&
        config->serve.token_file.empty() && config->serve.relays.empty()) {
        std::fprintf(stderr,
                     "arbiter serve: relays over TCP must give a token: set serve.token, "
                     "serve.token_file or a [serve.relays.NAME] table in %s\n",
                     config_path.c_str());
        return kExitInput;
    }
    if (!setup_logging(level.empty() ? config->host.log_level : level)) return kExitUsage;
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e [%l] %v");
    // A server may start empty and have plugins added by a config edit (it watches the
    // file), so this is a warning, not a refusal.
    if (!has_enabled_plugin(*config))
        spdlog::warn("{} enables no plugin: every player is Clear until a [plugins.NAME] table "
                     "is added",
                     config_path);

    try {
        host::Server server(std::move(*config), host::ServeOptions{.config_options = {},
                                                                   .ready_file = ready_file,
                                                                   .handle_signals = true});
        if (!server.run()) return kExitPartial;  // stopped, but a step of the drain failed (logged)
    } catch (const std::exception& error) {
        spdlog::critical("arbiter serve: cannot serve: {}", error.what());
        return kExitInput;
    }
    return kExitOk;
}

}  // namespace arbiter::cli
