// `arbiter soak CONFIG`: the false-positive soak (tools/include/arbiter/tools/soak.hpp).
// Thousands of simulated honest players, a match at a time, through the configured
// plugins; prints how many reached Monitor and FlagForReview, per profile and per check.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arbiter/host/host.hpp"
#include "arbiter/tools/parse.hpp"
#include "arbiter/tools/soak.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "store/store.hpp"

namespace arbiter::cli {

namespace {

constexpr const char* kUsage =
    "usage: arbiter soak CONFIG [--players N] [--match-players N] [--durations-s S,S,...]\n"
    "           [--seed N] [--mix PROFILE=WEIGHT,...] [--work-dir DIR]\n"
    "           [--human-traces FILE|builtin] [--json] [--quiet] [--log-level LEVEL]\n";

struct SoakCommand {
    std::string config;
    tools::SoakOptions options;
    std::optional<std::string> human_traces;
    bool json = false;
    bool quiet = false;
    std::optional<std::string> log_level;
};

std::optional<std::vector<double>> parse_durations(const std::string& text) {
    std::vector<double> durations;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        auto value = tools::parse_finite(std::string_view(text).substr(start, end - start));
        if (!value) return std::nullopt;
        durations.push_back(*value);
        start = end + 1;
    }
    return durations;
}

std::optional<SoakCommand> parse(const std::vector<std::string>& args) {
    SoakCommand command;
    tools::SoakOptions& o = command.options;
    OptionReader options("soak", kUsage);
    options.flag("--json", command.json);
    options.flag("--quiet", command.quiet);
    options.whole("--players", o.players, 0, tools::kMaxSimulatedPlayers);
    options.whole("--match-players", o.match_players, 0, tools::kMaxSimulatedPlayers);
    options.value("--durations-s", [&o](const std::string& value) {
        auto durations = parse_durations(value);
        if (!durations) return "--durations-s '" + value + "' is not a list of seconds";
        o.durations_s = std::move(*durations);
        return std::string();
    });
    options.whole("--seed", o.seed);
    options.value("--mix", player_mix_reader("--mix", o.mix));
    options.text("--work-dir", o.work_dir);
    options.text("--human-traces", command.human_traces);
    options.text("--log-level", command.log_level, host::kLogLevelsText);
    if (!options.read(args)) return std::nullopt;
    if (options.positional().size() != 1) return options.fail("one config, please");
    command.config = options.positional().front();
    if (o.work_dir.empty()) o.work_dir = std::filesystem::temp_directory_path();
    try {
        tools::check_options(o);
    } catch (const std::invalid_argument& error) {
        return options.fail(error.what());
    }
    return command;
}

std::string format(const char* pattern, auto... values) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, values...);
    return text;
}

}  // namespace

int run_soak(const std::vector<std::string>& args) {
    auto command = parse(args);
    if (!command) return kExitUsage;
    auto config = load_config_or_report(command->config);
    if (!config || report_if_no_plugin(*config, "soak")) return kExitInput;
    if (!setup_logging(command->log_level.value_or(config->host.log_level))) return kExitUsage;
    auto rhythm = load_human_rhythm(command->human_traces, "soak");
    if (!rhythm) return kExitInput;

    // The soak's players are made up: nothing of them goes to the operator's security log.
    config->sinks.security_log.clear();
    // A soak runs for minutes with a match of up to a gigabyte on disk: an interrupted one
    // takes its folder with it. The signals wait for a thread of their own (blocked in
    // every other, from before the folder exists), which removes the folder and then ends
    // the process by the signal, as it would have.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    // Each match in a folder of its own, so that two soaks never share a file.
    std::filesystem::path work;
    try {
        const std::filesystem::path base = command->options.work_dir;
        std::string pattern = (base / "arbiter-soak-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            throw std::runtime_error("cannot make a folder in " + base.string());
        work = pattern;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter soak: %s\n", error.what());
        return kExitInput;
    }
    command->options.work_dir = work;
    struct RemoveFolder {
        std::filesystem::path path;
        ~RemoveFolder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    } const remove_work{work};
    std::thread([stop_signals, work] {
        int signal = 0;
        if (sigwait(&stop_signals, &signal) != 0) return;
        std::fprintf(stderr, "arbiter soak: stopped by signal %d; removing its matches\n", signal);
        // The main thread may still be writing a file into the folder: try again until it
        // is gone (remove_all fails with "not empty" when a file appears meanwhile).
        for (int attempt = 0; attempt < 50; ++attempt) {
            std::error_code error;
            std::filesystem::remove_all(work, error);
            if (!std::filesystem::exists(work, error)) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::signal(signal, SIG_DFL);
        sigset_t just_this;
        sigemptyset(&just_this);
        sigaddset(&just_this, signal);
        pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
        ::raise(signal);
        std::_Exit(128 + signal);  // only if the signal did not end the process
    }).detach();

    std::vector<std::string> refused;
    auto make_host = [&]() {
        auto host = std::make_unique<host::Host>(*config, host::attach_store(*config));
        if (refused.empty())
            for (const auto& problem : host->plugin_errors())
                refused.push_back(problem);
        return host;
    };
    // Before the matches, not after hours of them.
    try {
        if (const auto why = make_host()->refused_at_start()) {
            std::fprintf(stderr, "arbiter soak: %s\n", why->c_str());
            return kExitInput;
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter soak: cannot start the host: %s\n", error.what());
        return kExitInput;
    }
    const auto started = std::chrono::steady_clock::now();
    auto seconds_since = [](auto then) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - then).count();
    };
    auto match_started = started;
    auto listener = [&](const tools::SoakMatch& match, const tools::EvaluationReport& report,
                        size_t done, size_t of) {
        if (!command->quiet)
            std::fprintf(stderr,
                         "match %zu/%zu: seed %llu, %.0f s, %u players: %llu at Monitor or "
                         "above, %llu at FlagForReview or above (%.1f s)\n",
                         done, of, static_cast<unsigned long long>(match.seed), match.duration_s,
                         match.total(),
                         static_cast<unsigned long long>(
                             report.all_honest.at_least(host::Action::monitor)),
                         static_cast<unsigned long long>(
                             report.all_honest.at_least(host::Action::flag_for_review)),
                         seconds_since(match_started));
        match_started = std::chrono::steady_clock::now();
    };

    tools::EvaluationReport report;
    try {
        report = tools::soak(command->options, *rhythm, make_host, listener);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter soak: %s\n", error.what());
        return kExitInput;
    }
    for (const auto& problem : refused)
        std::fprintf(stderr, "%s\n", problem.c_str());
    for (const auto& problem : report.problems)
        std::fprintf(stderr, "%s\n", problem.c_str());
    if (command->json) {
        std::cout << tools::report_json(report) << '\n';
    } else {
        tools::print_report(std::cout, report);
    }
    std::cout.flush();
    std::fprintf(stderr, "%s",
                 format("soaked %llu honest players in %llu matches (%llu events) in %.0f s\n",
                        static_cast<unsigned long long>(report.all_honest.players),
                        static_cast<unsigned long long>(report.files),
                        static_cast<unsigned long long>(report.events), seconds_since(started))
                     .c_str());
    if (!refused.empty()) {
        std::fprintf(stderr,
                     "arbiter soak: a plugin was refused at load; its checks are in no "
                     "assessment above\n");
        return kExitPartial;
    }
    if (report.unreadable_files || report.damaged || report.refused || report.unlabelled ||
        report.missing)
        return kExitPartial;
    return kExitOk;
}

}  // namespace arbiter::cli
