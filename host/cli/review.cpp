// `arbiter review CONFIG queue|dossier|verdict|export`: the reviewer's side of the store
// ([store] in the config, docs/review.md). Text from relays and plugins (accounts,
// evidence) is shown as untrusted_text.hpp's showable_name shows it: a name with a
// terminal escape in it cannot act on the reviewer's terminal, and look-alikes are marked.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "store/store.hpp"

namespace arbiter::cli {

namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "usage: arbiter review CONFIG queue [--limit N] [--window-days D] [--json]\n"
    "       arbiter review CONFIG dossier PLAYER [--json]\n"
    "       arbiter review CONFIG verdict PLAYER confirmed|false_positive|inconclusive\n"
    "               --reviewer NAME [--note TEXT]\n"
    "       arbiter review CONFIG export OUT.truth.json\n"
    "PLAYER is an account (account:NAME when NAME begins with player: or account:), or\n"
    "player:relay/match/player for a player without one.\n";

std::string when(int64_t unix_seconds) {
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &tm);
    return text;
}

std::string shown(const std::string& text, size_t max = host::kShownNameChars) {
    return host::showable_name(text, max);
}

int print_queue(host::ReviewStore& store, size_t limit, int64_t window_days, bool as_json) {
    const auto entries = store.queue(limit, window_days * 86400);
    if (as_json) {
        for (const auto& e : entries)
            std::cout << host::dump_json({{"player", e.subject},
                                          {"max_severity", e.max_severity},
                                          {"events", e.events},
                                          {"servers", e.servers},
                                          {"matches", e.matches},
                                          {"last_unix", e.last_unix},
                                          {"top_event_types", e.top_event_types},
                                          {"correlation", e.correlation},
                                          {"trust", e.trust}})
                      << "\n";
        return kExitOk;
    }
    if (entries.empty()) {
        std::cout << "the queue is empty: no unreviewed flag in the last " << window_days
                  << " days\n";
        return kExitOk;
    }
    std::cout << fmt::format("{:<4} {:<24} {:>3} {:>6} {:>7} {:>7} {:>6}  {:<20}  {}\n", "#",
                             "player", "sev", "flags", "servers", "matches", "trust", "last",
                             "strongest");
    size_t rank = 0;
    for (const auto& e : entries) {
        std::cout << fmt::format("{:<4} {:<24} {:>3} {:>6} {:>7} {:>7} {:>6.0f}  {:<20}  {}\n",
                                 ++rank, shown(e.subject, 24), e.max_severity, e.events, e.servers,
                                 e.matches, e.trust, when(e.last_unix),
                                 shown(e.top_event_types, 120));
        for (const auto& note : e.correlation) std::cout << "       - " << shown(note, 400) << "\n";
    }
    return kExitOk;
}

int print_dossier(host::ReviewStore& store, const std::string& subject, bool as_json) {
    const auto dossier = store.dossier(subject);
    if (!dossier) {
        std::fprintf(stderr, "arbiter review: the store holds no player '%s'\n",
                     shown(subject, 120).c_str());
        return kExitInput;
    }
    if (as_json) {
        std::cout << dossier->json << "\n";
        return kExitOk;
    }
    const host::UntrustedJson parsed = host::parse_untrusted_json(dossier->json, 256u << 20);
    if (!parsed.ok()) {
        std::fprintf(stderr, "arbiter review: the dossier could not be read: %s\n",
                     parsed.problem.c_str());
        return kExitInput;
    }
    const json& d = parsed.value;
    std::cout << "player " << shown(subject, 120) << "\n";
    std::cout << fmt::format("trust {:.0f} of 12000 (account age {:.1f} days, {} match(es), "
                             "{} anti-cheat point(s){})\n",
                             d["trust"].value("score", 0.0),
                             d["trust"].value("account_age_days", 0.0),
                             d["trust"].value("rated_games_played", 0.0),
                             d["trust"].value("anti_cheat_points", 0.0),
                             d["trust"].value("latest_verdict", "").empty()
                                 ? std::string()
                                 : ", last verdict " + d["trust"].value("latest_verdict", ""));
    std::string servers;
    for (const auto& server : d["servers"]) servers += (servers.empty() ? "" : ", ") + shown(server.get<std::string>());
    std::cout << "servers: " << servers << "\n";
    for (const auto& note : d["correlation"])
        std::cout << "  - " << shown(note.get<std::string>(), 200) << "\n";
    std::cout << "\nmatches:\n";
    for (const auto& m : d["matches"])
        std::cout << fmt::format("  {} {}/{} player {}: {} {:.2f}{}\n",
                                 shown(m.value("server_id", "")), shown(m.value("relay_id", "")),
                                 m.value("match_id", 0), m.value("player", 0),
                                 shown(m.value("action", "")), m.value("combined_score", 0.0),
                                 m.value("final", false) ? "" : " (match not ended)");
    std::cout << "\nflags:\n";
    if (d.value("events_total", int64_t{0}) > static_cast<int64_t>(d["events"].size()))
        std::cout << fmt::format("  (the latest {} of {}; the older ones are in the store)\n",
                                 d["events"].size(), d.value("events_total", int64_t{0}));
    for (const auto& e : d["events"])
        std::cout << fmt::format(
            "  #{} {} {}/{}: {}:{} severity {} score {:.2f}{}{}\n    evidence {}\n",
            e.value("event_id", 0), shown(e.value("server_id", "")), shown(e.value("relay_id", "")),
            e.value("match_id", 0), shown(e.value("plugin", "")), shown(e.value("event_type", "")),
            e.value("severity", 0), e.value("weighted_score", 0.0),
            e.contains("since_join_s")
                ? fmt::format(", {:.0f} s after joining", e.value("since_join_s", 0.0))
                : std::string(),
            e.value("reviewed", false) ? " [" + shown(e.value("verdict", "")) + " by " +
                                             shown(e.value("reviewed_by", "")) + "]"
                                       : std::string(),
            shown(host::dump_json(e["evidence"]), 400));
    if (!d["verdicts"].empty()) std::cout << "\nverdicts:\n";
    for (const auto& v : d["verdicts"])
        std::cout << fmt::format(
            "  {} {} by {}{}\n", when(v.value("recorded_unix", int64_t{0})),
            shown(v.value("verdict", "")), shown(v.value("reviewer", "")),
            v.value("note", "").empty() ? "" : ": " + shown(v.value("note", ""), 400));
    return kExitOk;
}

}  // namespace

