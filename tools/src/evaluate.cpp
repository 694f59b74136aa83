#include "arbiter/tools/evaluate.hpp"

#include <functional>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/profiles.hpp"
#include "core/replay_file.hpp"

namespace arbiter::tools {

namespace {

// At most this many problems are listed per file; the rest are counted.
constexpr uint64_t kProblemsShownPerFile = 20;

std::string format(const char* pattern, auto... values) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, values...);
    return text;
}

std::string percent(double share) {
    return format("%.1f%%", share * 100.0);
}

void read_file(const std::filesystem::path& path, host::Host& host, EvaluationReport& report,
               const std::function<void(uint64_t)>& at) {
    ++report.files;
    const std::string name = path.string();
    uint64_t problems = 0;
    const host::FileTally read = host::replay_file(
        path, host,
        [&](const host::FileProblem& problem) {
            using Kind = host::FileProblem::Kind;
            if (problem.kind == Kind::unreadable) {
                report.problems.push_back(problem.text);
                return;
            }
            if (++problems > kProblemsShownPerFile) return;
            report.problems.push_back(
                problem.kind == Kind::damaged
                    ? format("%s: offset %llu: %s", name.c_str(),
                             static_cast<unsigned long long>(problem.offset), problem.text.c_str())
                    : format("%s: offset %llu: batch refused: %s", name.c_str(),
                             static_cast<unsigned long long>(problem.offset), problem.text.c_str()));
        },
        at);
    report.unreadable_files += read.unreadable ? 1 : 0;
    report.damaged += read.damaged;
    report.refused += read.refused;
    if (problems > kProblemsShownPerFile)
        report.problems.push_back(
            format("%s: %llu more problem(s) not shown", name.c_str(),
                   static_cast<unsigned long long>(problems - kProblemsShownPerFile)));
}

void add(ProfileResult& result, host::Action action) {
    ++result.players;
    ++result.actions[static_cast<size_t>(action)];
}

void add(ProfileResult& sum, const ProfileResult& more) {
    sum.players += more.players;
    for (size_t i = 0; i < sum.actions.size(); ++i)
        sum.actions[i] += more.actions[i];
}

// Honest first, then the simulator's order, then any other label alphabetically.
std::vector<ProfileResult> in_profile_order(std::map<std::string, ProfileResult> by_profile) {
    std::vector<ProfileResult> ordered;
    for (const ProfileInfo& info : profiles()) {
        auto it = by_profile.find(info.name);
        if (it == by_profile.end()) continue;
        ordered.push_back(std::move(it->second));
        by_profile.erase(it);
    }
    for (auto& [name, result] : by_profile)
        ordered.push_back(std::move(result));
    return ordered;
}

nlohmann::ordered_json result_json(const ProfileResult& r) {
    nlohmann::ordered_json j;
    j["profile"] = r.profile;
    j["cheater"] = r.cheater;
    j["players"] = r.players;
    nlohmann::ordered_json actions;
    for (auto action : {host::Action::clear, host::Action::monitor, host::Action::flag_for_review,
                        host::Action::shadow_restrict})
        actions[host::to_string(action)] = r.actions[static_cast<size_t>(action)];
    j["actions"] = std::move(actions);
    if (r.cheater) {
        j["recall_at_flag"] = r.share_at_least(host::Action::flag_for_review);
    } else {
        j["false_positive_rate_at_flag"] = r.share_at_least(host::Action::flag_for_review);
        j["false_positive_rate_at_monitor"] = r.share_at_least(host::Action::monitor);
    }
    return j;
}

}  // namespace

uint64_t ProfileResult::at_least(host::Action action) const {
    uint64_t n = 0;
    for (size_t i = static_cast<size_t>(action); i < actions.size(); ++i)
        n += actions[i];
    return n;
}

double ProfileResult::share_at_least(host::Action action) const {
    return players == 0 ? 0.0
                        : static_cast<double>(at_least(action)) / static_cast<double>(players);
}

Truth load_truths(const std::vector<std::filesystem::path>& match_files,
                  const std::vector<std::filesystem::path>& truth_files) {
    std::vector<std::filesystem::path> files = truth_files;
    if (files.empty())
        for (const auto& match : match_files)
            files.push_back(default_truth_path(match));
    Truth all;
    std::map<std::pair<std::string, uint64_t>, std::string> labelled_in;
    for (const auto& file : files) {
        Truth truth = read_truth(file);
        for (TruthMatch& match : truth.matches) {
            auto [it, added] =
                labelled_in.emplace(std::pair{match.relay_id, match.match_id}, file.string());
            if (!added)
                throw TruthError(file.string() + ": match " + match.relay_id + "/" +
                                 std::to_string(match.match_id) + " is labelled in " + it->second +
                                 " too (simulate with --match ID, or import with "
                                 "--relay ID, to keep matches apart)");
            all.matches.push_back(std::move(match));
        }
    }
    return all;
}

