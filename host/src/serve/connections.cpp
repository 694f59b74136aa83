// Relays' connections on the network thread: accepting them within the limits, reading
// and verifying their frames, the hello and its token, holding a relay back when the
// event thread falls behind, writing the replies back, and closing what must close.
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

void Server::Impl::accept_all(const Listener& listener) {
    while (true) {
        const int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                spdlog::warn("serve: accept on {} failed: {}", listener.description,
                             std::strerror(errno));
            return;
        }
        const bool control =
            listener.role == Listener::Role::control || listener.role == Listener::Role::metrics;
        const bool token_required =
            listener.role == Listener::Role::tcp_relays || settings.unix_requires_token;
        // Before its hello a connection counts against the small pending cap, not the
        // relays' slots: only an authenticated relay takes one of those. At that cap the
        // oldest one waiting makes room: sockets that connect and say nothing can then
        // only push each other out, never a relay that says hello as soon as it is in.
        const bool over_limit =
            control ? control_connections(listener.role) >= kMaxControlConnections
                    : !token_required && relay_connections() >= settings.max_connections;
        if (!control && token_required) make_room_for_pending();
        if (over_limit && turned_away_connections() >= kMaxTurnedAway) {
            ::close(fd);  // a flood: not even a reason
            continue;
        }
        const uint64_t id = next_id++;
        Connection& connection =
            connections.emplace(id, Connection(static_cast<uint32_t>(max_message_bytes)))
                .first->second;
        connection.id = id;
        connection.fd = fd;
        connection.control = control;
        connection.http = listener.role == Listener::Role::metrics;
        connection.transport = listener.role == Listener::Role::tcp_relays ? "tcp" : "unix";
        connection.peer = serve::peer_name(fd);
        connection.address = serve::peer_address(fd);
        connection.token_required = token_required;
        connection.greeted = !connection.token_required;
        // Until the hello, nothing larger than a hello is buffered for the peer.
        if (token_required)
            connection.decoder.set_max_payload(static_cast<uint32_t>(
                std::min<uint64_t>(max_message_bytes, serve_protocol::kMaxHelloBytes)));
        if (over_limit && control) {
            turn_away_control(connection);
        } else if (over_limit) {
            turn_away(connection);
        } else if (!connection.control) {
            connection.out = wire::stream_header();
            // One that owes a token is logged once its hello is taken (a failed one is
            // counted): a guesser's connections would otherwise be two lines each.
            if (!token_required)
                spdlog::info("serve: connection {} from {} over {}", id, connection.peer,
                             connection.transport);
        }
    }
}

// Relays that have a slot: authenticated, or on a socket that needs no token.
size_t Server::Impl::relay_connections() const {
    size_t count = 0;
    for (const auto& [id, connection] : connections)
        count += !connection.control && !connection.dead && !connection.turned_away &&
                 connection.greeted;
    return count;
}

size_t Server::Impl::pending_connections() const {
    size_t count = 0;
    for (const auto& [id, connection] : connections)
        count += !connection.control && !connection.dead && !connection.turned_away &&
                 !connection.greeted;
    return count;
}

// What the token throttle counted since the last line: at most one a period, and the
// rest at the end.
void Server::Impl::report_token_failures(bool last) {
    const auto now = Clock::now();
    if (!last && now - last_token_report < kTokenReportInterval) return;
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(now - last_token_report).count();
    last_token_report = now;
    const serve::TokenThrottle::Tally tally = throttle->take_tally(now);
    if (tally.empty()) return;
    spdlog::warn(
        "serve: {} hello(s) refused in the last {} s (a wrong or missing token, an unknown "
        "relay, a malformed hello), and {} more refused unchecked; {} address(es) past "
        "serve.token_failures_per_address{}",
        tally.failures, seconds, tally.refused_unchecked, tally.addresses_throttled,
        tally.overall_throttled ? ", and all together past serve.token_failures_overall" : "");
}

// A connection that owes a hello and has not given one in time is told so and closed.
void Server::Impl::close_silent_connections() {
    const auto deadline = std::chrono::milliseconds(settings.hello_timeout_ms);
    for (auto& [id, connection] : connections) {
        const auto waited = Clock::now() - connection.since;
        // A control client or a scrape that has not finished its one request in the
        // same time is let go too: neither may hold a descriptor for ever.
        if (connection.control && !connection.dead && !connection.stop_reading &&
            waited >= deadline) {
            if (connection.http) {
                answer_http(connection, 408, "the request did not arrive in time\n");
            } else {
                answer_control_error(connection, "the command did not arrive in time");
            }
            continue;
        }
        if (connection.greeted || connection.control || connection.turned_away || connection.dead)
            continue;
        if (waited < deadline) continue;
        if (!connection.stop_reading) {
            send_error(connection,
                       fmt::format("no hello within {} ms (serve.hello_timeout_ms)",
                                   settings.hello_timeout_ms),
                       connection.decoder.bytes_fed(), true);
        } else if (waited > deadline + kTurnedAwayGrace) {
            disconnect(
                connection,
                "no hello in time, and the reason was not taken");  // a peer that reads nothing
        }
    }
}

