// The network thread of `arbiter serve`: accepts relays and control clients, cuts
// their bytes into verified frames, queues the work for the event thread, writes the
// replies back, watches the plugin and config files, and turns SIGTERM into a drain.
// The event thread's side is serve/event_processor.cpp.
#include "arbiter/host/server.hpp"

#include "arbiter/host/file_trust.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <arbiter/arbiter_plugin.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/host.hpp"
#include "arbiter/host/store.hpp"
#include "arbiter/host/store.hpp"
#include "arbiter/host/serve_protocol.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/host/wire.hpp"
#include "review_page/http_server.hpp"
#include "serve/event_processor.hpp"
#include "serve/file_watcher.hpp"
#include "serve/outbox.hpp"
#include "serve/sockets.hpp"
#include "serve/token_throttle.hpp"
#include "serve/work_queue.hpp"

namespace arbiter::host {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using serve::Work;

namespace {

constexpr size_t kReadChunk = 256 * 1024;
// Connections being told they are over the limit; past this many, more are just closed.
constexpr size_t kMaxTurnedAway = 64;
// How long a turned-away relay may take to hang up before we do.
constexpr auto kTurnedAwayGrace = std::chrono::seconds(2);
// `arbiter ctl` clients, and scrapes, at once (each kind): each holds one request, so
// this also bounds the commands waiting for the event thread.
constexpr size_t kMaxControlConnections = 16;
// Failed hellos are logged one in full, then counted: one line a period, however many.
constexpr auto kTokenReportInterval = std::chrono::seconds(10);

// Compares without stopping at the first difference, so the time taken does not tell
// a guesser how much of the token was right.
std::string read_token_file(const std::string& path,
                            const std::string& setting = "serve.token_file") {
    std::vector<uint8_t> bytes;
    try {
        bytes = read_trusted_file(path, kTokenRules);
    } catch (const std::exception& error) {
        throw std::runtime_error(setting + ": " + error.what());
    }
    std::string token(bytes.begin(), bytes.end());
    token = token.substr(0, token.find('\n'));
    while (!token.empty() && (token.back() == '\r' || token.back() == ' '))
        token.pop_back();
    if (token.empty())
        throw std::runtime_error(setting + ": " + path + " holds an empty token");
    return token;
}

// Logs the first few problems of a connection, then every power of two, so that a
// relay sending garbage cannot flood the log.
bool worth_logging(uint64_t count) {
    return count <= 5 || (count & (count - 1)) == 0;
}

}  // namespace

struct Server::Impl {
    struct Listener {
        int fd = -1;
        enum class Role { unix_relays, tcp_relays, control, metrics } role;
        std::string description;
        std::string unlink_path;
    };
    struct Connection {
        uint64_t id = 0;
        int fd = -1;
        bool control = false;   // not a relay: an `arbiter ctl` client or a metrics scrape
        bool http = false;      // a metrics scrape
        std::string transport;  // "unix" or "tcp"
        std::string peer;
        std::string address;  // the peer as one party, for the token throttle
        std::string relay;    // from the hello
        bool token_required = false;
        bool greeted = false;  // a hello was accepted, or is not needed
        wire::FrameDecoder decoder;
        std::string control_line;
        std::vector<uint8_t> out;
        size_t out_sent = 0;
        bool stop_reading = false;  // a fatal problem, or a control request in flight
        bool close_after_send = false;
        bool dead = false;          // closed; swept out at the end of the loop's turn
        bool write_closed = false;  // the peer reads no more; replies to it are dropped
        bool turned_away = false;   // over serve.max_connections: told why, then closed
        bool write_shut = false;
        std::string close_error;
        uint64_t bytes_in = 0;
        uint64_t frames = 0;
        uint64_t problems = 0;
        uint64_t held_back = 0;  // turns of the loop it was not read from, to push back
        // It has frames read but not yet taken: the queue was full. Nothing more is read
        // from it until they are (the relay is held back), so what waits is one read.
        bool backlogged = false;
        bool fed_the_queue = false;  // a batch or sync of it went to the event thread
        Clock::time_point since = Clock::now();