EvaluationReport evaluate(host::Host& host, const std::vector<std::filesystem::path>& match_files,
                          const Truth& truth, host::Progress* progress) {
    EvaluationReport report;
    {
        host::NoProgress silent;
        host::FileSetProgress files(progress ? *progress : silent, "evaluate", match_files);
        for (size_t i = 0; i < match_files.size(); ++i)
            read_file(match_files[i], host, report, [&](uint64_t offset) { files.at(i, offset); });
    }
    host.close();
    report.batches = host.counters().batches;
    report.events = host.counters().events;

    struct Label {
        const TruthPlayer* player;
        bool seen = false;
    };
    std::map<host::PlayerKey, Label> labels;
    for (const TruthMatch& match : truth.matches)
        for (const TruthPlayer& player : match.players)
            labels.emplace(host::PlayerKey{match.relay_id, match.match_id, player.player},
                           Label{&player});

    std::map<host::PlayerKey, PlayerResult> players;
    std::map<std::string, ProfileResult> by_profile;
    auto count = [&](const TruthPlayer& player, host::Action action) {
        auto [it, added] =
            by_profile.emplace(player.profile, ProfileResult{player.profile, player.cheater});
        add(it->second, action);
        add(player.cheater ? report.all_cheaters : report.all_honest, action);
    };
    for (const host::Assessment& assessment : host.assessments()) {
        auto it = labels.find(assessment.player);
        if (it == labels.end()) {
            ++report.unlabelled;
            continue;
        }
        it->second.seen = true;
        count(*it->second.player, assessment.action);
        PlayerResult& result = players[assessment.player];
        result = {assessment.player,
                  it->second.player->account,
                  it->second.player->profile,
                  it->second.player->cheater,
                  true,
                  assessment.action,
                  assessment.combined_score,
                  {}};
        for (size_t i = 0; i < assessment.checks.size() && i < 3; ++i) {
            const host::SignalRecord& s = assessment.checks[i];
            result.top_checks.push_back(format("%s:%s %.2f%s", s.plugin.c_str(), s.code.c_str(),
                                               s.weighted(), s.tripwire ? " (trip-wire)" : ""));
        }
        if (!it->second.player->cheater && assessment.action >= host::Action::monitor)
            for (const host::SignalRecord& check : assessment.checks) {
                CheckCount& n = report.honest_by_check[check.plugin + " " + check.code];
                ++n.monitor_or_above;
                if (assessment.action >= host::Action::flag_for_review) ++n.flag_or_above;
            }
    }
    for (const auto& [key, label] : labels) {
        if (label.seen) continue;
        ++report.missing;
        count(*label.player, host::Action::clear);
        players[key] = {key,
                        label.player->account,
                        label.player->profile,
                        label.player->cheater,
                        false,
                        host::Action::clear,
                        0.0,
                        {}};
    }
    for (auto& [key, result] : players)
        report.players.push_back(std::move(result));

    report.profiles = in_profile_order(std::move(by_profile));
    return report;
}

void merge(EvaluationReport& into, const EvaluationReport& from) {
    std::map<std::string, ProfileResult> by_profile;
    for (ProfileResult& r : into.profiles)
        by_profile.emplace(r.profile, std::move(r));
    for (const ProfileResult& r : from.profiles) {
        auto [it, added] = by_profile.emplace(r.profile, ProfileResult{r.profile, r.cheater});
        add(it->second, r);
    }
    into.profiles = in_profile_order(std::move(by_profile));
    add(into.all_cheaters, from.all_cheaters);
    add(into.all_honest, from.all_honest);
    for (const auto& [check, n] : from.honest_by_check) {
        CheckCount& sum = into.honest_by_check[check];
        sum.monitor_or_above += n.monitor_or_above;
        sum.flag_or_above += n.flag_or_above;
    }
    into.files += from.files;
    into.unreadable_files += from.unreadable_files;
    into.batches += from.batches;
    into.events += from.events;
    into.damaged += from.damaged;
    into.refused += from.refused;
    into.unlabelled += from.unlabelled;
    into.missing += from.missing;
    into.problems.insert(into.problems.end(), from.problems.begin(), from.problems.end());
    into.players.insert(into.players.end(), from.players.begin(), from.players.end());
}

