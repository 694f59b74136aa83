// `arbiter baseline CONFIG CORPUS...`: population baselines for every configured plugin
// that computes them, each written to the file its [plugins.NAME] table names.
#include <cstdio>
#include <filesystem>

#include "arbiter/host/baseline.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter baseline CONFIG CORPUS.arbev... [--quiet] [--log-level LEVEL]\n";

}  // namespace

int run_baseline(const std::vector<std::string>& args) {
    std::string log_level = "warn";
    bool quiet = false;
    OptionReader options("baseline", kUsage);
    options.flag("--quiet", quiet);
    options.text("--log-level", log_level, host::kLogLevelsText);
    if (!options.read(args)) return kExitUsage;
    const auto& positional = options.positional();
    if (positional.size() < 2) {
        options.complain("a config and at least one corpus file, please");
        return kExitUsage;
    }
    auto config = load_config_or_report(positional[0]);
    if (!config) return kExitInput;
    if (!setup_logging(log_level)) return kExitUsage;
    std::vector<std::filesystem::path> corpus(positional.begin() + 1, positional.end());

    host::BaselineReport report;
    try {
        report = host::compute_baselines(*config, corpus, host::progress_on_stderr(quiet).get());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter baseline: %s\n", error.what());
        return kExitInput;
    }
    for (const auto& problem : report.problems)
        std::fprintf(stderr, "arbiter baseline: %s\n", problem.c_str());
    for (const auto& name : report.skipped)
        std::printf("%-12s skipped: computes no baseline\n", name.c_str());
    bool failed = false;
    for (const auto& outcome : report.plugins) {
        if (outcome.written) {
            std::printf(
                "%-12s wrote %s (%llu bytes; corpus: %llu files, %llu matches, %llu batches)\n",
                outcome.plugin.c_str(), outcome.file.string().c_str(),
                static_cast<unsigned long long>(outcome.bytes),
                static_cast<unsigned long long>(report.files - report.unreadable_files),
                static_cast<unsigned long long>(report.matches),
                static_cast<unsigned long long>(report.batches));
        } else {
            failed = true;
            std::fprintf(stderr, "arbiter baseline: %s: %s\n", outcome.plugin.c_str(),
                         outcome.error.c_str());
        }
    }
    if (report.files == report.unreadable_files) {
        std::fprintf(stderr, "arbiter baseline: no corpus file could be read\n");
        return kExitInput;
    }
    return failed || !report.problems.empty() ? kExitPartial : kExitOk;
}

}  // namespace arbiter::cli
