// `arbiter ctl` and metrics scrapes on the network thread: a request line (or an HTTP
// GET /metrics) goes to the event thread, and its answer comes back to the client.
#include "serve/server_impl.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace arbiter::host {

using json = nlohmann::json;

// Past kMaxControlConnections of one kind: answered at once (503 for a scrape), the
// request read and thrown away, and closed like a turned-away relay.
void Server::Impl::turn_away_control(Connection& connection) {
    connection.turned_away = true;
    const std::string problem =
        fmt::format("the host answers at most {} {} at once; try again later",
                    kMaxControlConnections, connection.http ? "scrapes" : "control commands");
    const std::string text =
        connection.http
            ? serve_protocol::http_response(503, "text/plain; charset=utf-8", problem + "\n")
            : dump_json({{"ok", false}, {"error", problem}}, 2) + "\n";
    connection.out.assign(text.begin(), text.end());
    spdlog::warn("serve: connection {} from {} turned away: {}", connection.id, connection.peer,
                 problem);
    write_to(connection);
}

void Server::Impl::take_control_bytes(Connection& connection, std::span<const uint8_t> bytes) {
    connection.control_line.append(bytes.begin(), bytes.end());
    const auto end = connection.control_line.find('\n');
    if (end == std::string::npos) {
        if (connection.control_line.size() > serve_protocol::kMaxControlLine)
            answer_control_error(connection, "the command line is too long");
        return;
    }
    std::string command = connection.control_line.substr(0, end);
    if (!command.empty() && command.back() == '\r') command.pop_back();
    connection.stop_reading = true;  // one command per connection
    Work work;
    work.kind = Work::Kind::control;
    work.connection = connection.id;
    work.payload.assign(command.begin(), command.end());
    work.text = connections_json();
    requests_in_flight[connection.id] = false;
    queue.push_urgent(std::move(work));
}

// A scrape: the request head is read up to its blank line (a bounded amount), then
// answered: /metrics through the event thread, which owns the host's figures (and hands
// the rendering to a thread of its own); anything else here.
void Server::Impl::take_http_bytes(Connection& connection, std::span<const uint8_t> bytes) {
    connection.control_line.append(bytes.begin(), bytes.end());
    const auto end = connection.control_line.find("\r\n\r\n");
    if (end == std::string::npos) {
        if (connection.control_line.size() > serve_protocol::kMaxHttpRequestHead)
            answer_http(connection, 431, "the request head is larger than 8 KiB\n");
        return;
    }
    connection.stop_reading = true;  // one request per connection
    if (end + 4 > serve_protocol::kMaxHttpRequestHead)
        return answer_http(connection, 431, "the request head is larger than 8 KiB\n");
    const auto request = serve_protocol::parse_http_request(
        std::string_view(connection.control_line).substr(0, end + 2));
    if (!request.ok) return answer_http(connection, request.status, request.problem + "\n");
    Work work;
    work.kind = Work::Kind::metrics;
    work.connection = connection.id;
    const std::string method = request.head ? "HEAD" : "GET";
    work.payload.assign(method.begin(), method.end());
    work.offset = relay_connections();  // all a scrape needs of the connections
    requests_in_flight[connection.id] = true;
    queue.push_urgent(std::move(work));
}

void Server::Impl::answer_http(Connection& connection, int status, const std::string& body) {
    const std::string text =
        serve_protocol::http_response(status, "text/plain; charset=utf-8", body);
    connection.out.insert(connection.out.end(), text.begin(), text.end());
    connection.stop_reading = true;
    connection.close_after_send = true;
    write_to(connection);
}

void Server::Impl::answer_control_error(Connection& connection, const std::string& problem) {
    const std::string text = dump_json({{"ok", false}, {"error", problem}}, 2) + "\n";
    connection.out.insert(connection.out.end(), text.begin(), text.end());
    connection.stop_reading = true;
    connection.close_after_send = true;
    write_to(connection);
}

std::string Server::Impl::connections_json() const {
    json list = json::array();
    for (const auto& [id, connection] : connections) {
        if (connection.control || connection.turned_away) continue;
        list.push_back({{"id", id},
                        {"transport", connection.transport},
                        {"peer", connection.peer},
                        {"relay", connection.relay},
                        {"bytes_in", connection.bytes_in},
                        {"frames", connection.frames},
                        {"problems", connection.problems},
                        {"held_back", connection.held_back},
                        {"reply_bytes_unsent", connection.unsent()},
                        {"connected_s",
                         std::chrono::duration<double>(Clock::now() - connection.since).count()}});
    }
    return dump_json(list);
}

}  // namespace arbiter::host
