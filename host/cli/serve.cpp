// `arbiter serve CONFIG`: the live host beside a relay (arbiter/host/server.hpp).
#include <cstdio>

#include <spdlog/spdlog.h>

#include "serve/server.hpp"
#include "commands.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter serve CONFIG [--unix PATH] [--tcp ADDRESS:PORT] [--control PATH]\n"
    "                            [--metrics ADDRESS:PORT] [--ready-file PATH] [--log-level LEVEL]\n";

}  // namespace

int run_serve(const std::vector<std::string>& args) {
    std::string config_path, level;
    std::optional<std::string> unix_socket, tcp_listen, control_socket, metrics_listen;
    std::string ready_file;
    for (size_t i = 0; i < args.size(); ++i) {
        auto value = [&](const char* option) -> std::optional<std::string> {
            if (i + 1 == args.size()) {
                std::fprintf(stderr, "arbiter serve: %s needs a value\n%s", option, kUsage);
                return std::nullopt;
            }
            return args[++i];
        };
        std::optional<std::string>* target = nullptr;
        if (args[i] == "--unix")
            target = &unix_socket;
        else if (args[i] == "--tcp")
            target = &tcp_listen;
        else if (args[i] == "--control")
            target = &control_socket;
        else if (args[i] == "--metrics")
            target = &metrics_listen;
        if (target) {
            if (!(*target = value(args[i].c_str()))) return kExitUsage;
        } else if (args[i] == "--ready-file" || args[i] == "--log-level") {
            std::string& out = args[i] == "--ready-file" ? ready_file : level;
            auto given = value(args[i].c_str());
            if (!given) return kExitUsage;
            out = *given;
        } else if (args[i].starts_with("--") || !config_path.empty()) {
            std::fprintf(stderr, "arbiter serve: unexpected argument %s\n%s", args[i].c_str(),
                         kUsage);
            return kExitUsage;
        } else {
            config_path = args[i];
        }
    }
    if (config_path.empty()) {
        std::fprintf(stderr, "%s", kUsage);
        return kExitUsage;
    }
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
