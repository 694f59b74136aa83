// `arbiter import` given osu! replays (an .osr file or a folder of them): the command's
// options, its progress and its report. What a replay becomes is the osu! adapter's
// (adapters/osu/src/osr_import.hpp, docs/games/osu.md).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arbiter/host/progress.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/simulate.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "osr_import.hpp"
#include "osr_reader.hpp"

namespace arbiter::cli {

using namespace osu;

bool is_osr_import(const std::vector<std::string>& args) {
    // The inputs are the positionals but the last; an option's value is not one.
    std::vector<std::string> positional;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--quiet") continue;
        if (args[i].starts_with("--")) {
            ++i;
            continue;
        }
        positional.push_back(args[i]);
    }
    if (positional.size() < 2) return false;
    positional.pop_back();
    for (const auto& p : positional) {
        std::error_code error;
        if (looks_like_osr(p) || std::filesystem::is_directory(p, error)) return true;
    }
    return false;
}

namespace {

constexpr const char* kUsage =
    "usage: arbiter import IN.osr|FOLDER... OUT.arbev [--labels OUT.truth.json]\n"
    "           [--replay-labels LABELS.csv] [--on-error stop|skip] [--relay ID] [--match ID]\n"
    "           [--batch-events N] [--quiet]\n"
    "           (osu! replays: one match, a player per replay; a folder is searched for .osr\n"
    "           files, and its labels.csv (file,label,kind) labels them for --labels)\n";

}  // namespace

int run_osr_import(const std::vector<std::string>& args) {
    OsrImportOptions options;
    bool quiet = false;
    std::optional<std::filesystem::path> replay_labels;
    OptionReader reader("import", kUsage);
    reader.set_unknown_note(" (for replays)");
    reader.flag("--quiet", quiet);
    reader.text("--labels", options.labels_out);
    reader.text("--replay-labels", replay_labels);
    reader.choice("--on-error", options.skip_bad_replays,
                  std::vector<std::pair<std::string, bool>>{{"stop", false}, {"skip", true}});
    reader.text("--relay", options.relay_id);
    reader.whole("--match", options.match_id, 1);
    reader.whole("--batch-events", options.batch_events, 1, tools::kMaxBatchEvents);
    if (!reader.read(args)) return kExitUsage;
    auto usage = [&reader](const std::string& what) {
        reader.complain(what);
        return kExitUsage;
    };
    const bool relay_given = reader.given("--relay");
    std::vector<std::string> positional = reader.positional();
    if (positional.size() < 2) return usage("replays or folders, then an output file, please");
    if (options.relay_id.empty()) return usage("--relay must not be empty");
    const std::filesystem::path out = positional.back();
    positional.pop_back();
    std::vector<std::filesystem::path> paths(positional.begin(), positional.end());
    if (replay_labels) {
        options.labels_csv = *replay_labels;
    } else if (!options.labels_out.empty() && paths.size() == 1) {
        std::error_code error;
        if (std::filesystem::is_directory(paths[0], error) &&
            std::filesystem::exists(paths[0] / "labels.csv", error))
            options.labels_csv = paths[0] / "labels.csv";
    }
    auto progress = host::progress_on_stderr(quiet);
    options.progress = progress.get();
    OsrImportReport report;
    try {
        const std::vector<OsrInput> inputs = list_replays(paths);
        // Replays imported apart and replayed together stay apart, as demos do: one replay
        // is a relay of its own, named after its file (at most 64 bytes, the serve
        // protocol's bound), unless --relay says otherwise.
        if (!relay_given && inputs.size() == 1) {
            const std::string stem = host::to_valid_utf8(inputs[0].path.stem().string(), 64);
            if (!stem.empty()) options.relay_id = stem;
        }
        report = import_replays(inputs, out, options);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter import: %s (nothing written)\n", error.what());
        return 2;
    }
    for (const auto& r : report.replays)
        if (r.problem) std::fprintf(stderr, "%s: %s\n", r.name.c_str(), r.problem->c_str());
    if (!report.written) {
        std::fprintf(stderr, "arbiter import: nothing written%s\n",
                     report.refused && !options.skip_bad_replays
                         ? " (--on-error skip imports the good replays and reports the bad)"
                         : "");
        return 2;
    }
    if (report.replays.size() == 1) {
        const OsrReplayReport& r = report.replays.front();
        fmt::print(stderr,
                   "imported replay of '{}' (osu! {}, mods {}: {} frames, {} left out, from {} ms "
                   "to {} ms of the map)",
                   host::showable_name(r.player_name, 64), r.version, mods_text(r.mods), r.frames,
                   r.left_out, r.first_time_ms, r.last_time_ms);
    } else {
        fmt::print(stderr, "imported {} of {} replays", report.players, report.replays.size());
    }
    fmt::print(stderr,
               " into 1 match, {} player(s): {} events ({} key presses, {} cursor positions) in {} "
               "batches to {}{}{}\n",
               report.players, report.events, report.orders, report.positions, report.batches,
               out.string(), options.labels_out.empty() ? "" : "; labels to ",
               options.labels_out.string());
    if (report.replays.size() == 1) {
        // For the reviewer: circleguard's snaps, at the replay's own times (not relay time).
        const OsrReplayReport& r = report.replays.front();
        std::string times;
        for (size_t i = 0; i < r.snap_times_ms.size() && i < 20; ++i)
            times += (i ? ", " : "") + std::to_string(r.snap_times_ms[i]);
        if (r.snap_times_ms.size() > 20) times += ", ...";
        std::fprintf(stderr, "%s: %zu snap(s) by circleguard's rule, without the beatmap%s%s%s\n",
                     r.name.c_str(), r.snap_times_ms.size(), times.empty() ? "" : " (at ",
                     times.c_str(), times.empty() ? "" : " ms of the map)");
    }
    return report.refused ? 3 : 0;
}

}  // namespace arbiter::cli
