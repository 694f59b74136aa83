// The messages of `arbiter serve` that carry JSON or text from a relay or an operator:
// the hello, the sync, the error and welcome replies, and the control line. They live
// here, apart from the sockets, so that every one of them can be tested and fuzzed
// without opening a socket, and so that the event loop never parses anything itself.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace arbiter::host::serve_protocol {

// A hello or a sync is a small JSON object; anything larger is refused unread.
inline constexpr size_t kMaxHelloBytes = 64 * 1024;
inline constexpr size_t kMaxSyncBytes = 64 * 1024;
// A control command is one line.
inline constexpr size_t kMaxControlLine = 4096;

struct Hello {
    bool accepted = false;
    std::string relay;    // the relay's name, when it gave one
    std::string problem;  // why it was refused, fit to send back
    // Why it was refused, for the server's log alone: a right token under the wrong name
    // names the relay whose token it is, which the peer is not told. "" = the problem.
    std::string log_cause;
};

// Who may say hello: the shared token, and relays with tokens of their own
// ([serve.relays.NAME]). A relay named here must give its own token; the shared one does
// not stand in for it.
struct Credentials {
    std::string shared;                          // "" = none
    std::map<std::string, std::string> relays;  // name -> its token
};

// Reads a hello frame's payload: {"token": "...", "relay": "..."}. Where the transport
// needs a token (TCP, or a Unix socket with unix_requires_token) the relay must name
// itself (at most 64 bytes of UTF-8) and give its own token, or the shared one when it has
// none of its own. Where it needs none, the name alone is taken.
Hello read_hello(std::span<const uint8_t> payload, const Credentials& credentials, bool token_required);
// The shared token alone ("" when the transport needs none), as before relays had their own.
Hello read_hello(std::span<const uint8_t> payload, std::string_view required_token);

// Compares in time independent of where the first difference lies.
bool same_token(std::string_view given, std::string_view expected);

std::string welcome_json(std::string_view server_id, uint64_t max_message_bytes);
std::string error_json(std::string_view problem, uint64_t offset, bool closing);

// The reply to a sync: the relay's object echoed back with how much of what it sent
// before the sync has been processed. A payload that is not a small JSON object is
// answered with the counts and an "error" saying why it was not echoed.
struct SyncCounts {
    uint64_t batches = 0;
    uint64_t events = 0;
    uint64_t refused = 0;
};
std::string sync_reply(std::span<const uint8_t> payload, const SyncCounts& counts);

enum class ControlVerb { status, plugins, assessments, reload_config, reload_plugin, unknown };
struct ControlRequest {
    ControlVerb verb = ControlVerb::unknown;
    std::string argument;  // the plugin, for reload_plugin
    std::string problem;   // for unknown: what was wrong, fit to send back
};
ControlRequest parse_control_line(std::string_view line);

// The metrics listener speaks just enough HTTP/1.x for a Prometheus scrape: one GET (or
// HEAD) of /metrics per connection, answered and closed. A request head larger than this
// is refused unread.
inline constexpr size_t kMaxHttpRequestHead = 8192;

struct HttpRequest {
    bool ok = false;      // GET or HEAD of /metrics
    bool head = false;    // HEAD: the headers without the body
    int status = 0;       // otherwise the refusal: 400, 404, 405 or 505
    std::string problem;  // and why, fit to send back
};

// Reads a request head (the request line and headers, through the blank line that ends
// them). A query string after the path is ignored, as Prometheus sends none.
HttpRequest parse_http_request(std::string_view head);

// A whole HTTP/1.1 response that closes the connection.
std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool head_only = false);

}  // namespace arbiter::host::serve_protocol
