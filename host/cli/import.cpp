// `arbiter import IN.csv|IN.jsonl|IN.demo|IN.teehistorian|IN.osr... OUT.arbev`: operators'
// input traces, a DDNet demo or teehistorian, or osu! replays, into an event file.
// docs/recorded-matches.md lists the columns; docs/games/ddnet.md says what a demo and a
// teehistorian become, docs/games/osu.md what replays become (adapters/osu/osr_import).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arbiter/host/progress.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/import.hpp"
#include "arbiter/tools/simulate.hpp"
#include "commands.hpp"
#include "demo_import.hpp"
#include "options.hpp"
#include "osr_import.hpp"
#include "teehistorian_import.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter import IN.csv|IN.jsonl OUT.arbev [--format csv|jsonl] [--on-error stop|skip]\n"
    "           [--tick-rate HZ] [--labels OUT.truth.json] [--relay ID] [--batch-events N]\n"
    "           [--quiet]\n"
    "       arbiter import IN.demo OUT.arbev [--relay ID (default: the demo's file name)]\n"
    "           [--batch-events N] [--quiet]\n"
    "           (a DDNet/Teeworlds demo: by its .demo name or its TWDEMO marker)\n"
    "       arbiter import IN.teehistorian OUT.arbev [--relay ID (default: the file's name)]\n"
    "           [--quiet]\n"
    "           (a DDNet server's teehistorian: by its name or its marker; a batch a tick)\n"
    "       arbiter import IN.osr|FOLDER... OUT.arbev [--labels OUT.truth.json] ...\n"
    "           (osu! replays: one match, a player per replay: docs/games/osu.md)\n";

struct ImportCommand {
    std::string in, out;
    tools::ImportOptions options;
    bool quiet = false;
    bool demo = false;          // a DDNet demo, not a trace
    bool teehistorian = false;  // a DDNet teehistorian
    bool relay_given = false;
};

std::optional<ImportCommand> parse(const std::vector<std::string>& args) {
    ImportCommand command;
    tools::ImportOptions& o = command.options;
    std::optional<tools::TraceFormat> format;
    OptionReader options("import", kUsage);
    options.flag("--quiet", command.quiet);
    options.value(
        "--format",
        [&format](const std::string& value) {
            format = tools::trace_format_from_name(value);
            return format ? std::string()
                          : OptionReader::not_one_of("--format", value, {"csv", "jsonl"});
        },
        "csv or jsonl");
    options.choice("--on-error", o.on_bad_row,
                   std::vector<std::pair<std::string, tools::OnBadRow>>{
                       {"stop", tools::OnBadRow::stop}, {"skip", tools::OnBadRow::skip}});
    options.number("--tick-rate", o.tick_rate_hz);
    options.text("--labels", o.labels);
    options.text("--relay", o.relay_id);
    options.whole("--batch-events", o.batch_events);
    for (const char* osu_only : {"--replay-labels", "--match"})
        options.value(osu_only, [osu_only](const std::string&) {
            return std::string(osu_only) + " is for osu! replays (IN.osr or a folder of them)";
        });
    if (!options.read(args)) return std::nullopt;
    command.relay_given = options.given("--relay");
    // The options a demo or a teehistorian has no use for.
    std::vector<std::string> trace_only;
    for (const auto& given : options.given_options())
        if (given != "--quiet" && given != "--relay" && given != "--batch-events")
            trace_only.push_back(given);
    const auto& positional = options.positional();
    if (positional.size() != 2) return options.fail("an input file and an output file, please");
    command.in = positional[0];
    command.out = positional[1];
    if (!format && ddnet::looks_like_teehistorian(command.in)) {
        command.teehistorian = true;
        if (!trace_only.empty())
            return options.fail(trace_only.front() + " is for traces, not for a teehistorian");
        if (o.batch_events != tools::ImportOptions{}.batch_events)
            return options.fail(
                "--batch-events is for traces and demos: a teehistorian is a batch a tick");
        if (o.relay_id.empty()) return options.fail("--relay must not be empty");
        return command;
    }
    if (!format && ddnet::looks_like_demo(command.in)) {
        command.demo = true;
        if (!trace_only.empty())
            return options.fail(trace_only.front() + " is for traces, not for a demo");
        if (o.batch_events == 0 || o.batch_events > tools::kMaxBatchEvents)
            return options.fail("--batch-events must be from 1 to " +
                                std::to_string(tools::kMaxBatchEvents));
        if (o.relay_id.empty()) return options.fail("--relay must not be empty");
        return command;
    }
    if (!format) format = tools::trace_format_from_path(command.in);
    if (!format)
        return options.fail("cannot tell the format of " + command.in +
                            " from its name: --format csv|jsonl");
    o.format = *format;
    try {
        tools::check_options(o);
    } catch (const std::invalid_argument& error) {
        return options.fail(error.what());
    }
    return command;
}

}  // namespace

