// `arbiter ctl`: asks a running `arbiter serve` over its control socket. The protocol
// is one line of text in (the command), one JSON document out.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "wire/control_client.hpp"

namespace arbiter::cli {

namespace {

using json = nlohmann::json;

constexpr const char* kUsage =
    "usage: arbiter ctl SOCKET|CONFIG COMMAND [--json]\n"
    "  commands: status | plugins | assessments | reload [PLUGIN]\n"
    "  SOCKET is the control socket; CONFIG a server_config.toml whose serve.control_socket names "
    "it.\n"
    "  reload PLUGIN reloads one plugin from its file; reload alone re-reads the config.\n";

void print_status(const json& status) {
    std::cout << fmt::format("server {}: up {:.0f} s, {:.0f} events/s, queue {} of {} bytes\n",
                             status.value("server_id", ""), status.value("uptime_s", 0.0),
                             status.value("events_per_second", 0.0),
                             status["queue"].value("bytes", 0),
                             status["queue"].value("capacity", 0));
    const json& c = status["counters"];
    std::cout << fmt::format(
        "batches {}  events {}  refused {}  signals {}  open matches {}  ended {}  players held "
        "{}\n",
        c.value("batches", 0), c.value("events", 0), c.value("refused_batches", 0),
        c.value("signals", 0), c.value("open_matches", 0), c.value("matches_ended", 0),
        c.value("tracked_players", 0));
    std::cout << fmt::format("\n{:<5} {:<9} {:<22} {:<16} {:>10} {:>12} {:>8} {:>8}\n", "conn",
                             "transport", "peer", "relay", "batches", "events", "refused",
                             "problems");
    for (const auto& connection : status["connections"])
        std::cout << fmt::format("{:<5} {:<9} {:<22} {:<16} {:>10} {:>12} {:>8} {:>8}\n",
                                 connection.value("id", 0), connection.value("transport", ""),
                                 // A relay names itself: shown escaped, never as raw bytes
                                 // a terminal would act on.
                                 host::escape_for_message(connection.value("peer", ""), 64),
                                 host::showable_name(connection.value("relay", ""), 32),
                                 connection.value("batches", 0), connection.value("events", 0),
                                 connection.value("refused", 0), connection.value("problems", 0));
    std::cout << fmt::format("\n{:<12} {:<10} {:>10} {:>8} {:>12} {:>12} {:>9}  {}\n", "plugin",
                             "version", "calls", "errors", "busy ms", "slowest ms", "late",
                             "state");
    for (const auto& plugin : status["plugins"]) {
        std::string state =
            plugin.value("active", false) ? "active" : "REFUSED: " + plugin.value("error", "");
        if (plugin.value("active", false) && plugin.value("isolation", "none") == "process") {
            state = plugin.value("quarantined", "").empty()
                        ? fmt::format("active, isolated (pid {}, {} restart(s))",
                                      plugin.value("pid", 0), plugin.value("restarts", 0))
                        : "QUARANTINED: " + plugin.value("quarantined", "");
        }
        // What the plugin lost past its bounds (docs/server-config.md): it goes on, throttled.
        if (const json& past = plugin.value("past_bounds", json::object()); !past.empty()) {
            std::string throttled;
            auto note = [&](const char* key, const char* what) {
                if (const uint64_t count = past.value(key, uint64_t{0}); count > 0)
                    throttled += fmt::format("{}{} {}", throttled.empty() ? "" : ", ", count, what);
            };
            note("log_lines", "log lines");
            note("metric_names", "new metric names");
            note("signals_over_bound", "signals past max_signals_per_call");
            note("signals_about_strangers", "signals about players not in the match");
            if (!throttled.empty()) state += "; THROTTLED, dropped: " + throttled;
        }
        std::cout << fmt::format(
            "{:<12} {:<10} {:>10} {:>8} {:>12.1f} {:>12.1f} {:>9}  {}\n", plugin.value("name", ""),
            plugin.value("version", ""), plugin.value("calls", 0), plugin.value("errors", 0),
            plugin.value("busy_ms", 0.0), plugin.value("slowest_call_ms", 0.0),
            plugin.value("over_deadline", 0), state);
    }
    if (!status["recent_reloads"].empty()) std::cout << "\nrecent reloads:\n";
    for (const auto& report : status["recent_reloads"])
        std::cout << "  " << report.value("message", "") << "\n";
}

}  // namespace

int run_ctl(const std::vector<std::string>& args) {
    bool raw = false;
    OptionReader options("ctl", kUsage);
    options.flag("--json", raw);
    if (!options.read(args)) return kExitUsage;
    const std::vector<std::string>& words = options.positional();
    if (words.size() < 2 || words.size() > 3) {
        std::fprintf(stderr, "%s", kUsage);
        return kExitUsage;
    }
    std::string socket = words[0];
    if (socket.ends_with(".toml")) {
        auto config = load_config_or_report(socket);
        if (!config) return kExitInput;
        if (config->serve.control_socket.empty()) {
            std::fprintf(stderr, "arbiter ctl: %s sets no serve.control_socket\n", socket.c_str());
            return kExitInput;
        }
        socket = config->serve.control_socket;
    }
    std::string command = words[1] + (words.size() == 3 ? " " + words[2] : "");
    std::string error;
    auto answer = host::control_request(socket, command, error);
    if (!answer) {
        std::fprintf(stderr, "arbiter ctl: %s\n", error.c_str());
        return kExitInput;
    }
    json parsed = json::parse(*answer, nullptr, false);
    if (parsed.is_discarded()) {
        std::fprintf(stderr, "arbiter ctl: the server's answer is not JSON: %s\n", answer->c_str());
        return kExitInput;
    }
    const bool ok = !parsed.is_object() || parsed.value("ok", true);
    if (raw || words[1] == "plugins" || words[1] == "assessments") {
        std::cout << parsed.dump(2) << "\n";
    } else if (words[1] == "status") {
        print_status(parsed);
    } else if (parsed.contains("summary") && parsed["summary"].is_string()) {
        // A config reload: what it came to first, then what each change took (a refusal's
        // reasons are in the summary already).
        std::cout << parsed.value("config", std::string()) << ": "
                  << parsed["summary"].get<std::string>() << "\n";
        if (ok)
            for (const auto& report : parsed.value("reports", json::array()))
                std::cout << "  " << report.value("message", "") << "\n";
        for (const auto& problem : parsed.value("problems", json::array()))
            std::cout << "  " << problem.get<std::string>() << "\n";
    } else {
        for (const auto& report : parsed.value("reports", json::array()))
            std::cout << report.value("message", "") << "\n";
        for (const auto& problem : parsed.value("problems", json::array()))
            std::cout << problem.get<std::string>() << "\n";
        if (parsed.contains("error") && parsed["error"].is_string())
            std::cerr << "arbiter ctl: " << parsed["error"].get<std::string>() << "\n";
    }
    return ok ? kExitOk : kExitPartial;
}

}  // namespace arbiter::cli
