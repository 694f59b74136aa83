// The reading half of the store: the review queue with tier 6's cross-server notes, a
// player's dossier, verdicts, and their export as labels for `arbiter evaluate`.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"

namespace arbiter::host {

using store::unix_now;

using nlohmann::json;
using store::DatabaseError;

namespace {

// An assessment holds every check's evidence (64 KiB each at most); past this a row is
// not one the host wrote.
constexpr size_t kMaxStoredJsonBytes = 16 * 1024 * 1024;

// The store wrote this JSON itself, but another process sharing the store may have
// written anything: a row too deep, too large or damaged reads as an empty object (a
// nesting of 100,000 brackets would otherwise overflow the stack when copied).
json stored_json(const std::string& text) {
    UntrustedJson parsed = parse_untrusted_json(text, kMaxStoredJsonBytes);
    return parsed.ok() ? std::move(parsed.value) : json::object();
}

constexpr int64_t kFirstHourUs = 3600LL * 1'000'000;

}  // namespace

ReviewStore::ReviewStore(const StoreSettings& settings) {
    try {
        db_ = store::open_and_migrate(settings);
    } catch (const DatabaseError& error) {
        throw std::runtime_error(fmt::format("{}: the store: {}", settings.where(), error.what()));
    }
}

ReviewStore::~ReviewStore() = default;

namespace {

struct SubjectFacts {
    std::vector<std::string> correlation;
    double trust = 0;
    json trust_json;
};

// Tier 6 (seed 001) and the trust score of one player, from everything the store holds.
SubjectFacts facts_of(store::Database& db, const std::string& subject, int64_t window_s) {
    SubjectFacts facts;
    const int64_t since = unix_now() - window_s;
    // Where the player was flagged (unreviewed) and where they played.
    std::set<std::string> flagged_servers, played_servers, flagged_matches;
    uint64_t early = 0, timed = 0;
    auto events = db.prepare(
        "SELECT server_id, relay_time_us, joined_relay_time_us, relay_id, match_id FROM "
        "security_events WHERE subject = ? AND reviewed = 0 AND recorded_unix >= ?");
    events->bind(1, subject).bind(2, since);
    while (events->step()) {
        flagged_servers.insert(events->text(0));
        flagged_matches.insert(events->text(0) + "/" + events->text(3) + "/" +
                               std::to_string(events->integer(4)));
        if (!events->is_null(2)) {
            ++timed;
            if (events->integer(1) - events->integer(2) <= kFirstHourUs) ++early;
        }
    }
    auto played = db.prepare("SELECT DISTINCT server_id FROM assessments WHERE subject = ?");
    played->bind(1, subject);
    while (played->step()) played_servers.insert(played->text(0));
    for (const auto& server : flagged_servers) played_servers.insert(server);

    if (flagged_servers.size() >= 2)
        facts.correlation.push_back(fmt::format("flagged on {} servers within {} days",
                                                flagged_servers.size(), window_s / 86400));
    // Within one match that is every short match: the pattern needs several.
    if (flagged_matches.size() >= 2 && timed > 0 && early == timed)
        facts.correlation.push_back(fmt::format(
            "in each of {} matches every flag came within the first hour after joining: a tool "
            "used from the start",
            flagged_matches.size()));
    if (flagged_servers.size() == 1 && played_servers.size() >= 2)
        facts.correlation.push_back(fmt::format(
            "flagged on one server ({}) of the {} it played on: a cause on that server is "
            "possible (lower confidence)",
            *flagged_servers.begin(), played_servers.size()));

    // Trust: age and games from the store's own history of the player.
    TrustFactors factors;
    // Age from the first match the store saw the player in (assessments keep only their
    // last update's time; matches keep their first).
    auto history = db.prepare(
        "SELECT MIN(m.first_seen_unix), COUNT(DISTINCT a.server_id || '/' || a.relay_id || '/' "
        "|| CAST(a.match_id AS TEXT)) FROM assessments a JOIN matches m ON m.server_id = "
        "a.server_id AND m.relay_id = a.relay_id AND m.match_id = a.match_id WHERE a.subject = ?");
    history->bind(1, subject);
    if (history->step() && !history->is_null(0)) {
        factors.account_age_days = static_cast<double>(unix_now() - history->integer(0)) / 86400.0;
        factors.rated_games_played = static_cast<double>(history->integer(1));
    }
    // Anti-cheat points: a confirmed verdict is the maximum (5); each match with an
    // unreviewed flag of severity 3 or more is one.
    auto verdict = db.prepare(
        "SELECT verdict FROM verdicts WHERE subject = ? ORDER BY recorded_unix DESC, verdict_id "
        "DESC LIMIT 1");
    verdict->bind(1, subject);
    const std::string latest = verdict->step() ? verdict->text(0) : "";
    auto serious = db.prepare(
        "SELECT COUNT(DISTINCT server_id || '/' || relay_id || '/' || CAST(match_id AS TEXT)) "
        "FROM security_events WHERE subject = ? AND reviewed = 0 AND severity >= 3");
    serious->bind(1, subject);
    const double open_matches = serious->step() ? static_cast<double>(serious->integer(0)) : 0.0;
    factors.anti_cheat_points = latest == "confirmed" ? 5.0 : open_matches;
    facts.trust = trust_score(factors);
    facts.trust_json = {{"score", facts.trust},
                        {"account_age_days", factors.account_age_days},
                        {"rated_games_played", factors.rated_games_played},
                        {"anti_cheat_points", factors.anti_cheat_points},
                        {"latest_verdict", latest}};
    return facts;
}

}  // namespace

std::vector<ReviewStore::QueueEntry> ReviewStore::queue(size_t limit, int64_t window_s) {
    std::vector<QueueEntry> entries;
    auto rows = db_->prepare(
        "SELECT subject, MAX(severity), COUNT(*), COUNT(DISTINCT server_id), "
        "COUNT(DISTINCT server_id || '/' || relay_id || '/' || CAST(match_id AS TEXT)), "
        "MAX(recorded_unix) FROM security_events WHERE reviewed = 0 AND recorded_unix >= ? "
        "GROUP BY subject");
    rows->bind(1, unix_now() - window_s);
    while (rows->step()) {
        QueueEntry entry;
        entry.subject = rows->text(0);
        entry.max_severity = static_cast<int>(rows->integer(1));
        entry.events = static_cast<uint64_t>(rows->integer(2));
        entry.servers = static_cast<uint64_t>(rows->integer(3));
        entry.matches = static_cast<uint64_t>(rows->integer(4));
        entry.last_unix = rows->integer(5);
        entries.push_back(std::move(entry));
    }
    // Several servers first (tier 6), then severity, then recency; the subject breaks ties
    // so that the order is the same on every reading.
    std::sort(entries.begin(), entries.end(), [](const QueueEntry& a, const QueueEntry& b) {
        const bool a_many = a.servers >= 2, b_many = b.servers >= 2;
        if (a_many != b_many) return a_many;
        if (a.max_severity != b.max_severity) return a.max_severity > b.max_severity;
        if (a.last_unix != b.last_unix) return a.last_unix > b.last_unix;
        return a.subject < b.subject;
    });
    if (entries.size() > limit) entries.resize(limit);
    auto top = db_->prepare(
        "SELECT plugin || ':' || event_type, MAX(weighted_score) AS strongest FROM "
        "security_events WHERE subject = ? AND reviewed = 0 AND recorded_unix >= ? GROUP BY "
        "plugin, event_type ORDER BY strongest DESC, 1 LIMIT 3");
    for (QueueEntry& entry : entries) {
        top->reset();
        top->bind(1, entry.subject).bind(2, unix_now() - window_s);
        while (top->step())
            entry.top_event_types += (entry.top_event_types.empty() ? "" : ", ") + top->text(0);
        SubjectFacts facts = facts_of(*db_, entry.subject, window_s);
        entry.correlation = std::move(facts.correlation);
        entry.trust = facts.trust;
    }
    return entries;
}

std::optional<ReviewStore::Dossier> ReviewStore::dossier(const std::string& typed,
                                                         size_t max_matches, size_t max_events) {
    const std::string subject = canonical_subject(typed);
    json matches = json::array(), events = json::array(), verdicts = json::array();
    std::set<std::string> servers;
    auto count = [&](const char* sql) {
        auto rows = db_->prepare(sql);
        rows->bind(1, subject);
        return rows->step() ? rows->integer(0) : 0;
    };
    const int64_t matches_total = count("SELECT COUNT(*) FROM assessments WHERE subject = ?");
    const int64_t events_total = count("SELECT COUNT(*) FROM security_events WHERE subject = ?");
    for (const char* sql : {"SELECT DISTINCT server_id FROM assessments WHERE subject = ?",
                            "SELECT DISTINCT server_id FROM security_events WHERE subject = ?"}) {
        auto rows = db_->prepare(sql);
        rows->bind(1, subject);
        while (rows->step())
            servers.insert(rows->text(0));
    }
    // The latest ones, oldest first: a player flagged for months stays one page, not all
    // of it at once.
    auto assessed = db_->prepare(fmt::format(
        "SELECT * FROM (SELECT server_id, relay_id, match_id, player, account, action, "
        "combined_score, final, assessment_json, updated_unix FROM assessments WHERE subject = ? "
        "ORDER BY updated_unix DESC, server_id DESC, relay_id DESC, match_id DESC LIMIT {}) AS "
        "latest ORDER BY updated_unix, server_id, relay_id, match_id",
        max_matches));
    assessed->bind(1, subject);
    while (assessed->step()) {
        servers.insert(assessed->text(0));
        matches.push_back({{"server_id", assessed->text(0)},
                           {"relay_id", assessed->text(1)},
                           {"match_id", assessed->integer(2)},
                           {"player", assessed->integer(3)},
                           {"account", assessed->text(4)},
                           {"action", assessed->text(5)},
                           {"combined_score", assessed->real(6)},
                           {"final", assessed->integer(7) != 0},
                           {"assessment", stored_json(assessed->text(8))},
                           {"updated_unix", assessed->integer(9)}});
    }
    auto flagged = db_->prepare(fmt::format(
        "SELECT * FROM (SELECT event_id, server_id, relay_id, match_id, player, plugin, "
        "event_type, model_class, severity, score, confidence, weighted_score, tripwire, "
        "evidence, relay_time_us, joined_relay_time_us, recorded_unix, reviewed, reviewed_by, "
        "verdict FROM security_events WHERE subject = ? ORDER BY recorded_unix DESC, event_id "
        "DESC LIMIT {}) AS latest ORDER BY recorded_unix, event_id",
        max_events));
    flagged->bind(1, subject);
    while (flagged->step()) {
        servers.insert(flagged->text(1));
        json event = {{"event_id", flagged->integer(0)},
                      {"server_id", flagged->text(1)},
                      {"relay_id", flagged->text(2)},
                      {"match_id", flagged->integer(3)},
                      {"player", flagged->integer(4)},
                      {"plugin", flagged->text(5)},
                      {"event_type", flagged->text(6)},
                      {"model_class", flagged->text(7)},
                      {"severity", flagged->integer(8)},
                      {"score", flagged->real(9)},
                      {"confidence", flagged->real(10)},
                      {"weighted_score", flagged->real(11)},
                      {"tripwire", flagged->integer(12) != 0},
                      {"evidence", stored_json(flagged->text(13))},
                      {"relay_time_us", flagged->integer(14)},
                      {"recorded_unix", flagged->integer(16)},
                      {"reviewed", flagged->integer(17) != 0},
                      {"reviewed_by", flagged->text(18)},
                      {"verdict", flagged->text(19)}};
        if (!flagged->is_null(15))
            event["since_join_s"] =
                static_cast<double>(flagged->integer(14) - flagged->integer(15)) / 1e6;
        events.push_back(std::move(event));
    }
    auto judged = db_->prepare(
        "SELECT verdict_id, verdict, reviewer, note, recorded_unix FROM verdicts WHERE subject = ? "
        "ORDER BY recorded_unix, verdict_id");
    judged->bind(1, subject);
    while (judged->step())
        verdicts.push_back({{"verdict_id", judged->integer(0)},
                            {"verdict", judged->text(1)},
                            {"reviewer", judged->text(2)},
                            {"note", judged->text(3)},
                            {"recorded_unix", judged->integer(4)}});
    if (matches.empty() && events.empty() && verdicts.empty()) return std::nullopt;
    SubjectFacts facts = facts_of(*db_, subject, 7 * 24 * 3600);
    json dossier = {{"subject", subject},
                    {"servers", json(std::vector<std::string>(servers.begin(), servers.end()))},
                    {"matches_total", matches_total},
                    {"events_total", events_total},
                    {"trust", facts.trust_json},
                    {"correlation", facts.correlation},
                    {"matches", matches},
                    {"events", events},
                    {"verdicts", verdicts}};
    return Dossier{subject, dump_json(dossier, 2)};
}

int64_t ReviewStore::record_verdict(const std::string& typed, const std::string& verdict,
                                    const std::string& reviewer, const std::string& note) {
    const std::string subject = canonical_subject(typed);
    if (verdict != "confirmed" && verdict != "false_positive" && verdict != "inconclusive")
        throw std::invalid_argument(fmt::format(
            "verdict '{}': expected confirmed, false_positive or inconclusive",
            escape_for_message(verdict, 40)));
    if (reviewer.empty() || reviewer.size() > 200 || !is_valid_utf8(reviewer))
        throw std::invalid_argument("a reviewer's name is 1 to 200 bytes of UTF-8");
    if (note.size() > 64 * 1024 || !is_valid_utf8(note))
        throw std::invalid_argument("a note is at most 64 KiB of UTF-8");
    auto known = db_->prepare(
        "SELECT 1 FROM security_events WHERE subject = ? UNION SELECT 1 FROM assessments WHERE "
        "subject = ? LIMIT 1");
    known->bind(1, subject).bind(2, subject);
    if (!known->step())
        throw UnknownPlayer(fmt::format("the store holds no player '{}'",
                                             escape_for_message(subject, 120)));
    db_->begin();
    try {
        auto insert = db_->prepare(
            "INSERT INTO verdicts (subject, verdict, reviewer, note, recorded_unix) VALUES "
            "(?, ?, ?, ?, ?)");
        insert->bind(1, subject).bind(2, verdict).bind(3, reviewer).bind(4, note).bind(5, unix_now());
        insert->step();
        const int64_t id = db_->last_insert_id();
        auto mark = db_->prepare(
            "UPDATE security_events SET reviewed = 1, reviewed_by = ?, verdict = ? WHERE subject "
            "= ? AND reviewed = 0");
        mark->bind(1, reviewer).bind(2, verdict).bind(3, subject);
        mark->step();
        db_->commit();
        return id;
    } catch (...) {
        db_->rollback();
        throw;
    }
}

std::string ReviewStore::export_truth() {
    // The latest verdict of each player decides.
    std::map<std::string, std::string> latest;
    auto verdicts = db_->prepare(
        "SELECT subject, verdict FROM verdicts ORDER BY recorded_unix, verdict_id");
    while (verdicts->step()) latest[verdicts->text(0)] = verdicts->text(1);
    std::map<std::pair<std::string, int64_t>, json> matches;
    auto played = db_->prepare(
        "SELECT DISTINCT relay_id, match_id, player, account FROM assessments WHERE subject = ? "
        "UNION SELECT DISTINCT relay_id, match_id, player, account FROM security_events WHERE "
        "subject = ? ORDER BY 1, 2, 3");
    for (const auto& [subject, verdict] : latest) {
        if (verdict == "inconclusive") continue;
        played->reset();
        played->bind(1, subject).bind(2, subject);
        while (played->step()) {
            json& match = matches[{played->text(0), played->integer(1)}];
            if (match.is_null())
                match = {{"relay_id", played->text(0)},
                         {"match_id", played->integer(1)},
                         {"players", json::array()}};
            match["players"].push_back({{"player", played->integer(2)},
                                        {"account", played->text(3)},
                                        {"profile", verdict},
                                        {"cheater", verdict == "confirmed"}});
        }
    }
    json out = {{"format", "arbiter-truth"},
                {"version", 1},
                {"generator", {{"command", "review export"}}},
                {"matches", json::array()}};
    for (auto& [key, match] : matches) out["matches"].push_back(std::move(match));
    return dump_json(out, 1) + "\n";
}

}  // namespace arbiter::host
