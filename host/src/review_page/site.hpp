// The review page's logic, apart from the HTTP transport (http_server.hpp): a request in,
// a response out, so that tests and the fuzz harness drive it without a socket.
//
// Pages: /login (a reviewer's name and the page's token), / (the queue), /player?subject=
// (a dossier with the evidence drawn: positions on a plot, intervals as histograms, and
// the verdict buttons), POST /verdict, POST /logout, /style.css. Nothing is loaded from
// outside the binary, and the Content-Security-Policy forbids it: no script at all, a
// style sheet served here, plots as inline SVG.
//
// A session is a random cookie (HttpOnly, SameSite=Strict) the server maps to the
// reviewer's name; every POST but the login carries the session's own form token too,
// so that another site cannot post a verdict through a reviewer's browser.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arbiter/host/config.hpp"
#include "store/store.hpp"
#include "review_page/login_throttle.hpp"

namespace arbiter::host::review_page {

struct Fields;

struct Request {
    std::string method;  // "GET", "POST", ...
    std::string target;  // "/player?subject=..."
    std::string cookie;  // the Cookie header
    std::string content_type;
    std::string body;
    std::string peer;  // for the log
};

struct Response {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // beyond the security ones
};

class ReviewSite {
  public:
    // `token` is what a reviewer gives to log in (at least 16 bytes); throws
    // std::invalid_argument when shorter, std::runtime_error when the store cannot open.
    ReviewSite(const StoreSettings& store, std::string token);
    ~ReviewSite();

    Response handle(const Request& request);

    // Sessions live this long from their login; at most kMaxSessions at once (the oldest
    // goes first).
    static constexpr std::chrono::hours kSessionLife{12};
    static constexpr size_t kMaxSessions = 256;
    // Failed logins an address may make within kFailedLoginWindow, and all addresses
    // together (login_throttle.hpp); past either, logins are refused until the window passes.
    static constexpr int kMaxFailedLogins = 10;
    static constexpr int kMaxFailedLoginsOverall = 60;
    static constexpr std::chrono::seconds kFailedLoginWindow{60};

  private:
    struct Session {
        std::string reviewer;
        std::string form_token;
        std::chrono::steady_clock::time_point expires;
    };
    Response login_page(const std::string& problem, int status = 200);
    Response log_in(const Request& request);
    Response log_out(const Request& request, const Session& session, const std::string& id);
    Response queue_page(const Session& session, const std::string& query);
    Response dossier_page(const Session& session, const std::string& query);
    Response record_verdict(const Request& request, const Session& session);
    // The session the request's cookie names, or nullptr; `id` receives its key.
    const Session* session_of(const Request& request, std::string& id);
    // The player a query or form names: `p` (subject_digest: what links and forms carry,
    // resolved through the subjects shown lately or the queue), `id` (hex of the
    // subject's bytes) or `subject` (text, for a URL typed by hand).
    struct Named {
        std::optional<std::string> subject;
        int status = 0;  // when there is none: 400 or 404, and why
        std::string problem;
    };
    Named subject_named(const Fields& fields);
    // Keeps `subject` findable by its digest; the oldest go past a count or a size.
    void remember(const std::string& subject);
    static constexpr size_t kMaxRememberedSubjects = 4096;
    static constexpr size_t kMaxRememberedBytes = 16 << 20;

    std::unique_ptr<ReviewStore> store_;
    std::string token_;
    std::map<std::string, Session> sessions_;
    std::unordered_map<std::string, std::string> subjects_;  // by subject_digest
    std::deque<std::string> subjects_in_order_;             // their digests, oldest first
    size_t subject_bytes_ = 0;
    LoginThrottle failed_logins_{{kMaxFailedLogins, kMaxFailedLoginsOverall, kFailedLoginWindow,
                                  /*addresses=*/1024}};
};

}  // namespace arbiter::host::review_page
