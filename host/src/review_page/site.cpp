#include "review_page/site.hpp"

#include <sodium.h>

#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/untrusted_text.hpp"
#include "review_page/form.hpp"
#include "review_page/render.hpp"

namespace arbiter::host::review_page {

namespace {

constexpr int64_t kQueueWindowDays = 7;
constexpr size_t kQueueLimit = 200;
// ReviewStore::record_verdict's bound on a note.
constexpr size_t kMaxNoteBytes = 64 * 1024;
// The latest assessments a queue line's action is taken from.
constexpr size_t kQueueActionMatches = 20;

std::string random_hex(size_t bytes) {
    std::vector<unsigned char> raw(bytes);
    randombytes_buf(raw.data(), raw.size());
    std::string hex(bytes * 2 + 1, '\0');
    sodium_bin2hex(hex.data(), hex.size(), raw.data(), raw.size());
    hex.resize(bytes * 2);
    return hex;
}

bool same_secret(const std::string& given, const std::string& expected) {
    // Their hashes compared in constant time: neither where they differ nor the expected
    // length shows in the time taken.
    unsigned char a[crypto_generichash_BYTES], b[crypto_generichash_BYTES];
    crypto_generichash(a, sizeof a, reinterpret_cast<const unsigned char*>(given.data()),
                       given.size(), nullptr, 0);
    crypto_generichash(b, sizeof b, reinterpret_cast<const unsigned char*>(expected.data()),
                       expected.size(), nullptr, 0);
    return sodium_memcmp(a, b, sizeof a) == 0;
}

// The address of "address:port" (a peer as the transport names it).
std::string address_of(const std::string& peer) {
    const size_t colon = peer.rfind(':');
    return colon == std::string::npos ? peer : peer.substr(0, colon);
}

Response html(int status, std::string body) {
    Response response;
    response.status = status;
    response.body = std::move(body);
    return response;
}

Response redirect(const std::string& location) {
    Response response;
    response.status = 303;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "see " + location + "\n";
    response.headers.emplace_back("Location", location);
    return response;
}

Response problem(int status, const std::string& what) {
    Response response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = what + "\n";
    return response;
}

constexpr const char* kCookie = "arbiter_review";
// 500 flags of 64 KiB of evidence and 200 assessments, written out, with room.
constexpr size_t kMaxDossierBytes = 256 * 1024 * 1024;

}  // namespace

ReviewSite::ReviewSite(const StoreSettings& store, std::string token) : token_(std::move(token)) {
    if (token_.size() < 16)
        throw std::invalid_argument("the review page's token must be at least 16 bytes");
    if (sodium_init() < 0) throw std::runtime_error("libsodium cannot start");
    store_ = std::make_unique<ReviewStore>(store);
}

ReviewSite::~ReviewSite() = default;

void ReviewSite::remember(const std::string& subject) {
    auto digest = subject_digest(subject);
    if (subjects_.count(digest)) return;
    subject_bytes_ += subject.size();
    subjects_.emplace(digest, subject);
    subjects_in_order_.push_back(std::move(digest));
    while (subjects_.size() > kMaxRememberedSubjects || subject_bytes_ > kMaxRememberedBytes) {
        const auto oldest = subjects_.find(subjects_in_order_.front());
        subject_bytes_ -= oldest->second.size();
        subjects_.erase(oldest);
        subjects_in_order_.pop_front();
    }
}

ReviewSite::Named ReviewSite::subject_named(const Fields& fields) {
    if (fields.values.count("p")) {
        const std::string& digest = fields.get("p");
        if (const auto found = subjects_.find(digest); found != subjects_.end())
            return {found->second, 0, ""};
        // Not shown since this process started (or long ago): the queue holds every player
        // a link from it can name. Looked for there, not through the table, which a queue
        // of long names could overflow before the one wanted is found.
        for (const auto& entry : store_->queue(kQueueLimit, kQueueWindowDays * 86400))
            if (subject_digest(entry.subject) == digest) {
                remember(entry.subject);
                return {entry.subject, 0, ""};
            }
        return {std::nullopt, 404,
                "no player in the queue or shown lately has that link: open them from the queue"};
    }
    if (fields.values.count("id")) {
        auto subject = from_hex(fields.get("id"));
        if (!subject) return {std::nullopt, 400, "id: the player's name in hex expected"};
        return {std::move(subject), 0, ""};
    }
    if (fields.values.count("subject")) return {fields.get("subject"), 0, ""};
    return {std::nullopt, 400, "name the player: p, id or subject"};
}

const ReviewSite::Session* ReviewSite::session_of(const Request& request, std::string& id) {
    const auto cookie = cookie_value(request.cookie, kCookie);
    if (!cookie) return nullptr;
    const auto found = sessions_.find(*cookie);
    if (found == sessions_.end()) return nullptr;
    if (found->second.expires < std::chrono::steady_clock::now()) {
        sessions_.erase(found);
        return nullptr;
    }
    id = found->first;
    return &found->second;
}

Response ReviewSite::handle(const Request& request) {
    const Target target = split_target(request.target);
    try {
        if (target.path == "/style.css" && request.method == "GET") {
            Response response;
            response.content_type = "text/css; charset=utf-8";
            response.body = std::string(kStyleSheet);
            return response;
        }
        if (target.path == "/login") {
            if (request.method == "GET") return login_page("");
            if (request.method == "POST") return log_in(request);
            return problem(405, "GET or POST");
        }
        std::string id;
        const Session* session = session_of(request, id);
        if (!session) {
            if (request.method == "GET" && (target.path == "/" || target.path == "/player"))
                return redirect("/login");
            if (target.path == "/" || target.path == "/player" || target.path == "/verdict" ||
                target.path == "/logout")
                return problem(401, "log in first: /login");
            return problem(404, "no such page");
        }
        if (target.path == "/" && request.method == "GET")
            return queue_page(*session, target.query);
        if (target.path == "/player" && request.method == "GET")
            return dossier_page(*session, target.query);
        if (target.path == "/verdict" && request.method == "POST")
            return record_verdict(request, *session);
        if (target.path == "/logout" && request.method == "POST")
            return log_out(request, *session, id);
        return problem(404, "no such page");
    } catch (const std::exception& error) {
        // A store that failed (locked, down): the reviewer is told, the server goes on.
        spdlog::warn("review page: {} {}: {}", request.method, escape_for_message(target.path, 80),
                     error.what());
        return html(503, page("Unavailable", "", "",
                              "<h1>The store cannot answer</h1><p class=\"problem\">" +
                                  html_escape(error.what()) + "</p>"));
    }
}

Response ReviewSite::login_page(const std::string& why, int status) {
    return html(status, page("Log in", "", "", login_body(why)));
}

Response ReviewSite::log_in(const Request& request) {
    const auto now = std::chrono::steady_clock::now();
    // Past kMaxFailedLogins from an address, or kMaxFailedLoginsOverall from all of them,
    // within kFailedLoginWindow, logins are refused until the window passes: guessing runs
    // at a few tries a minute however many addresses it comes from, and the log gets a
    // count, not a line per try. (So a flood of guesses holds every reviewer off, for a
    // minute at most; sessions already open are not touched.)
    switch (failed_logins_.check(address_of(request.peer), now)) {
        case LoginThrottle::Decision::address_held:
            return login_page("Too many failed logins from this address: wait a minute.", 429);
        case LoginThrottle::Decision::all_held:
            return login_page("Too many failed logins to this page: wait a minute.", 429);
        case LoginThrottle::Decision::allowed:
            break;
    }
    const Fields fields = parse_urlencoded(request.body);
    if (!fields.ok()) return login_page("The form could not be read: " + fields.problem, 400);
    const std::string& reviewer = fields.get("reviewer");
    if (reviewer.empty() || reviewer.size() > 200)
        return login_page("Give your name (1 to 200 bytes).", 400);
    if (!same_secret(fields.get("token"), token_)) {
        const std::string line = failed_logins_.record_failure(address_of(request.peer), now);
        if (!line.empty()) spdlog::warn("review page: {}", line);
        return login_page("That token is not the page's.", 403);
    }
    std::erase_if(sessions_, [&](const auto& item) { return item.second.expires < now; });
    while (sessions_.size() >= kMaxSessions) {
        auto oldest = sessions_.begin();
        for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
            if (it->second.expires < oldest->second.expires) oldest = it;
        sessions_.erase(oldest);
    }
    const std::string id = random_hex(32);
    sessions_[id] = Session{reviewer, random_hex(32), now + kSessionLife};
    spdlog::info("review page: {} logged in from {}", escape_for_message(reviewer, 40),
                 request.peer);
    Response response = redirect("/");
    response.headers.emplace_back(
        "Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}", kCookie,
                                  id, std::chrono::seconds(kSessionLife).count()));
    return response;
}

