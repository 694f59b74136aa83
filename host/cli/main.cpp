// `arbiter`: the command line. Each command lives in its own file; this one only picks.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <arbiter/arbiter_plugin.h>

#include "arbiter/host/suggest.hpp"

#include "commands.hpp"

namespace {

// One command: its synopsis and what it does, for `arbiter --help` and `arbiter CMD --help`.
struct Usage {
    const char* name;
    const char* text;
};

constexpr Usage kUsages[] = {
    {"replay",
     "arbiter replay CONFIG EVENTS... [--json] [--quiet] [--log-level LEVEL]\n"
     "    Runs recorded matches (.arbev files) through the configured plugins and\n"
     "    prints one assessment per player (a table, or JSON Lines with --json).\n"},
    {"plugins",
     "arbiter plugins CONFIG\n"
     "    Loads each configured plugin and shows its name, versions and capabilities.\n"},
    {"check-plugin",
     "arbiter check-plugin LIB [--config CONFIG] [--events FILE]\n"
     "    Checks a plugin library before it is dropped in: exports, versions,\n"
     "    capabilities, creation with its config, a run of the sample match, unloading.\n"},
    {"simulate",
     "arbiter simulate OUT.arbev --players PROFILE=COUNT,... [--seed N] [--duration-s S]\n"
     "        [--tick-rate HZ] [--truth FILE] [--batch-events N] [--relay ID] [--match ID]\n"
     "        [--human-traces FILE|builtin] [--quiet]\n"
     "    Writes a synthetic match (honest players and cheaters of any profile) and the\n"
     "    truth of every player beside it; same seed, same bytes. --list-profiles.\n"},
    {"import",
     "arbiter import IN.csv|IN.jsonl OUT.arbev [--format csv|jsonl] [--on-error stop|skip]\n"
     "        [--tick-rate HZ] [--labels OUT.truth.json] [--relay ID] [--batch-events N]\n"
     "        [--quiet]\n"
     "       arbiter import IN.osr|FOLDER... OUT.arbev [--labels OUT.truth.json]\n"
     "        [--replay-labels LABELS.csv] [--on-error stop|skip] [--relay ID] [--match ID]\n"
     "    Turns input traces (source, game, player, t_seconds, action_kind, ...) into an\n"
     "    event file, one match per (source, game); a bad row is reported by its line.\n"
     "    osu! replays become one match of a player per replay (docs/games/osu.md).\n"},
    {"evaluate",
     "arbiter evaluate CONFIG MATCH.arbev... [--truth FILE]... [--players] [--json] [--quiet]\n"
     "        [--log-level LEVEL]\n"
     "    Runs labelled matches through the configured plugins and prints, per profile,\n"
     "    the actions reached, the recall at FlagForReview and the false-positive rate.\n"},
    {"soak",
     "arbiter soak CONFIG [--players N] [--match-players N] [--durations-s S,S,...] [--seed N]\n"
     "        [--mix PROFILE=WEIGHT,...] [--work-dir DIR] [--human-traces FILE|builtin]\n"
     "        [--json] [--quiet] [--log-level LEVEL]\n"
     "    The false-positive soak: simulated honest players (10,000 by default), a match\n"
     "    at a time over several seeds and lengths, through the configured plugins; prints\n"
     "    how many reached Monitor and FlagForReview, per profile and per check.\n"},
    {"baseline",
     "arbiter baseline CONFIG CORPUS.arbev... [--quiet] [--log-level LEVEL]\n"
     "    Runs a corpus of recorded matches through every configured plugin that computes\n"
     "    population baselines, and writes each one to its [plugins.NAME] baseline file.\n"},
    {"serve",
     "arbiter serve CONFIG [--unix PATH] [--tcp ADDRESS:PORT] [--control PATH] [--ready-file "
     "PATH]\n"
     "        [--metrics ADDRESS:PORT] [--log-level LEVEL]\n"
     "    Serves relays live over a Unix socket and TCP ([serve] in the config): batches in,\n"
     "    assessments back; reloads plugins and the config when their files change.\n"
     "    SIGTERM drains what was received, flushes the sinks and exits. --metrics serves\n"
     "    GET /metrics (Prometheus' text format).\n"},
    {"ctl",
     "arbiter ctl SOCKET|CONFIG status|plugins|assessments|reload [PLUGIN] [--json]\n"
     "    Asks a running server over its control socket.\n"},
    {"review",
     "arbiter review CONFIG queue [--limit N] [--window-days D] [--json]\n"
     "       arbiter review CONFIG dossier PLAYER [--json]\n"
     "       arbiter review CONFIG verdict PLAYER VERDICT --reviewer NAME [--note TEXT]\n"
     "       arbiter review CONFIG export OUT.truth.json\n"
     "    The store's review queue (most urgent first, with cross-server notes), a player's\n"
     "    dossier with every flag's evidence, verdicts (confirmed, false_positive,\n"
     "    inconclusive) and their export as labels for `arbiter evaluate`.\n"},
    {"send",
     "arbiter send EVENTS.arbev... SOCKET|ADDRESS:PORT [--relay NAME] [--token-file FILE]\n"
     "        [--json] [--quiet]\n"
     "    Streams recorded matches to a running server as a relay would and prints the\n"
     "    assessments it hears back (over TCP the token comes from --token-file or\n"
     "    ARBITER_TOKEN).\n"},
    {"luanti-bridge",
     "arbiter luanti-bridge WORLD SOCKET|ADDRESS:PORT [--relay NAME] [--token-file FILE]\n"
     "        [--once] [--json] [--quiet]\n"
     "    Follows a Luanti world's arbiter mod live and streams it to a running server;\n"
     "    restarted, it goes on where it stopped. Tells staff in the game of a player\n"
     "    flagged for review (docs/games/luanti.md).\n"},
    {"ddnet-bridge",
     "arbiter ddnet-bridge TEEHISTORIAN_DIR|FILE SOCKET|ADDRESS:PORT [--relay NAME]\n"
     "        [--token-file FILE] [--state FILE] [--once] [--json] [--quiet]\n"
     "    Follows a DDNet server's teehistorian (sv_tee_historian 1) live, the newest file\n"
     "    and the next one the server begins, and streams it to a running server;\n"
     "    restarted, it goes on where it stopped (docs/games/ddnet.md).\n"},
};

constexpr const char* kProgressNote =
    "Long work (replay, simulate, import, evaluate, baseline, send) shows a progress line on\n"
    "stderr when it is a terminal; --quiet leaves it out.\n";

constexpr const char* kExitStatus =
    "Exit status: 0 success; 1 usage error; 2 the config or an input cannot be read (or used);\n"
    "3 done, but some input was damaged or refused, or a plugin was refused (listed by\n"
    "`plugins`, or left out under [host] partial_start = true).\n";

void print_version(std::FILE* out) {
    std::fprintf(out, "arbiter %s (plugin ABI %d.%d, event schema %d.%d)\n", ARBITER_VERSION,
                 ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR, ARB_SCHEMA_VERSION_MAJOR,
                 ARB_SCHEMA_VERSION_MINOR);
}

void print_usage(std::FILE* out) {
    std::fprintf(
        out,
        "arbiter: server-side anti-cheat analyzer host (ABI %d.%d, event schema %d.%d)\n\nusage:\n",
        ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR, ARB_SCHEMA_VERSION_MAJOR,
        ARB_SCHEMA_VERSION_MINOR);
    for (const Usage& usage : kUsages)
        std::fprintf(out, "  %s", usage.text);
    std::fprintf(out,
                 "  arbiter help | --help | -h, arbiter COMMAND --help, arbiter --version\n\n%s%s",
                 kProgressNote, kExitStatus);
}

const Usage* find_usage(const std::string& command) {
    for (const Usage& usage : kUsages)
        if (command == usage.name) return &usage;
    return nullptr;
}

bool asks_for_help(const std::vector<std::string>& args) {
    for (const auto& arg : args)
        if (arg == "--help" || arg == "-h") return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(stderr);
        return 1;
    }
    std::string command = args.front();
    args.erase(args.begin());
    if (command == "help" || command == "--help" || command == "-h") {
        print_usage(stdout);
        return 0;
    }
    if (command == "--version" || command == "version") {
        print_version(stdout);
        return 0;
    }
    // `arbiter CMD --help` (or -h anywhere after it): that command's usage, before the
    // command reads its arguments, where --help would be a file name or a missing value.
    if (const Usage* usage = find_usage(command); usage && asks_for_help(args)) {
        std::fprintf(stdout, "usage: %s\n%s", usage->text, kExitStatus);
        return 0;
    }
    if (command == "replay") return arbiter::cli::run_replay(args);
    if (command == "plugins") return arbiter::cli::run_plugins(args);
    if (command == "simulate") return arbiter::cli::run_simulate(args);
    if (command == "import") return arbiter::cli::run_import(args);
    if (command == "evaluate") return arbiter::cli::run_evaluate(args);
    if (command == "soak") return arbiter::cli::run_soak(args);
    if (command == "baseline") return arbiter::cli::run_baseline(args);
    if (command == "serve") return arbiter::cli::run_serve(args);
    if (command == "ctl") return arbiter::cli::run_ctl(args);
    if (command == "send") return arbiter::cli::run_send(args);
    if (command == "review") return arbiter::cli::run_review(args);
    if (command == "luanti-bridge") return arbiter::cli::run_luanti_bridge(args);
    if (command == "ddnet-bridge") return arbiter::cli::run_ddnet_bridge(args);
    if (command == "check-plugin") return arbiter::cli::run_check_plugin(args);
    std::vector<std::string> commands = {"help"};
    for (const Usage& usage : kUsages) commands.emplace_back(usage.name);
    std::fprintf(stderr, "arbiter: unknown command '%s'%s\n\n", command.c_str(),
                 arbiter::host::did_you_mean(command, commands).c_str());
    print_usage(stderr);
    return 1;
}