size_t Server::Impl::control_connections(Listener::Role role) const {
    const bool http = role == Listener::Role::metrics;
    size_t count = 0;
    for (const auto& [id, connection] : connections)
        count += connection.control && connection.http == http && !connection.dead &&
                 !connection.turned_away && !requests_in_flight.count(id);
    for (const auto& [id, scrape] : requests_in_flight)
        count += scrape == http;
    return count;
}

size_t Server::Impl::turned_away_connections() const {
    size_t count = 0;
    for (const auto& [id, connection] : connections)
        count += connection.turned_away && !connection.dead;
    return count;
}

// Past serve.max_connections: the relay is told why, its bytes are read and thrown
// away, and once the reason is sent our side is shut. Closing at once instead would
// discard the reason: a socket closed with unread bytes resets the peer.
void Server::Impl::turn_away(Connection& connection) {
    connection.turned_away = true;
    connection.out = wire::stream_header();
    const std::string problem = fmt::format(
        "the host serves at most {} relay connections at once (serve.max_connections); "
        "try again later",
        settings.max_connections);
    wire::append_frame(connection.out, wire::FrameKind::error,
                       serve_protocol::error_json(problem, 0, true));
    spdlog::warn("serve: connection {} from {} turned away: {}", connection.id, connection.peer,
                 problem);
    write_to(connection);
}

// The pending connections are full and one more came: the one that has waited longest
// for its hello goes. It is read once more first: in a flood, more connections than the
// cap can be accepted between a relay's connect and the first read of it, and its hello
// may be waiting in the kernel. Each turn greets, closes or lets go one of them.
void Server::Impl::make_room_for_pending() {
    while (pending_connections() >= settings.max_pending_connections) {
        Connection* oldest = nullptr;
        for (auto& [id, connection] : connections)  // by id: the oldest first
            if (!connection.control && !connection.dead && !connection.turned_away &&
                !connection.greeted) {
                oldest = &connection;
                break;
            }
        if (!oldest) return;
        if (!oldest->stop_reading && !draining) guarded(*oldest, [&] { read_from(*oldest); });
        if (!oldest->dead && !oldest->greeted && !oldest->turned_away) let_pending_go(*oldest);
    }
}

// Told why (as a turned-away relay is) while there is room for that; a flood of them is
// logged by count, not a line each.
void Server::Impl::let_pending_go(Connection& connection) {
    ++evicted_pending;
    if (worth_logging(evicted_pending))
        spdlog::warn(
            "serve: connection {} from {} gave no hello and made room for a newer one "
            "(serve.max_pending_connections = {}); {} so far",
            connection.id, connection.peer, settings.max_pending_connections, evicted_pending);
    if (connection.stop_reading || turned_away_connections() >= kMaxTurnedAway) {
        disconnect(connection, "");  // already closing with its reason, or a flood
        return;
    }
    connection.turned_away = true;
    connection.since = Clock::now();  // its grace to take the reason starts now
    wire::append_frame(
        connection.out, wire::FrameKind::error,
        serve_protocol::error_json(
            fmt::format("no hello yet, and the host holds at most {} connections waiting "
                        "for theirs (serve.max_pending_connections): the oldest makes room "
                        "for a new one; connect again and say hello at once",
                        settings.max_pending_connections),
            connection.decoder.bytes_fed(), true));
    write_to(connection);
}

// Frames a relay sent before the queue filled are taken, in order, as room comes back.
// Each turn starts after the relay the last one started with, so that a fast relay of
// a low number cannot keep a later one waiting. True when no backlog is left.
bool Server::Impl::take_backlogs() {
    std::vector<Connection*> backlogged;
    auto start = connections.upper_bound(last_backlog_start);
    for (auto it = start; it != connections.end(); ++it)
        if (it->second.backlogged && !it->second.dead) backlogged.push_back(&it->second);
    for (auto it = connections.begin(); it != start; ++it)
        if (it->second.backlogged && !it->second.dead) backlogged.push_back(&it->second);
    if (backlogged.empty()) return true;
    last_backlog_start = backlogged.front()->id;
    for (Connection* connection : backlogged) {
        if (!queue.has_room()) return false;
        connection->backlogged = false;
        guarded(*connection, [&] { take_relay_bytes(*connection, {}); });
    }
    return std::none_of(connections.begin(), connections.end(), [](const auto& entry) {
        return entry.second.backlogged && !entry.second.dead;
    });
}