void print_report(std::ostream& out, const EvaluationReport& report) {
    // Profiles come from a truth file (labels an import took from a recording's rows) and
    // checks are plugins' codes: shown as untrusted names, escaped, marked and cut.
    auto shown = [](const std::string& name) { return host::showable_name(name, 32); };
    size_t width = 12;
    for (const auto& r : report.profiles)
        width = std::max(width, shown(r.profile).size());
    const int w = static_cast<int>(width);
    out << format("%-*s %8s %7s %8s %8s %9s %12s %9s %12s\n", w, "profile", "players", "clear",
                  "monitor", "flag", "restrict", "recall@flag", "fp@flag", "fp@monitor+");
    auto row = [&](const ProfileResult& r) {
        const std::string recall =
            r.cheater ? percent(r.share_at_least(host::Action::flag_for_review)) : "-";
        const std::string fp_flag =
            r.cheater ? "-" : percent(r.share_at_least(host::Action::flag_for_review));
        const std::string fp_monitor =
            r.cheater ? "-" : percent(r.share_at_least(host::Action::monitor));
        out << format("%-*s %8llu %7llu %8llu %8llu %9llu %12s %9s %12s\n", w,
                      shown(r.profile).c_str(),
                      static_cast<unsigned long long>(r.players),
                      static_cast<unsigned long long>(r.actions[0]),
                      static_cast<unsigned long long>(r.actions[1]),
                      static_cast<unsigned long long>(r.actions[2]),
                      static_cast<unsigned long long>(r.actions[3]), recall.c_str(),
                      fp_flag.c_str(), fp_monitor.c_str());
    };
    for (const auto& r : report.profiles)
        row(r);
    if (report.all_cheaters.players) row(report.all_cheaters);
    if (report.all_honest.players) row(report.all_honest);
    if (report.honest_by_check.empty()) return;
    size_t check_width = 5;
    for (const auto& [check, n] : report.honest_by_check)
        check_width = std::max(check_width, shown(check).size());
    const int cw = static_cast<int>(check_width);
    out << "\nhonest players at Monitor or above, by the checks in their assessment:\n";
    out << format("%-*s %9s %12s %9s %12s\n", cw, "check", "monitor+", "of honest", "flag+",
                  "of honest");
    const auto honest = static_cast<double>(std::max<uint64_t>(1, report.all_honest.players));
    for (const auto& [check, n] : report.honest_by_check)
        out << format("%-*s %9llu %12s %9llu %12s\n", cw, shown(check).c_str(),
                      static_cast<unsigned long long>(n.monitor_or_above),
                      format("%.3f%%", 100.0 * static_cast<double>(n.monitor_or_above) / honest)
                          .c_str(),
                      static_cast<unsigned long long>(n.flag_or_above),
                      format("%.3f%%", 100.0 * static_cast<double>(n.flag_or_above) / honest)
                          .c_str());
}

void print_players(std::ostream& out, const EvaluationReport& report) {
    // Accounts and labels come from a truth file, checks from plugins: untrusted names.
    auto shown = [](const std::string& name, size_t chars) {
        return host::showable_name(name, chars);
    };
    size_t account_width = 7, profile_width = 5;
    for (const PlayerResult& p : report.players) {
        account_width = std::max(account_width, shown(p.account, 64).size());
        profile_width = std::max(profile_width, shown(p.profile, 32).size());
    }
    const int aw = static_cast<int>(account_width), pw = static_cast<int>(profile_width);
    out << format("%-12s %6s %6s  %-*s %-*s %-6s %-14s %5s  %s\n", "relay", "match", "player", aw,
                  "account", pw, "label", "truth", "action", "score", "top signals");
    for (const PlayerResult& p : report.players) {
        std::string top;
        for (const std::string& check : p.top_checks)
            top += (top.empty() ? "" : ", ") + host::showable_name(check, 80);
        if (!p.seen) top = "(never assessed)";
        // The fixed columns fit format()'s buffer; the checks, of any length, follow.
        out << format("%-12s %6llu %6u  %-*s %-*s %-6s %-14s %5.2f  ",
                      shown(p.player.relay_id, 12).c_str(),
                      static_cast<unsigned long long>(p.player.match_id), p.player.player, aw,
                      shown(p.account, 64).c_str(), pw, shown(p.profile, 32).c_str(),
                      p.cheater ? "cheat" : "honest", host::to_string(p.action), p.score)
            << (top.empty() ? "-" : top) << '\n';
    }
}

std::string report_json(const EvaluationReport& report, bool players) {
    nlohmann::ordered_json root;
    nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
    for (const auto& r : report.profiles)
        profiles.push_back(result_json(r));
    root["profiles"] = std::move(profiles);
    root["all_cheaters"] = result_json(report.all_cheaters);
    root["all_honest"] = result_json(report.all_honest);
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& [check, n] : report.honest_by_check)
        checks.push_back({{"check", check},
                          {"monitor_or_above", n.monitor_or_above},
                          {"flag_or_above", n.flag_or_above}});
    root["honest_by_check"] = std::move(checks);
    nlohmann::ordered_json input;
    input["files"] = report.files;
    input["unreadable_files"] = report.unreadable_files;
    input["batches"] = report.batches;
    input["events"] = report.events;
    input["damaged"] = report.damaged;
    input["refused"] = report.refused;
    input["unlabelled_players"] = report.unlabelled;
    input["missing_players"] = report.missing;
    if (players) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const PlayerResult& p : report.players)
            list.push_back({{"relay_id", p.player.relay_id},
                            {"match_id", p.player.match_id},
                            {"player", p.player.player},
                            {"account", p.account},
                            {"profile", p.profile},
                            {"cheater", p.cheater},
                            {"assessed", p.seen},
                            {"action", host::to_string(p.action)},
                            {"combined_score", p.score},
                            {"top_checks", p.top_checks}});
        root["players"] = std::move(list);
    }
    input["problems"] = report.problems;
    root["input"] = std::move(input);
    return root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace arbiter::tools