int run_review(const std::vector<std::string>& args) {
    bool as_json = false;
    size_t limit = 50;
    int64_t window_days = 7;
    std::string reviewer, note;
    OptionReader options("review", kUsage);
    options.flag("--json", as_json);
    options.whole("--limit", limit, 1, 100'000);
    options.whole("--window-days", window_days, 1, 100'000);
    options.text("--reviewer", reviewer);
    options.text("--note", note);
    if (!options.read(args)) return kExitUsage;
    const std::vector<std::string>& words = options.positional();
    if (words.size() < 2) {
        std::fprintf(stderr, "%s", kUsage);
        return kExitUsage;
    }
    const std::string& action = words[1];
    const size_t wanted = action == "queue" ? 2 : action == "verdict" ? 4 : 3;
    if ((action != "queue" && action != "dossier" && action != "verdict" && action != "export") ||
        words.size() != wanted) {
        std::fprintf(stderr, "%s", kUsage);
        return kExitUsage;
    }
    // Checked here, before the store is opened: the store's own check ("a reviewer's name is
    // 1 to 200 bytes") cannot tell the operator which option was missing.
    if (action == "verdict" && reviewer.empty()) {
        std::fprintf(stderr,
                     "arbiter review: a verdict needs --reviewer NAME (who decided; it is "
                     "recorded with the verdict)\n%s",
                     kUsage);
        return kExitUsage;
    }
    if (!setup_logging("warn")) return kExitUsage;
    auto config = load_config_or_report(words[0]);
    if (!config) return kExitInput;
    if (!config->store.enabled()) {
        std::fprintf(stderr, "arbiter review: %s has no store: set [store] path (docs/review.md)\n",
                     words[0].c_str());
        return kExitInput;
    }
    try {
        host::ReviewStore store(config->store);
        if (action == "queue") return print_queue(store, limit, window_days, as_json);
        if (action == "dossier") return print_dossier(store, words[2], as_json);
        if (action == "verdict") {
            const int64_t id = store.record_verdict(words[2], words[3], reviewer, note);
            std::cout << fmt::format("verdict {} recorded: {} is {} (by {})\n", id,
                                     shown(words[2], 120), words[3], shown(reviewer));
            return kExitOk;
        }
        const std::string truth = store.export_truth();
        std::ofstream out(words[2], std::ios::binary | std::ios::trunc);
        out << truth;
        out.close();
        if (!out) {
            std::fprintf(stderr, "arbiter review: cannot write %s\n", words[2].c_str());
            return kExitInput;
        }
        const json written = json::parse(truth);
        std::cout << fmt::format("wrote {} match(es) of reviewed players to {}\n",
                                 written["matches"].size(), words[2]);
        return kExitOk;
    } catch (const std::invalid_argument& error) {
        std::fprintf(stderr, "arbiter review: %s\n", error.what());
        return kExitUsage;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter review: %s\n", error.what());
        return kExitInput;
    }
}

}  // namespace arbiter::cli
