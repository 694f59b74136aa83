// `arbiter simulate OUT.arbev --players PROFILE=COUNT,...`: a synthetic match, with the
// ground truth of every player beside it. docs/recorded-matches.md describes it.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/parse.hpp"
#include "arbiter/tools/profiles.hpp"
#include "arbiter/tools/simulate.hpp"
#include "commands.hpp"

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
    std::vector<std::string> positional;
    bool have_players = false;
    auto fail = [](const std::string& what) {
        std::fprintf(stderr, "arbiter simulate: %s\n%s", what.c_str(), kUsage);
        return std::nullopt;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--list-profiles") {
            command.list_profiles = true;
            continue;
        }
        if (arg == "--quiet") {
            command.quiet = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            positional.push_back(arg);
            continue;
        }
        if (i + 1 >= args.size()) return fail(arg + " needs a value");
        const std::string& value = args[++i];
        if (arg == "--seed") {
            auto seed = tools::parse_u64(value);
            if (!seed) return fail("--seed '" + value + "' is not a non-negative integer");
            o.seed = *seed;
        } else if (arg == "--duration-s") {
            auto duration = tools::parse_finite(value);
            if (!duration) return fail("--duration-s '" + value + "' is not a number");
            o.duration_s = *duration;
        } else if (arg == "--tick-rate") {
            auto rate = tools::parse_finite(value);
            if (!rate) return fail("--tick-rate '" + value + "' is not a number");
            o.tick_rate_hz = *rate;
        } else if (arg == "--players") {
            try {
                o.players = tools::parse_player_mix(value);
            } catch (const std::invalid_argument& error) {
                return fail(error.what());
            }
            have_players = true;
        } else if (arg == "--truth") {
            o.truth = value;
        } else if (arg == "--batch-events") {
            auto n = tools::parse_u64(value);
            if (!n) return fail("--batch-events '" + value + "' is not a non-negative integer");
            o.batch_events = static_cast<size_t>(*n);
        } else if (arg == "--relay") {
            o.relay_id = value;
        } else if (arg == "--match") {
            auto id = tools::parse_u64(value);
            if (!id) return fail("--match '" + value + "' is not a non-negative integer");
            o.match_id = *id;
        } else if (arg == "--accounts") {
            if (value.empty()) return fail("--accounts needs a name");
            o.accounts = value;
        } else if (arg == "--human-traces") {
            command.human_traces = value;
        } else {
            return fail("unknown option " + arg);
        }
    }
    if (command.list_profiles) return command;
    if (positional.size() != 1) return fail("one output file, please");
    if (!have_players) return fail("--players is required");
    o.out = positional.front();
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
