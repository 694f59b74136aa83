// `arbiter evaluate CONFIG MATCH.arbev...`: labelled matches through the configured
// plugins, scored per profile against their truth files.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arbiter/host/host.hpp"
#include "arbiter/host/progress.hpp"
#include "arbiter/tools/evaluate.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter evaluate CONFIG MATCH.arbev... [--truth FILE]... [--players] [--json]\n"
    "           [--quiet] [--log-level LEVEL]\n"
    "       (without --truth, each MATCH.arbev's truth is MATCH.truth.json beside it)\n";

struct EvaluateCommand {
    std::string config;
    std::vector<std::filesystem::path> matches, truths;
    bool json = false;
    bool players = false;  // a line per labelled player too
    bool quiet = false;
    std::optional<std::string> log_level;
};

std::optional<EvaluateCommand> parse(const std::vector<std::string>& args) {
    EvaluateCommand command;
    OptionReader options("evaluate", kUsage);
    options.flag("--json", command.json);
    options.flag("--quiet", command.quiet);
    options.flag("--players", command.players);
    options.texts("--truth", command.truths);
    options.text("--log-level", command.log_level, host::kLogLevelsText);
    if (!options.read(args)) return std::nullopt;
    const auto& positional = options.positional();
    if (positional.size() < 2) return options.fail("a config and at least one match file, please");
    command.config = positional.front();
    command.matches.assign(positional.begin() + 1, positional.end());
    return command;
}

}  // namespace

int run_evaluate(const std::vector<std::string>& args) {
    auto command = parse(args);
    if (!command) return kExitUsage;

    // The config first: its mistakes are the operator's to fix before any truth matters.
    auto config = load_config_or_report(command->config);
    if (!config || report_if_no_plugin(*config, "evaluate")) return kExitInput;

    tools::Truth truth;
    try {
        truth = tools::load_truths(command->matches, command->truths);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter evaluate: %s\n", error.what());
        return kExitInput;
    }
    if (!setup_logging(command->log_level.value_or(config->host.log_level))) return kExitUsage;
    std::unique_ptr<host::Host> host = start_host(std::move(*config), "evaluate");
    if (!host) return kExitInput;
    // With [host] partial_start: the host has logged each refusal; the exit status says so.
    const bool plugins_refused = !host->plugin_errors().empty();

    tools::EvaluationReport report = tools::evaluate(*host, command->matches, truth,
                                                         host::progress_on_stderr(command->quiet).get());
    for (const auto& problem : report.problems)
        std::fprintf(stderr, "%s\n", problem.c_str());
    if (command->json) {
        std::cout << tools::report_json(report, command->players) << '\n';
    } else {
        if (command->players) {
            tools::print_players(std::cout, report);
            std::cout << '\n';
        }
        tools::print_report(std::cout, report);
    }
    std::cout.flush();
    fmt::print(stderr,
               "evaluated {} batches ({} events) from {} file(s): {} damaged stretch(es), {} "
               "refused batch(es); {} unlabelled player(s), {} labelled player(s) never seen\n",
               report.batches, report.events, report.files, report.damaged, report.refused,
               report.unlabelled, report.missing);
    warn_refused_plugins(*host, "evaluate");
    if (report.unreadable_files == report.files) return kExitInput;
    if (report.unreadable_files || report.damaged || report.refused || report.unlabelled ||
        report.missing || plugins_refused)
        return kExitPartial;
    return kExitOk;
}

}  // namespace arbiter::cli
