// `arbiter import IN.csv|IN.jsonl OUT.arbev`: operators' input traces into an event file.
// docs/recorded-matches.md lists the columns.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/tools/import.hpp"
#include "arbiter/tools/parse.hpp"
#include "commands.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter import IN.csv|IN.jsonl OUT.arbev [--format csv|jsonl] [--on-error stop|skip]\n"
    "           [--tick-rate HZ] [--labels OUT.truth.json] [--relay ID] [--batch-events N]\n"
    "           [--quiet]\n";

struct ImportCommand {
    std::string in, out;
    tools::ImportOptions options;
    bool quiet = false;
};

std::optional<ImportCommand> parse(const std::vector<std::string>& args) {
    ImportCommand command;
    tools::ImportOptions& o = command.options;
    std::vector<std::string> positional;
    std::optional<tools::TraceFormat> format;
    auto fail = [](const std::string& what) {
        std::fprintf(stderr, "arbiter import: %s\n%s", what.c_str(), kUsage);
        return std::nullopt;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (!arg.starts_with("--")) {
            positional.push_back(arg);
            continue;
        }
        if (arg == "--quiet") {
            command.quiet = true;
            continue;
        }
        if (i + 1 >= args.size()) return fail(arg + " needs a value");
        const std::string& value = args[++i];
        if (arg == "--format") {
            format = tools::trace_format_from_name(value);
            if (!format) return fail("unknown format '" + value + "' (csv or jsonl)");
        } else if (arg == "--on-error") {
            if (value == "stop") {
                o.on_bad_row = tools::OnBadRow::stop;
            } else if (value == "skip") {
                o.on_bad_row = tools::OnBadRow::skip;
            } else {
                return fail("--on-error '" + value + "' is neither stop nor skip");
            }
        } else if (arg == "--tick-rate") {
            auto rate = tools::parse_finite(value);
            if (!rate) return fail("--tick-rate '" + value + "' is not a number");
            o.tick_rate_hz = *rate;
        } else if (arg == "--labels") {
            o.labels = value;
        } else if (arg == "--relay") {
            o.relay_id = value;
        } else if (arg == "--batch-events") {
            auto n = tools::parse_u64(value);
            if (!n) return fail("--batch-events '" + value + "' is not a non-negative integer");
            o.batch_events = static_cast<size_t>(*n);
        } else {
            return fail("unknown option " + arg);
        }
    }
    if (positional.size() != 2) return fail("an input file and an output file, please");
    command.in = positional[0];
    command.out = positional[1];
    if (!format) format = tools::trace_format_from_path(command.in);
    if (!format)
        return fail("cannot tell the format of " + command.in +
                    " from its name: --format csv|jsonl");
    o.format = *format;
    try {
        tools::check_options(o);
    } catch (const std::invalid_argument& error) {
        return fail(error.what());
    }
    return command;
}

}  // namespace

int run_import(const std::vector<std::string>& args) {
    auto command = parse(args);
    if (!command) return kExitUsage;
    auto progress = host::progress_on_stderr(command->quiet);
    command->options.progress = progress.get();
    const tools::ImportOptions& o = command->options;

    tools::ImportReport report;
    try {
        report = tools::import_traces(command->in, command->out, o);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter import: %s (nothing written)\n", error.what());
        return kExitInput;
    }
    for (const auto& problem : report.problems)
        std::fprintf(stderr, "%s\n", problem.str(command->in).c_str());
    if (!report.written) {
        std::fprintf(stderr, "arbiter import: nothing written%s\n",
                     o.on_bad_row == tools::OnBadRow::stop && report.rows_seen > 0
                         ? " (--on-error skip imports the good rows and reports the bad)"
                         : "");
        return kExitInput;
    }
    const std::string skipped =
        report.rows_skipped ? " (" + std::to_string(report.rows_skipped) + " bad, skipped)" : "";
    std::fprintf(stderr,
                 "imported %llu of %llu rows%s into %llu match(es), %llu player(s): %llu events "
                 "(%llu orders, %llu positions) in %llu batches to %s%s%s\n",
                 static_cast<unsigned long long>(report.rows_imported),
                 static_cast<unsigned long long>(report.rows_seen), skipped.c_str(),
                 static_cast<unsigned long long>(report.matches),
                 static_cast<unsigned long long>(report.players),
                 static_cast<unsigned long long>(report.events),
                 static_cast<unsigned long long>(report.orders),
                 static_cast<unsigned long long>(report.positions),
                 static_cast<unsigned long long>(report.batches), command->out.c_str(),
                 o.labels.empty() ? "" : "; labels to ", o.labels.c_str());
    return report.rows_skipped ? kExitPartial : kExitOk;
}

}  // namespace arbiter::cli
