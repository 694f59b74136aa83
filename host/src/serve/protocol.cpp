#include <arbiter/arbiter_plugin.h>
#include <fmt/format.h>

#include "serve/serve_protocol.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::serve_protocol {

using json = nlohmann::json;

namespace {

// A relay with a token of its own that sends it under another name (a recorded file's
// relay id, say) is not guessing: the operator needs to hear that the name is wrong, not
// the token. Every token is compared, whichever matches, so the time taken says nothing.
std::string wrong_token_cause(std::string_view given, std::string_view name,
                              const Credentials& credentials) {
    const std::string* owner = nullptr;
    for (const auto& [relay, token] : credentials.relays)
        if (same_token(given, token) && !owner) owner = &relay;
    const bool shared = same_token(given, credentials.shared);
    const std::string shown = escape_for_message(name, 64);
    if (owner)
        return fmt::format(
            "the hello names relay '{}' but carries the token of relay '{}': the token is right, "
            "the name is not (a relay's own token admits that relay alone)",
            shown, escape_for_message(*owner, 64));
    if (shared)
        return fmt::format(
            "the hello names relay '{}' and carries the shared token, but relay '{}' has a "
            "token of its own ([serve.relays.{}]), which the shared one does not stand in for",
            shown, shown, shown);
    return fmt::format("wrong token for relay '{}'", shown);
}

}  // namespace

Hello read_hello(std::span<const uint8_t> payload, std::string_view required_token) {
    return read_hello(payload, Credentials{std::string(required_token), {}}, !required_token.empty());
}

Hello read_hello(std::span<const uint8_t> payload, const Credentials& credentials, bool token_required) {
    Hello hello;
    UntrustedJson parsed = parse_untrusted_json(payload, kMaxHelloBytes);
    if (!parsed.ok() || !parsed.value.is_object()) {
        hello.problem = parsed.ok() ? std::string("the hello is not a JSON object")
                                    : "the hello is not a JSON object: " + parsed.problem;
        return hello;
    }
    const StringMember token = string_member(parsed.value, "token");
    const StringMember relay = string_member(parsed.value, "relay");
    for (const auto* member : {&token, &relay}) {
        if (!member->problem.empty()) {
            hello.problem = "the hello is malformed: " + member->problem;
            return hello;
        }
    }
    const std::string name = relay.text.value_or("");
    if (name.size() > 64 || !is_valid_utf8(name)) {
        hello.problem = "the relay's name is at most 64 bytes of UTF-8";
        return hello;
    }
    if (token_required) {
        // The name is what every batch of the connection is held to: it must be given.
        if (name.empty()) {
            hello.problem = "the hello names no relay (\"relay\": \"NAME\")";
            return hello;
        }
        if (!token.text || token.text->empty()) {
            hello.problem = "the hello carries no token";
            return hello;
        }
        const auto own = credentials.relays.find(name);
        const std::string_view expected = own != credentials.relays.end() ? std::string_view(own->second)
                                                                         : std::string_view(credentials.shared);
        if (expected.empty()) {
            hello.problem = fmt::format("no relay '{}' is configured ([serve.relays.NAME]) and there is no "
                                        "shared token",
                                        escape_for_message(name, 64));
            return hello;
        }
        if (!same_token(*token.text, expected)) {
            hello.problem = fmt::format("wrong token for relay '{}'", escape_for_message(name, 64));
            hello.log_cause = wrong_token_cause(*token.text, name, credentials);
            return hello;
        }
    }
    hello.relay = name;
    hello.accepted = true;
    return hello;
}

bool same_token(std::string_view given, std::string_view expected) {
    unsigned char difference = given.size() == expected.size() ? 0 : 1;
    for (size_t i = 0; i < given.size(); ++i)
        difference |= static_cast<unsigned char>(
            given[i] ^ expected[i % std::max<size_t>(1, expected.size())]);
    return difference == 0 && !expected.empty();
}