namespace {

// Demos and teehistorians imported apart and replayed together stay apart: each is its own
// relay, named after its file, unless --relay says otherwise. Relay names are at most 64
// bytes (the serve protocol's hello); a teehistorian's UUID name is 36.
std::string relay_of_file(const ImportCommand& command) {
    std::string relay = command.relay_given ? command.options.relay_id
                                            : std::filesystem::path(command.in).stem().string();
    if (relay.empty()) relay = "import";
    return host::to_valid_utf8(relay, 64);
}

// A file a DDNet adapter could not import: "nothing written", exit 2.
int report_not_imported(const std::exception& error) {
    std::fprintf(stderr, "arbiter import: %s (nothing written)\n", error.what());
    return kExitInput;
}

}  // namespace

// A DDNet demo: every problem by its offset; exit 3 when the demo was damaged.
int run_demo_import(const ImportCommand& command, host::Progress* progress) {
    ddnet::DemoImportOptions options;
    options.relay_id = relay_of_file(command);
    options.batch_events = command.options.batch_events;
    options.progress = progress;
    ddnet::DemoImportReport report;
    try {
        report = ddnet::import_demo(command.in, command.out, options);
    } catch (const std::exception& error) {
        return report_not_imported(error);
    }
    for (const auto& problem : report.read.problems)
        std::fprintf(stderr, "%s: offset %llu: %s\n", command.in.c_str(),
                     static_cast<unsigned long long>(problem.offset), problem.what.c_str());
    if (!report.written) {
        std::fprintf(stderr, "arbiter import: nothing written\n");
        return kExitInput;
    }
    const ddnet::DemoReadResult& read = report.read;
    fmt::print(stderr,
               "imported demo '{}' (version {}, {}, ticks {} to {}: {} snapshots, {} deltas, {} "
               "messages) into 1 match, {} player(s): {} events ({} orders, {} positions, {} of "
               "them server teleports) in {} batches to {}\n",
               read.header.map_name.c_str(), read.header.version, read.header.net_version.c_str(),
               read.first_tick, read.last_tick, read.snapshots, read.deltas, read.messages,
               report.players, report.events, report.orders, report.positions,
               report.server_teleports, report.batches, command.out);
    return read.problems.empty() ? kExitOk : kExitPartial;
}

// A DDNet teehistorian: every problem by its offset; exit 3 when the file was damaged.
int run_teehistorian_import(const ImportCommand& command, host::Progress* progress) {
    ddnet::ThImportOptions options;
    options.relay_id = relay_of_file(command);
    options.progress = progress;
    ddnet::ThImportReport report;
    try {
        report = ddnet::import_teehistorian(command.in, command.out, options);
    } catch (const std::exception& error) {
        return report_not_imported(error);
    }
    if (!report.header_ok)
        std::fprintf(stderr, "%s: not a teehistorian: %s\n", command.in.c_str(),
                     report.header_problem.c_str());
    for (const auto& problem : report.problems)
        std::fprintf(stderr, "%s: offset %llu: %s\n", command.in.c_str(),
                     static_cast<unsigned long long>(problem.offset), problem.what.c_str());
    if (!report.written) {
        std::fprintf(stderr, "arbiter import: nothing written\n");
        return kExitInput;
    }
    const ddnet::ThEventCounts& c = report.counts;
    fmt::print(stderr,
               "imported teehistorian (ticks {} to {}, {} records, {} bytes{}) into 1 match, {} "
               "player(s): {} events ({} orders, {} positions, {} of them server teleports) in {} "
               "batches to {}\n",
               report.first_tick, report.last_tick, report.records, report.bytes,
               report.finished ? "" : ", not finished by the server", c.players, c.events,
               c.orders, c.positions, c.server_teleports, report.batches, command.out);
    return report.problems.empty() ? kExitOk : kExitPartial;
}

int run_import(const std::vector<std::string>& args) {
    if (is_osr_import(args)) return run_osr_import(args);
    auto command = parse(args);
    if (!command) return kExitUsage;
    auto progress = host::progress_on_stderr(command->quiet);
    if (command->demo) return run_demo_import(*command, progress.get());
    if (command->teehistorian) return run_teehistorian_import(*command, progress.get());
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
    fmt::print(stderr,
               "imported {} of {} rows{} into {} match(es), {} player(s): {} events ({} orders, "
               "{} positions) in {} batches to {}{}{}\n",
               report.rows_imported, report.rows_seen, skipped, report.matches, report.players,
               report.events, report.orders, report.positions, report.batches, command->out,
               o.labels.empty() ? "" : "; labels to ", o.labels.string());
    return report.rows_skipped ? kExitPartial : kExitOk;
}

}  // namespace arbiter::cli