        Connection(uint32_t max_payload) : decoder(max_payload) {}
        size_t unsent() const { return out.size() - out_sent; }
    };

    ServeOptions options;
    ServeSettings settings;
    serve_protocol::Credentials credentials;
    std::string server_id;
    uint64_t max_message_bytes = 0;
    std::unique_ptr<Host> host;
    int wake_fd = -1;
    int stop_fd = -1;
    int signal_fd = -1;
    std::vector<Listener> listeners;
    std::unique_ptr<serve::FileWatcher> watcher;
    std::unique_ptr<review_page::HttpServer> review_page;  // on a thread of its own
    std::string review_bound;                              // its address, for the log
    serve::WorkQueue queue;
    serve::Outbox outbox;
    std::unique_ptr<serve::EventProcessor> processor;
    std::map<uint64_t, Connection> connections;
    uint64_t next_id = 1;
    bool draining = false;
    uint64_t last_backlog_start = 0;  // take_backlogs' turn
    uint64_t evicted_pending = 0;     // connections that gave no hello and made room
    std::unique_ptr<serve::TokenThrottle> throttle;
    Clock::time_point last_token_report = Clock::now();
    // Control and scrape connections whose request went to the event thread, until their
    // answer is collected (they count against kMaxControlConnections even once closed, so
    // that connecting, asking and hanging up in a loop cannot grow the urgent queue).
    std::map<uint64_t, bool> requests_in_flight;  // connection id -> is a scrape
    std::vector<uint8_t> read_buffer = std::vector<uint8_t>(kReadChunk);

    Impl(ServerConfig config, ServeOptions opts)
        : options(std::move(opts)),
          settings(config.serve),
          queue(config.serve.max_queued_bytes),
          outbox(wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
        if (wake_fd < 0)
            throw std::runtime_error(std::string("cannot create an eventfd: ") +
                                     std::strerror(errno));
        stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        credentials.shared =
            !settings.token_file.empty() ? read_token_file(settings.token_file) : settings.token;
        for (const auto& [name, credential] : settings.relays)
            credentials.relays[name] = !credential.token_file.empty()
                                           ? read_token_file(credential.token_file)
                                           : credential.token;
        throttle = std::make_unique<serve::TokenThrottle>(serve::TokenThrottle::Limits{
            .per_address = settings.token_failures_per_address,
            .overall = settings.token_failures_overall,
            .window = std::chrono::milliseconds(settings.token_failure_window_ms),
            .addresses = static_cast<size_t>(settings.token_failure_addresses)});
        server_id = config.host.server_id;
        max_message_bytes = config.host.max_batch_bytes;
        if (options.handle_signals) {
            sigset_t signals;
            sigemptyset(&signals);
            sigaddset(&signals, SIGTERM);
            sigaddset(&signals, SIGINT);
            sigaddset(&signals, SIGPIPE);
            ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
            sigdelset(&signals, SIGPIPE);
            signal_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
        }
        try {
            open_listeners();
            if (listeners.empty())
                throw std::runtime_error(
                    config.file.string() +
                    ": [serve] names no socket: set unix_socket or tcp_listen");
            if (!settings.review_listen.empty()) open_review_page(config.store);
            auto attachments = attach_store(config);
            host = std::make_unique<Host>(std::move(config), std::move(attachments));
            // As a changed config with such a plugin is refused (apply_config), so is one at
            // start: the operator finds out now, not when a check's cheaters go unflagged.
            if (const auto refused = host->refused_at_start()) throw std::runtime_error(*refused);
            processor = std::make_unique<serve::EventProcessor>(*host, options.config_options,
                                                                queue, outbox);
            if (settings.watch) {
                watcher = std::make_unique<serve::FileWatcher>(
                    std::chrono::milliseconds(settings.watch_settle_ms));
                watcher->watch(processor->watched_files());
            }
            write_ready_file();
        } catch (...) {
            close_everything();
            throw;
        }
    }

    ~Impl() { close_everything(); }

    void close_everything() {
        for (auto& [id, connection] : connections)
            ::close(connection.fd);
        connections.clear();
        close_listeners();
        for (int* fd : {&wake_fd, &stop_fd, &signal_fd})
            if (*fd >= 0) ::close(std::exchange(*fd, -1));
    }