Response ReviewSite::log_out(const Request& request, const Session& session,
                             const std::string& id) {
    const Fields fields = parse_urlencoded(request.body);
    if (!fields.ok() || !same_secret(fields.get("form_token"), session.form_token))
        return problem(403, "the form's token is not this session's");
    sessions_.erase(id);
    Response response = redirect("/login");
    response.headers.emplace_back(
        "Set-Cookie", fmt::format("{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0", kCookie));
    return response;
}

Response ReviewSite::queue_page(const Session& session, const std::string& query) {
    const Fields fields = parse_urlencoded(query);
    if (!fields.ok()) return problem(400, "the query could not be read: " + fields.problem);
    std::vector<QueueRow> rows;
    for (auto& entry : store_->queue(kQueueLimit, kQueueWindowDays * 86400)) {
        remember(entry.subject);
        // Each player's action, from their latest assessments (the queue's own query does
        // not carry it): a dossier without flags, bounded like any other.
        std::string action;
        if (const auto dossier = store_->dossier(entry.subject, kQueueActionMatches, 0)) {
            const UntrustedJson parsed = parse_untrusted_json(dossier->json, kMaxDossierBytes);
            if (parsed.ok()) action = strongest_action(parsed.value);
        }
        rows.push_back({std::move(entry), std::move(action)});
    }
    order_by_action(rows);
    return html(200, page("Queue", session.reviewer, session.form_token,
                          queue_body(rows, kQueueWindowDays)));
}

