#include "arbiter/host/sinks.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

nlohmann::json evidence_object(const std::string& text) {
    // The host checked every evidence string when it took the signal.
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    return parsed.is_discarded() ? nlohmann::json::object() : parsed;
}

std::string player_label(const PlayerKey& player) {
    return fmt::format("{}/{}/{}", player.relay_id, player.match_id, player.player);
}

}  // namespace

bool is_security_event(const SignalRecord& signal, double report_threshold) {
    return signal.weighted() >= report_threshold || (signal.tripwire && signal.tripwires_allowed);
}

int severity_of(const SignalRecord& signal, double review_threshold) {
    double weighted = signal.weighted();
    if ((signal.tripwire && signal.tripwires_allowed) || weighted >= 0.9) return 4;
    if (weighted >= review_threshold) return 3;
    if (weighted >= 0.5) return 2;
    return 1;
}

SecurityEventLog::SecurityEventLog(const std::string& path, std::string server_id,
                                   double report_threshold, double review_threshold)
    : path_(path),
      server_id_(std::move(server_id)),
      threshold_(report_threshold),
      review_threshold_(review_threshold) {
    out_.open(path, std::ios::app);
    if (!out_)
        throw std::runtime_error(path +
                                 ": cannot open the security-event log: " + std::strerror(errno));
}

void SecurityEventLog::on_signal(const SignalRecord& signal) {
    if (!is_security_event(signal, threshold_)) return;
    std::lock_guard lock(mutex_);
    nlohmann::json record = {
        {"event_id", next_id_++},
        {"player_id", player_label(signal.player)},
        {"relay_id", signal.player.relay_id},
        {"match_id", signal.player.match_id},
        {"player", signal.player.player},
        {"server_id", server_id_},
        {"event_type", signal.code},
        {"plugin", signal.plugin},
        {"model_class", to_string(signal.model_class)},
        {"severity", severity_of(signal, review_threshold_)},
        {"score", signal.score},
        {"confidence", signal.confidence},
        {"weighted_score", signal.weighted()},
        {"tripwire", signal.tripwire},
        {"evidence", evidence_object(signal.evidence_json)},
        {"timestamp_relay_us", signal.reported_at_us},
        {"reviewed", false},
        {"reviewed_by", ""},
        {"verdict", ""},
    };
    // Written through, record by record: a server killed, or cut short by a second
    // SIGTERM, keeps every record it was given. A failed write (a full disk) is logged, and
    // the stream is cleared so that the next record tries again; flush() reports it too.
    out_ << dump_json(record) << '\n';
    out_.flush();
    if (!out_) {
        ++failed_writes_;
        if (failed_writes_ <= 5 || (failed_writes_ & (failed_writes_ - 1)) == 0)
            spdlog::error("{}: cannot write the security-event log ({} record(s) lost so far)", path_,
                          failed_writes_);
        out_.clear();
    }
}

void SecurityEventLog::flush() {
    std::lock_guard lock(mutex_);
    out_.flush();
    if (!out_ || failed_writes_ > 0)
        throw std::runtime_error(path_ + ": cannot write the security-event log (" +
                                 std::to_string(failed_writes_) + " record(s) lost)");
}

std::string assessment_json(const Assessment& assessment) {
    nlohmann::json classes = nlohmann::json::object();
    for (const auto& [model_class, score] : assessment.class_scores)
        classes[to_string(model_class)] = score;
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& signal : assessment.checks) {
        checks.push_back({
            {"plugin", signal.plugin},
            {"code", signal.code},
            {"model_class", to_string(signal.model_class)},
            {"score", signal.score},
            {"confidence", signal.confidence},
            {"weight", signal.weight},
            {"weighted_score", signal.weighted()},
            {"tripwire", signal.tripwire},
            {"reported_at_relay_us", signal.reported_at_us},
            {"evidence", evidence_object(signal.evidence_json)},
        });
    }
    nlohmann::json lost = nlohmann::json::array();
    for (const auto& stretch : assessment.lost_input)
        lost.push_back(
            {{"from_sequence", stretch.from_sequence},
             {"to_sequence", stretch.to_sequence},
             {"after_relay_us", stretch.after_relay_us ? nlohmann::json(*stretch.after_relay_us)
                                                       : nlohmann::json(nullptr)},
             {"before_relay_us", stretch.before_relay_us},
             {"through_end", stretch.through_end},
             {"cause", stretch.cause}});
    nlohmann::json object = {
        {"relay_id", assessment.player.relay_id},
        {"match_id", assessment.player.match_id},
        {"player", assessment.player.player},
        {"account_id", assessment.account_id},
        {"action", to_string(assessment.action)},
        {"combined_score", assessment.combined_score},
        {"class_scores", classes},
        {"tripwire", assessment.tripwire},
        {"reasons", assessment.reasons},
        {"signals", checks},
        {"lost_input", lost},
    };
    return dump_json(object);
}

void print_assessment_table(std::ostream& out, const std::vector<Assessment>& assessments) {
    out << fmt::format("{:<12} {:>6} {:>6}  {:<12} {:<14} {:>5}  {}\n", "relay", "match", "player",
                       "account", "action", "score", "top signals");
    for (const auto& a : assessments) {
        std::string top;
        for (size_t i = 0; i < a.checks.size() && i < 3; ++i) {
            const auto& s = a.checks[i];
            top += fmt::format("{}{}:{} {:.2f}{}", i ? ", " : "", showable_name(s.plugin),
                               showable_name(s.code), s.weighted(),
                               s.tripwire ? " (trip-wire)" : "");
        }
        if (a.checks.size() > 3) top += fmt::format(", +{} more", a.checks.size() - 3);
        if (!a.lost_input.empty()) {
            uint64_t batches = 0;
            for (const auto& stretch : a.lost_input)
                batches += stretch.batches();
            // A stretch through the match's end has no known length: "at least".
            const bool open_ended = a.lost_input.back().through_end;
            const std::string count =
                batches == 0 ? std::string()
                             : fmt::format(" ({}{} batch{})", open_ended ? "at least " : "",
                                           batches, batches == 1 ? "" : "es");
            top += fmt::format("{}[input lost: {}{}{}]", top.empty() ? "" : "  ",
                               a.lost_input.front().describe(), count,
                               a.lost_input.size() > 1
                                   ? fmt::format(" in {} stretches", a.lost_input.size())
                                   : "");
        }
        // Relays name themselves and their players: shown as untrusted names, so that no
        // byte of theirs acts on the terminal and look-alikes are marked.
        out << fmt::format("{:<12} {:>6} {:>6}  {:<12} {:<14} {:>5.2f}  {}\n",
                           showable_name(a.player.relay_id, 24), a.player.match_id,
                           a.player.player,
                           a.account_id.empty() ? "-" : showable_name(a.account_id, 24),
                           to_string(a.action),
                           a.combined_score, top.empty() ? "-" : top);
    }
}

}  // namespace arbiter::host