    void open_listeners() {
        if (!settings.unix_socket.empty()) {
            listeners.push_back({serve::listen_unix(settings.unix_socket, "serve.unix_socket",
                                                    static_cast<mode_t>(settings.unix_socket_mode)),
                                 Listener::Role::unix_relays, "unix " + settings.unix_socket,
                                 settings.unix_socket});
        }
        if (!settings.tcp_listen.empty()) {
            std::string bound;
            int fd = serve::listen_tcp(settings.tcp_listen, settings.tcp_allow_remote,
                                       "serve.tcp_listen", bound);
            listeners.push_back({fd, Listener::Role::tcp_relays, "tcp " + bound, ""});
        }
        if (!settings.control_socket.empty()) {
            // Reloads are the operator's alone.
            int fd = serve::listen_unix(settings.control_socket, "serve.control_socket", 0600);
            listeners.push_back({fd, Listener::Role::control, "control " + settings.control_socket,
                                 settings.control_socket});
        }
        if (!settings.metrics_listen.empty()) {
            std::string bound;
            int fd = serve::listen_tcp(settings.metrics_listen, settings.metrics_allow_remote,
                                       "serve.metrics_listen", bound);
            listeners.push_back({fd, Listener::Role::metrics, "metrics " + bound, ""});
        }
    }

    // The review page reads the store through a connection of its own, on its own thread.
    void open_review_page(const StoreSettings& store) {
        auto site = std::make_unique<review_page::ReviewSite>(
            store, read_token_file(settings.review_token_file, "serve.review_token_file"));
        const int fd = serve::listen_tcp(settings.review_listen, settings.review_allow_remote,
                                         "serve.review_listen", review_bound);
        review_page = std::make_unique<review_page::HttpServer>(fd, std::move(site));
    }

    void close_listeners() {
        for (auto& listener : listeners) {
            ::close(listener.fd);
            if (!listener.unlink_path.empty()) ::unlink(listener.unlink_path.c_str());
        }
        listeners.clear();
    }

    void write_ready_file() {
        if (options.ready_file.empty()) return;
        json ready = {{"pid", ::getpid()}};
        for (const auto& listener : listeners) {
            const auto space = listener.description.find(' ');
            ready[listener.description.substr(0, space)] = listener.description.substr(space + 1);
        }
        if (review_page) ready["review"] = review_bound;
        const auto temporary = options.ready_file.string() + ".tmp";
        std::ofstream(temporary) << dump_json(ready) << "\n";
        std::filesystem::rename(temporary, options.ready_file);
    }

    // ---- the loop ----

    bool run() {
        for (const auto& listener : listeners)
            spdlog::info(
                "serve: listening on {}{}", listener.description,
                listener.role == Listener::Role::tcp_relays ? " (relays must give the token)" : "");
        if (review_page)
            spdlog::info("serve: the review page is on http://{}/ (log in with the token in {})",
                         review_bound, settings.review_token_file);
        std::thread events([this] { processor->run(); });
        bool drained = false;
        while (!drained) {
            drained = collect_mail();
            if (drained) break;
            poll_once();
        }
        flush_before_exit();
        report_token_failures(true);
        events.join();
        close_everything();
        spdlog::info("serve: stopped");
        return processor->drain_clean();
    }

    // Takes what the event thread sent back; true once the drain is complete.
    bool collect_mail() {
        serve::Mail mail = outbox.take();
        for (auto& reply : mail.replies) {
            if (reply.close_after) requests_in_flight.erase(reply.connection);  // answered
            auto it = connections.find(reply.connection);
            if (it == connections.end()) continue;  // it left; the reply has nowhere to go
            Connection& connection = it->second;
            if (connection.dead) continue;
            // Past max_reply_bytes the host stops reading the relay; a relay that still does
            // not read what it is sent (its matches end, its assessments pile up) is let go
            // at four times that, with the reason logged, rather than grow memory.
            if (!connection.control &&
                connection.unsent() + reply.bytes.size() > 4 * settings.max_reply_bytes) {
                spdlog::warn(
                    "serve: connection {} ({}) reads nothing of what it is sent: {} bytes "
                    "unsent, past 4 x serve.max_reply_bytes; closing it",
                    connection.id, connection.relay.empty() ? connection.peer : connection.relay,
                    connection.unsent());
                disconnect(connection, "a reader too slow for its replies");
                continue;
            }
            connection.out.insert(connection.out.end(), reply.bytes.begin(), reply.bytes.end());
            connection.close_after_send = connection.close_after_send || reply.close_after;
            write_to(connection);
        }
        if (mail.watch && watcher) watcher->watch(*mail.watch);
        sweep();
        return mail.drained;
    }

