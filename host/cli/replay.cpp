// `arbiter replay CONFIG EVENTS...`: recorded matches through the configured plugins.
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/host/progress.hpp"
#include "arbiter/host/sinks.hpp"
#include "commands.hpp"
#include "core/replay_file.hpp"
#include "options.hpp"

namespace arbiter::cli {

namespace {

struct ReplayOptions {
    std::string config;
    std::vector<std::string> event_files;
    bool json = false;
    bool quiet = false;  // no progress bar
    std::optional<std::string> log_level;
};

constexpr const char* kUsage =
    "usage: arbiter replay CONFIG EVENTS... [--json] [--quiet] [--log-level LEVEL]\n";

std::optional<ReplayOptions> parse(const std::vector<std::string>& args) {
    ReplayOptions command;
    OptionReader options("replay", kUsage);
    options.flag("--json", command.json);
    options.flag("--quiet", command.quiet);
    options.text("--log-level", command.log_level, host::kLogLevelsText);
    if (!options.read(args)) return std::nullopt;
    const auto& positional = options.positional();
    if (positional.size() < 2) return options.fail("a config and at least one event file, please");
    command.config = positional.front();
    command.event_files.assign(positional.begin() + 1, positional.end());
    return command;
}

struct InputTally {
    uint64_t records = 0;
    uint64_t damaged = 0;
    uint64_t refused = 0;
    uint64_t unreadable_files = 0;
};

// At most this many problems are printed per file; the rest are counted.
constexpr uint64_t kProblemsShownPerFile = 20;

void replay_one(const std::string& path, host::Host& host, InputTally& tally,
                const std::function<void(uint64_t)>& at, host::Progress& progress) {
    uint64_t problems = 0;
    const host::FileTally read = host::replay_file(
        path, host,
        [&](const host::FileProblem& problem) {
            using Kind = host::FileProblem::Kind;
            if (problem.kind != Kind::unreadable && ++problems > kProblemsShownPerFile) return;
            progress.clear_line();
            if (problem.kind == Kind::unreadable)
                std::fprintf(stderr, "%s\n", problem.text.c_str());
            else if (problem.kind == Kind::damaged)
                std::fprintf(stderr, "%s: offset %llu: %s; skipped %llu bytes to the next record\n",
                             path.c_str(), static_cast<unsigned long long>(problem.offset),
                             problem.text.c_str(), static_cast<unsigned long long>(problem.skipped));
            else
                std::fprintf(stderr, "%s: offset %llu: batch refused: %s\n", path.c_str(),
                             static_cast<unsigned long long>(problem.offset), problem.text.c_str());
        },
        at);
    tally.unreadable_files += read.unreadable ? 1 : 0;
    tally.records += read.records;
    tally.damaged += read.damaged;
    tally.refused += read.refused;
    if (problems > kProblemsShownPerFile)
        std::fprintf(stderr, "%s: %llu more problem(s) not shown\n", path.c_str(),
                     static_cast<unsigned long long>(problems - kProblemsShownPerFile));
}

}  // namespace

int run_replay(const std::vector<std::string>& args) {
    auto options = parse(args);
    if (!options) return kExitUsage;
    auto config = load_config_or_report(options->config);
    if (!config || report_if_no_plugin(*config, "replay")) return kExitInput;
    if (!setup_logging(options->log_level.value_or(config->host.log_level))) return kExitUsage;

    std::unique_ptr<host::Host> host = start_host(std::move(*config), "replay");
    if (!host) return kExitInput;
    bool plugins_refused = !host->plugin_errors().empty();  // with [host] partial_start

    InputTally tally;
    {
        auto progress = host::progress_on_stderr(options->quiet);
        host::FileSetProgress files(*progress, "replay", {options->event_files.begin(),
                                                         options->event_files.end()});
        for (size_t i = 0; i < options->event_files.size(); ++i)
            replay_one(options->event_files[i], *host, tally,
                       [&](uint64_t offset) { files.at(i, offset); }, *progress);
    }
    host->close();

    auto assessments = host->assessments();
    if (options->json) {
        for (const auto& assessment : assessments)
            std::cout << host::assessment_json(assessment) << '\n';
    } else {
        host::print_assessment_table(std::cout, assessments);
    }
    std::cout.flush();

    const auto& counters = host->counters();
    std::fprintf(stderr,
                 "replayed %llu batches (%llu events) from %zu file(s): %llu damaged stretch(es), "
                 "%llu refused "
                 "batch(es), %llu signal(s), %zu player(s) assessed\n",
                 static_cast<unsigned long long>(counters.batches),
                 static_cast<unsigned long long>(counters.events), options->event_files.size(),
                 static_cast<unsigned long long>(tally.damaged),
                 static_cast<unsigned long long>(tally.refused),
                 static_cast<unsigned long long>(counters.signals), assessments.size());
    warn_refused_plugins(*host, "replay");
    if (tally.unreadable_files == options->event_files.size()) return kExitInput;
    if (tally.damaged || tally.refused || tally.unreadable_files || plugins_refused)
        return kExitPartial;
    return kExitOk;
}

}  // namespace arbiter::cli