std::string welcome_json(std::string_view server_id, uint64_t max_message_bytes) {
    return dump_json(
        {{"server_id", server_id},
         {"protocol", 1},
         {"abi", fmt::format("{}.{}", ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR)},
         {"schema", fmt::format("{}.{}", ARB_SCHEMA_VERSION_MAJOR, ARB_SCHEMA_VERSION_MINOR)},
         {"max_message_bytes", max_message_bytes}});
}

std::string error_json(std::string_view problem, uint64_t offset, bool closing) {
    return dump_json({{"error", problem}, {"offset", offset}, {"closing", closing}});
}

std::string sync_reply(std::span<const uint8_t> payload, const SyncCounts& counts) {
    UntrustedJson parsed = parse_untrusted_json(payload, kMaxSyncBytes);
    json answer = json::object();
    if (parsed.ok() && parsed.value.is_object())
        answer = std::move(parsed.value);
    else if (!payload.empty())
        answer["error"] = parsed.ok() ? std::string("the sync is not a JSON object; not echoed")
                                      : parsed.problem + "; not echoed";
    answer["batches"] = counts.batches;
    answer["events"] = counts.events;
    answer["refused"] = counts.refused;
    return dump_json(answer);
}

ControlRequest parse_control_line(std::string_view line) {
    ControlRequest request;
    const size_t space = line.find(' ');
    const std::string_view verb = line.substr(0, space);
    const std::string_view argument =
        space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (verb == "status" && argument.empty()) {
        request.verb = ControlVerb::status;
    } else if (verb == "plugins" && argument.empty()) {
        request.verb = ControlVerb::plugins;
    } else if (verb == "assessments" && argument.empty()) {
        request.verb = ControlVerb::assessments;
    } else if (verb == "reload" && argument.empty()) {
        request.verb = ControlVerb::reload_config;
    } else if (verb == "reload" && is_valid_utf8(argument)) {
        request.verb = ControlVerb::reload_plugin;
        request.argument = std::string(argument);
    } else {
        request.problem = fmt::format(
            "unknown command '{}': expected status, plugins, assessments, reload or reload PLUGIN",
            escape_for_message(line, 200));
    }
    return request;
}

HttpRequest parse_http_request(std::string_view head) {
    HttpRequest request;
    const size_t line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    auto refuse = [&](int status, std::string problem) {
        request.status = status;
        request.problem = std::move(problem);
        return request;
    };
    // "METHOD SP TARGET SP HTTP/1.x": exactly two spaces.
    const size_t first = line.find(' ');
    const size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
    if (line_end == std::string_view::npos || second == std::string_view::npos ||
        line.find(' ', second + 1) != std::string_view::npos)
        return refuse(400, "not an HTTP request line: '" + escape_for_message(line, 120) + "'");
    const std::string_view method = line.substr(0, first);
    const std::string_view target = line.substr(first + 1, second - first - 1);
    const std::string_view version = line.substr(second + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0")
        return refuse(505, "only HTTP/1.0 and 1.1 are spoken here");
    if (method != "GET" && method != "HEAD")
        return refuse(405, "only GET and HEAD of /metrics are served here");
    const std::string_view path = target.substr(0, target.find('?'));
    if (path != "/metrics")
        return refuse(404, "nothing at '" + escape_for_message(path, 120) + "': try /metrics");
    request.ok = true;
    request.head = method == "HEAD";
    return request;
}

std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool head_only) {
    const char* reason = status == 200   ? "OK"
                         : status == 400 ? "Bad Request"
                         : status == 404 ? "Not Found"
                         : status == 405 ? "Method Not Allowed"
                         : status == 408 ? "Request Timeout"
                         : status == 431 ? "Request Header Fields Too Large"
                         : status == 503 ? "Service Unavailable"
                         : status == 505 ? "HTTP Version Not Supported"
                                         : "Error";
    std::string response = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
        status, reason, content_type, body.size(), status == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (!head_only) response.append(body);
    return response;
}

}  // namespace arbiter::host::serve_protocol