    void poll_once() {
        std::vector<pollfd> fds;
        std::vector<uint64_t> owners;  // connection id per entry; 0 for the rest
        auto add = [&](int fd, short events, uint64_t owner) {
            fds.push_back({fd, events, 0});
            owners.push_back(owner);
        };
        if (signal_fd >= 0) add(signal_fd, POLLIN, 0);
        add(wake_fd, POLLIN, 0);
        add(stop_fd, POLLIN, 0);
        if (watcher) add(watcher->fd(), POLLIN, 0);
        for (const auto& listener : listeners)
            add(listener.fd, POLLIN, 0);
        // A relay's frames already read go before anything more is read from any relay.
        const bool room = take_backlogs() && queue.has_room();
        bool held_back = false;
        for (auto& [id, connection] : connections) {
            if (connection.dead) continue;
            short events = 0;
            // A relay that has not said hello yet is read whatever the queue holds: its
            // hello goes nowhere near the queue, and before it, nothing larger is buffered.
            const bool may_read =
                !connection.stop_reading && !draining &&
                (connection.control || connection.turned_away || !connection.greeted ||
                 (room && !connection.backlogged &&
                  connection.unsent() < settings.max_reply_bytes));
            if (may_read) {
                events |= POLLIN;
            } else if (!connection.stop_reading && !draining && !connection.control) {
                held_back = true;
                ++connection.held_back;
            }
            if (connection.unsent() > 0) events |= POLLOUT;
            // A backlogged relay that hung up would wake the poll for ever with POLLHUP: it
            // is left out until its frames are taken (its hang-up is seen after them).
            add(connection.backlogged && events == 0 ? -1 : connection.fd, events, id);
        }
        // While a relay is held back, look again soon: the queue empties without a wake-up.
        int timeout = held_back ? 5 : 1000;
        if (watcher && watcher->next_timeout_ms() >= 0)
            timeout = std::min(timeout, watcher->next_timeout_ms());

        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
            spdlog::error("serve: poll failed: {}", std::strerror(errno));

        for (size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].revents == 0) continue;
            const int fd = fds[i].fd;
            if (owners[i] != 0) {
                service_connection(owners[i], fds[i].revents);
            } else if (fd == signal_fd) {
                signalfd_siginfo info{};
                [[maybe_unused]] auto got = ::read(signal_fd, &info, sizeof info);
                const int signal = static_cast<int>(info.ssi_signo);
                if (draining) exit_now(signal);
                spdlog::info("serve: {} received; draining what was received", ::strsignal(signal));
                begin_drain();
            } else if (fd == stop_fd) {
                uint64_t ignored;
                [[maybe_unused]] auto got = ::read(stop_fd, &ignored, sizeof ignored);
                spdlog::info("serve: asked to stop; draining what was received");
                begin_drain();
            } else if (fd == wake_fd) {
                uint64_t ignored;
                [[maybe_unused]] auto got = ::read(wake_fd, &ignored, sizeof ignored);
            } else if (watcher && fd == watcher->fd()) {
                watcher->read_events();
            } else {
                for (const auto& listener : listeners)
                    if (listener.fd == fd) accept_all(listener);
            }
        }
        for (auto& [id, connection] : connections)
            if (connection.turned_away && Clock::now() - connection.since > kTurnedAwayGrace)
                disconnect(connection, "");
        close_silent_connections();
        report_token_failures(false);
        sweep();
        if (watcher && !draining) {
            for (const auto& file : watcher->settled()) {
                Work work;
                if (file.plugin.empty()) {
                    spdlog::info("serve: {} changed on disk; reloading the config",
                                 file.path.string());
                    work.kind = Work::Kind::config_changed;
                } else {
                    spdlog::info("serve: plugin '{}': {} changed on disk; reloading it",
                                 file.plugin, file.path.string());
                    work.kind = Work::Kind::reload;
                    work.text = file.plugin;
                }
                queue.push_urgent(std::move(work));
            }
        }
    }

    void accept_all(const Listener& listener) {
        while (true) {
            const int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    spdlog::warn("serve: accept on {} failed: {}", listener.description,
                                 std::strerror(errno));
                return;
            }
            const bool control = listener.role == Listener::Role::control ||
                                 listener.role == Listener::Role::metrics;
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
    size_t relay_connections() const {
        size_t count = 0;
        for (const auto& [id, connection] : connections)
            count += !connection.control && !connection.dead && !connection.turned_away &&
                     connection.greeted;
        return count;
    }
    size_t pending_connections() const {
        size_t count = 0;
        for (const auto& [id, connection] : connections)
            count += !connection.control && !connection.dead && !connection.turned_away &&
                     !connection.greeted;
        return count;
    }

    // What the token throttle counted since the last line: at most one a period, and the
    // rest at the end.
    void report_token_failures(bool last) {
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
    void close_silent_connections() {
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
            if (connection.greeted || connection.control || connection.turned_away ||
                connection.dead)
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
    size_t control_connections(Listener::Role role) const {
        const bool http = role == Listener::Role::metrics;
        size_t count = 0;
        for (const auto& [id, connection] : connections)
            count += connection.control && connection.http == http && !connection.dead &&
                     !connection.turned_away && !requests_in_flight.count(id);
        for (const auto& [id, scrape] : requests_in_flight)
            count += scrape == http;
        return count;
    }
    size_t turned_away_connections() const {
        size_t count = 0;
        for (const auto& [id, connection] : connections)
            count += connection.turned_away && !connection.dead;
        return count;
    }

    // Past serve.max_connections: the relay is told why, its bytes are read and thrown
    // away, and once the reason is sent our side is shut. Closing at once instead would
    // discard the reason: a socket closed with unread bytes resets the peer.
    void turn_away(Connection& connection) {
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
    void make_room_for_pending() {
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
    void let_pending_go(Connection& connection) {
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
    bool take_backlogs() {
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

    // Nothing a peer sends may end the process. Every message is checked where it is
    // read; this is the backstop should one check be missing: that connection alone ends.
    template <typename Step>
    void guarded(Connection& connection, Step step) {
        try {
            step();
        } catch (const std::exception& error) {
            spdlog::error("serve: connection {} from {}: {}; closing it", connection.id,
                          connection.peer, error.what());
            disconnect(connection, error.what());
        }
    }

    // Past kMaxControlConnections of one kind: answered at once (503 for a scrape), the
    // request read and thrown away, and closed like a turned-away relay.
    void turn_away_control(Connection& connection) {
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

    void service_connection(uint64_t id, short revents) {
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
    void read_from(Connection& connection, size_t drain_bytes = 0) {
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

    void take_relay_bytes(Connection& connection, std::span<const uint8_t> bytes) {
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
                        send_error(connection, "a second hello; it was ignored", frame.offset,
                                   false);
                    }
                    break;
                default:
                    send_error(
                        connection,
                        fmt::format(
                            "a {} frame is the host's to send, not the relay's; it was ignored",
                            wire::magic_of(frame.kind)),
                        frame.offset, false);
            }
        }
    }

    bool accept_hello(Connection& connection, const wire::Frame& frame) {
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
            spdlog::warn("serve: connection {} from {} turned away after its hello: {}",
                         connection.id, connection.peer, problem);
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

    void send_error(Connection& connection, const std::string& problem, uint64_t offset,
                    bool closing, bool log = true) {
        ++connection.problems;
        if (log && worth_logging(connection.problems))
            spdlog::warn("serve: connection {} ({}): at byte {}: {}{}", connection.id,
                         connection.relay.empty() ? connection.peer : connection.relay, offset,
                         problem, closing ? "; closing it" : "");
        wire::append_frame(connection.out, wire::FrameKind::error,
                           serve_protocol::error_json(problem, offset, closing));
        if (closing) {
            connection.stop_reading = true;
            connection.close_after_send = true;
        }
        write_to(connection);
    }

    void take_control_bytes(Connection& connection, std::span<const uint8_t> bytes) {
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
    void take_http_bytes(Connection& connection, std::span<const uint8_t> bytes) {
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

    void answer_http(Connection& connection, int status, const std::string& body) {
        const std::string text =
            serve_protocol::http_response(status, "text/plain; charset=utf-8", body);
        connection.out.insert(connection.out.end(), text.begin(), text.end());
        connection.stop_reading = true;
        connection.close_after_send = true;
        write_to(connection);
    }

    void answer_control_error(Connection& connection, const std::string& problem) {
        const std::string text = dump_json({{"ok", false}, {"error", problem}}, 2) + "\n";
        connection.out.insert(connection.out.end(), text.begin(), text.end());
        connection.stop_reading = true;
        connection.close_after_send = true;
        write_to(connection);
    }

    std::string connections_json() const {
        json list = json::array();
        for (const auto& [id, connection] : connections) {
            if (connection.control || connection.turned_away) continue;
            list.push_back(
                {{"id", id},
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

    void write_to(Connection& connection) {
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
    void disconnect(Connection& connection, const std::string& error) {
        if (connection.dead) return;
        connection.dead = true;
        connection.close_error = error;
    }

    void sweep() {
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
                                 connection.close_error.empty() ? "" : ": ",
                                 connection.close_error);
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

    // SIGTERM: take in everything the relays have already sent, stop listening, and let
    // the event thread finish it.
    // A second signal while the drain runs (a plugin stuck in its last call, a queue too
    // long to wait for): the operator wants the process gone. The event thread may be
    // inside a plugin, so nothing of the host is touched; the security log writes each
    // record through as it goes, so it keeps all it was given.
    [[noreturn]] void exit_now(int signal) {
        spdlog::warn(
            "serve: {} again during the drain: exiting now; {} bytes of received "
            "batches were not processed, and the open matches were not ended",
            ::strsignal(signal), queue.queued_bytes());
        spdlog::default_logger()->flush();
        std::_Exit(128 + signal);
    }

    void begin_drain() {
        if (draining) return;
        draining = true;
        close_listeners();
        for (auto& entry : connections) {
            Connection& connection = entry.second;  // (a lambda below uses it; clang 14
                                                    // cannot capture a structured binding)
            if (connection.control || connection.stop_reading || connection.dead ||
                connection.turned_away)
                continue;
            // A drain takes it all: the frames already read, then what the kernel holds
            // for the relay now (not what it sends from here on).
            connection.backlogged = false;
            guarded(connection, [&] {
                take_relay_bytes(connection, {});
                int held = 0;
                if (::ioctl(connection.fd, FIONREAD, &held) != 0) held = 0;
                read_from(connection, static_cast<size_t>(std::max(held, 0)));
            });
        }
        sweep();
        Work drain;
        drain.kind = Work::Kind::drain;
        queue.push(std::move(drain));
    }

    // The last replies (final assessments, sync answers) get a short while to leave.
    void flush_before_exit() {
        const auto deadline = Clock::now() + std::chrono::seconds(2);
        while (Clock::now() < deadline) {
            collect_mail();
            std::vector<pollfd> fds;
            for (auto& [id, connection] : connections)
                if (!connection.dead && connection.unsent() > 0)
                    fds.push_back({connection.fd, POLLOUT, 0});
            if (fds.empty()) return;
            ::poll(fds.data(), fds.size(), 50);
            for (auto& [id, connection] : connections)
                write_to(connection);
            sweep();
        }
    }
};

Server::Server(ServerConfig config, ServeOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(options))) {}

Server::~Server() = default;

bool Server::run() {
    return impl_->run();
}

void Server::stop() {
    const uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(impl_->stop_fd, &one, sizeof one);
}

std::vector<std::string> Server::endpoints() const {
    std::vector<std::string> out;
    for (const auto& listener : impl_->listeners)
        out.push_back(listener.description);
    return out;
}

}  // namespace arbiter::host
