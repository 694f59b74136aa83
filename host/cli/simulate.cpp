// `arbiter simulate OUT.arbev --players PROFILE=COUNT,...`: a synthetic match, with the
// ground truth of every player beside it. docs/recorded-matches.md describes it.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/profiles.hpp"
#include "arbiter/tools/simulate.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter simulate OUT.arbev --players PROFILE=COUNT,... [--seed N] [--duration-s S]\n"
    "           [--tick-rate HZ] [--truth OUT.truth.json] [--batch-events N] [--relay ID] [--match "
    "ID]\n"
    "           [--accounts NAME] [--human-traces FILE|builtin] [--quiet]\n"
    "       arbiter simulate --list-profiles\n";

struct SimulateCommand {
    tools::SimulationOptions options;
    std::optional<std::string> human_traces;
    bool list_profiles = false;
    bool quiet = false;
};

std::optional<SimulateCommand> parse(const std::vector<std::string>& args) {
    SimulateCommand command;
    tools::SimulationOptions& o = command.options;
    OptionReader options("simulate", kUsage);
    options.flag("--list-profiles", command.list_profiles);
    options.flag("--quiet", command.quiet);
    options.whole("--seed", o.seed);
    options.number("--duration-s", o.duration_s);
    options.number("--tick-rate", o.tick_rate_hz);
    options.value("--players", player_mix_reader("--players", o.players));
    options.text("--truth", o.truth);
    options.whole("--batch-events", o.batch_events);
    options.text("--relay", o.relay_id);
    options.whole("--match", o.match_id);
    options.nonempty("--accounts", o.accounts);
    options.text("--human-traces", command.human_traces);
    if (!options.read(args)) return std::nullopt;
    if (command.list_profiles) return command;
    if (options.positional().size() != 1) return options.fail("one output file, please");
    if (!options.given("--players")) return options.fail("--players is required");
    o.out = options.positional().front();
    return command;
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
    auto command = parse(args);
    if (!command) return kExitUsage;
    if (command->list_profiles) {
        for (const auto& profile : tools::profiles())
            std::printf("%-17s %-8s %s\n", profile.name, profile.cheater ? "cheater" : "honest",
                        profile.summary);
        return kExitOk;
    }
    auto progress = host::progress_on_stderr(command->quiet);
    command->options.progress = progress.get();
    const tools::SimulationOptions& o = command->options;
    try {
        tools::check_options(o);
    } catch (const std::invalid_argument& error) {
        std::fprintf(stderr, "arbiter simulate: %s\n%s", error.what(), kUsage);
        return kExitUsage;
    }
    auto rhythm = load_human_rhythm(command->human_traces, "simulate");
    if (!rhythm) return kExitInput;

    const auto started = std::chrono::steady_clock::now();
    tools::SimulationSummary summary;
    try {
        summary = tools::simulate(o, *rhythm);
    } catch (const std::invalid_argument& error) {
        std::fprintf(stderr, "arbiter simulate: %s\n", error.what());
        return kExitUsage;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter simulate: %s (nothing written)\n", error.what());
        return kExitInput;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    std::string mix;
    for (const auto& m : o.players)
        mix += (mix.empty() ? "" : ", ") + m.profile + " " + std::to_string(m.count);
    std::fprintf(stderr,
                 "simulated %g s at %g Hz, seed %llu: %u players (%s)\n"
                 "wrote %llu events in %llu batches, %.1f MB, to %s; truth to %s\n"
                 "human rhythm: %s\n"
                 "%.2f s, %.0f events/s\n",
                 o.duration_s, o.tick_rate_hz, static_cast<unsigned long long>(o.seed),
                 summary.players, mix.c_str(), static_cast<unsigned long long>(summary.events),
                 static_cast<unsigned long long>(summary.batches),
                 static_cast<double>(summary.bytes) / 1e6, summary.out.c_str(),
                 summary.truth.c_str(), rhythm->description().c_str(), seconds,
                 seconds > 0 ? static_cast<double>(summary.events) / seconds : 0.0);
    // Which accounts the store will see: a run's own unless --accounts named them.
    std::fprintf(stderr, "accounts %s to %s\n", tools::simulated_account(o, 1).c_str(),
                 tools::simulated_account(o, summary.players).c_str());
    return kExitOk;
}

}  // namespace arbiter::cli