Response ReviewSite::dossier_page(const Session& session, const std::string& query) {
    const Fields fields = parse_urlencoded(query);
    if (!fields.ok()) return problem(400, "the query could not be read: " + fields.problem);
    const Named named = subject_named(fields);
    if (!named.subject) return problem(named.status, named.problem);
    const std::string& subject = *named.subject;
    const auto dossier = store_->dossier(subject);
    if (!dossier)
        return html(404, page("Unknown player", session.reviewer, session.form_token,
                              "<h1>No such player</h1><p>The store holds nothing on " +
                                  html_name(subject) + ".</p>"));
    // Bounded like any JSON from outside: the rows in it came from a shared store.
    const UntrustedJson parsed = parse_untrusted_json(dossier->json, kMaxDossierBytes);
    if (!parsed.ok()) return problem(500, "the dossier could not be read: " + parsed.problem);
    std::string message;
    if (fields.get("recorded") == "1") message = "Verdict recorded.";
    remember(subject);
    return html(200, page(showable_name(subject, 80), session.reviewer, session.form_token,
                          dossier_body(parsed.value, session.form_token, message)));
}

Response ReviewSite::record_verdict(const Request& request, const Session& session) {
    if (request.content_type.find("application/x-www-form-urlencoded") == std::string::npos)
        return problem(415, "a form (application/x-www-form-urlencoded) expected");
    const Fields fields = parse_urlencoded(request.body);
    if (!fields.ok()) return problem(400, "the form could not be read: " + fields.problem);
    if (!same_secret(fields.get("form_token"), session.form_token))
        return problem(403, "the form's token is not this session's");
    const Named named = subject_named(fields);
    if (!named.subject) return problem(named.status, named.problem);
    const std::string& subject = *named.subject;
    const std::string& verdict = fields.get("verdict");
    if (verdict_words(verdict).empty())
        return problem(400, "verdict: confirmed, false_positive or inconclusive expected");
    // The store's own bounds on a note, checked before asking rather than after.
    if (fields.get("note").size() > kMaxNoteBytes || !is_valid_utf8(fields.get("note")))
        return problem(400, "a note is at most 64 KiB of UTF-8");
    if (fields.get("confirm") != "yes") {
        // The first post only asks: one click (or a stray one) records nothing.
        if (!store_->dossier(subject, 1, 1)) return problem(404, "the store has no such player");
        remember(subject);
        return html(200, page("Record this verdict?", session.reviewer, session.form_token,
                              verdict_confirmation_body(subject, verdict, fields.get("note"),
                                                        session.form_token)));
    }
    try {
        store_->record_verdict(subject, fields.get("verdict"), session.reviewer,
                               fields.get("note"));
    } catch (const std::invalid_argument& error) {
        return problem(400, error.what());
    } catch (const UnknownPlayer& error) {
        return problem(404, error.what());
    }
    spdlog::info("review page: {} recorded {} on '{}'", escape_for_message(session.reviewer, 40),
                 escape_for_message(fields.get("verdict"), 20), escape_for_message(subject, 80));
    remember(subject);
    return redirect("/player?" + player_query(subject) + "&recorded=1");
}

}  // namespace arbiter::host::review_page