void Server::Impl::service_connection(uint64_t id, short revents) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    Connection& connection = it->second;
    guarded(connection, [&] {
        // Read first: a relay that sent its last batches and hung up has them waiting
        // here even though writing to it now fails. A backlogged one is not read, nor
        // anyone once the drain has taken what there was.
        if ((revents & (POLLIN | POLLHUP | POLLERR)) && !connection.backlogged && !draining)
            read_from(connection);
        if (!connection.dead && (revents & POLLOUT)) write_to(connection);
    });
}

// One read per wake-up, so that every relay gets its turn; at a drain, `drain_bytes`
// (what the kernel held for it when the drain began).
void Server::Impl::read_from(Connection& connection, size_t drain_bytes) {
    if (connection.turned_away) {
        const ssize_t got = ::recv(connection.fd, read_buffer.data(), read_buffer.size(), 0);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            disconnect(connection, "");
        return;
    }
    do {
        const size_t want =
            draining ? std::min(drain_bytes, read_buffer.size()) : read_buffer.size();
        if (draining && want == 0) return;
        const ssize_t got = ::recv(connection.fd, read_buffer.data(), want, 0);
        if (got > 0) {
            if (draining) drain_bytes -= static_cast<size_t>(got);
            connection.bytes_in += static_cast<uint64_t>(got);
            std::span<const uint8_t> bytes(read_buffer.data(), static_cast<size_t>(got));
            if (connection.http)
                take_http_bytes(connection, bytes);
            else if (connection.control)
                take_control_bytes(connection, bytes);
            else
                take_relay_bytes(connection, bytes);
            if (connection.dead || connection.stop_reading || connection.backlogged) return;
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        disconnect(connection, got == 0 ? "" : std::strerror(errno));
        return;
    } while (draining);
}

void Server::Impl::take_relay_bytes(Connection& connection, std::span<const uint8_t> bytes) {
    connection.decoder.feed(bytes);
    while (!connection.dead && !connection.stop_reading) {
        // The queue's bound is checked before each frame is taken, not once per read.
        // A drain takes everything: it is what the relay sent before SIGTERM.
        if (!draining && connection.greeted && !queue.has_room()) {
            connection.backlogged = connection.decoder.pending_bytes() > 0;
            return;
        }
        auto decoded = connection.decoder.next();
        if (!decoded) return;
        if (!decoded->frame) {
            // Before the hello there is no relay to be lenient with: any problem ends it.
            const bool closing = decoded->fatal || !connection.greeted;
            send_error(connection, decoded->problem, decoded->offset, closing);
            if (closing) return;
            continue;
        }
        wire::Frame& frame = *decoded->frame;
        ++connection.frames;
        if (!connection.greeted) {
            if (frame.kind != wire::FrameKind::hello) {
                send_error(connection,
                           "expected a hello frame (ARBH) with the token before anything else",
                           frame.offset, true);
                return;
            }
            if (!accept_hello(connection, frame)) return;
            continue;
        }
        switch (frame.kind) {
            case wire::FrameKind::batch:
            case wire::FrameKind::sync: {
                Work work;
                work.kind =
                    frame.kind == wire::FrameKind::batch ? Work::Kind::batch : Work::Kind::sync;
                work.connection = connection.id;
                work.offset = frame.offset;
                work.payload = std::move(frame.payload);
                // A relay's batches must be its own: held to the name its hello gave.
                work.text = connection.relay;
                connection.fed_the_queue = true;
                queue.push(std::move(work));
                break;
            }
            case wire::FrameKind::hello:
                if (connection.relay.empty() && !connection.token_required) {
                    accept_hello(connection,
                                 frame);  // optional on a Unix socket: names the relay
                } else {
                    send_error(connection, "a second hello; it was ignored", frame.offset, false);
                }
                break;
            default:
                send_error(
                    connection,
                    fmt::format("a {} frame is the host's to send, not the relay's; it was ignored",
                                wire::magic_of(frame.kind)),
                    frame.offset, false);
        }
    }
}

bool Server::Impl::accept_hello(Connection& connection, const wire::Frame& frame) {
    const auto now = Clock::now();
    if (connection.token_required) {
        if (const std::string refusal = throttle->refusal(connection.address, now);
            !refusal.empty()) {
            send_error(connection, refusal, frame.offset, true, false);
            return false;
        }
    }
    const serve_protocol::Hello hello =
        serve_protocol::read_hello(frame.payload, credentials, connection.token_required);
    if (!hello.accepted) {
        if (!connection.token_required) {
            send_error(connection, hello.problem, frame.offset, false);
            return false;
        }
        // A guesser's every try would be a line: the first is, the rest are counted.
        if (throttle->failed(connection.address, now))
            spdlog::warn(
                "serve: connection {} from {}: {}; closing it (failed hellos are counted, "
                "and logged every {} s)",
                connection.id, connection.peer,
                hello.log_cause.empty() ? hello.problem : hello.log_cause,
                kTokenReportInterval.count());
        send_error(connection, hello.problem, frame.offset, true, false);
        return false;
    }
    if (connection.token_required) throttle->succeeded(connection.address, now);
    // Authenticated: now it needs a relay's slot, and may send batches of full size.
    if (connection.token_required && relay_connections() >= settings.max_connections) {
        const std::string problem = fmt::format(
            "the host serves at most {} relay connections at once (serve.max_connections); "
            "try again later",
            settings.max_connections);
        spdlog::warn("serve: connection {} from {} turned away after its hello: {}", connection.id,
                     connection.peer, problem);
        send_error(connection, problem, frame.offset, true);
        return false;
    }
    connection.greeted = true;
    connection.decoder.set_max_payload(static_cast<uint32_t>(max_message_bytes));
    connection.relay = hello.relay;
    spdlog::info("serve: connection {} from {} is relay '{}'", connection.id, connection.peer,
                 escape_for_message(connection.relay, 200));
    wire::append_frame(connection.out, wire::FrameKind::welcome,
                       serve_protocol::welcome_json(server_id, max_message_bytes));
    write_to(connection);
    return true;
}

void Server::Impl::send_error(Connection& connection, const std::string& problem, uint64_t offset,
                              bool closing, bool log) {
    ++connection.problems;
    if (log && worth_logging(connection.problems))
        spdlog::warn("serve: connection {} ({}): at byte {}: {}{}", connection.id,
                     connection.relay.empty() ? connection.peer : connection.relay, offset, problem,
                     closing ? "; closing it" : "");
    wire::append_frame(connection.out, wire::FrameKind::error,
                       serve_protocol::error_json(problem, offset, closing));
    if (closing) {
        connection.stop_reading = true;
        connection.close_after_send = true;
    }
    write_to(connection);
}

void Server::Impl::write_to(Connection& connection) {
    if (connection.dead || connection.write_closed) {
        connection.out.clear();
        connection.out_sent = 0;
        return;
    }
    while (connection.unsent() > 0) {
        const ssize_t sent = ::send(connection.fd, connection.out.data() + connection.out_sent,
                                    connection.unsent(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            connection.out_sent += static_cast<size_t>(sent);
            continue;
        }
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        if (!connection.control && !connection.stop_reading && !draining) {
            // The relay no longer reads, but what it sent before is still to be
            // taken; the end of its stream closes the connection.
            connection.out.clear();
            connection.out_sent = 0;
            connection.write_closed = true;
            return;
        }
        disconnect(connection, std::strerror(errno));
        return;
    }
    connection.out.clear();
    connection.out_sent = 0;
    if (connection.turned_away && !connection.write_shut) {
        ::shutdown(connection.fd, SHUT_WR);
        connection.write_shut = true;
    }
    if (connection.close_after_send) disconnect(connection, "");
}

// Marks a connection closed; sweep() lets it go once nothing refers to it any more.
void Server::Impl::disconnect(Connection& connection, const std::string& error) {
    if (connection.dead) return;
    connection.dead = true;
    connection.close_error = error;
}

void Server::Impl::sweep() {
    for (auto it = connections.begin(); it != connections.end();) {
        Connection& connection = it->second;
        if (!connection.dead) {
            ++it;
            continue;
        }
        const std::string who = connection.relay.empty() ? connection.peer : connection.relay;
        if (!connection.control && !connection.turned_away && connection.greeted) {
            if (connection.decoder.pending_bytes() > 0)
                spdlog::warn(
                    "serve: connection {} ({}) ended with {} bytes received and "
                    "not taken (a frame cut off, or frames still waiting for room); "
                    "the {} frames before them were all taken",
                    connection.id, who, connection.decoder.pending_bytes(), connection.frames);
            else
                spdlog::info("serve: connection {} ({}) closed{}{}", connection.id, who,
                             connection.close_error.empty() ? "" : ": ", connection.close_error);
        }
        if (connection.fed_the_queue) {
            // The event thread keeps its counts per connection until it hears this.
            Work closed;
            closed.kind = Work::Kind::closed;
            closed.connection = connection.id;
            queue.push(std::move(closed));
        }
        ::close(connection.fd);
        it = connections.erase(it);
    }
}

}  // namespace arbiter::host
