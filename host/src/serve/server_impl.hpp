// The network thread of `arbiter serve` as one object: its sockets, connections and
// limits. Its work is in three files: server.cpp (start, the loop, the drain),
// connections.cpp (relays' connections: accepting, reading, the hello, writing back,
// turning away) and control.cpp (`arbiter ctl` and metrics requests). The event
// thread's side is serve/event_processor.cpp.
#pragma once

#include "serve/server.hpp"

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

#include "arbiter/host/file_trust.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/host/wire.hpp"
#include "review_page/http_server.hpp"
#include "serve/event_processor.hpp"
#include "serve/file_watcher.hpp"
#include "serve/outbox.hpp"
#include "serve/serve_protocol.hpp"
#include "serve/token_throttle.hpp"
#include "serve/work_queue.hpp"
#include "store/store.hpp"
#include "wire/sockets.hpp"

namespace arbiter::host {

struct Server::Impl {
    using Clock = std::chrono::steady_clock;
    using Work = serve::Work;

    static constexpr size_t kReadChunk = 256 * 1024;
    // Connections being told they are over the limit; past this many, more are just closed.
    static constexpr size_t kMaxTurnedAway = 64;
    // How long a turned-away relay may take to hang up before we do.
    static constexpr auto kTurnedAwayGrace = std::chrono::seconds(2);
    // `arbiter ctl` clients, and scrapes, at once (each kind): each holds one request, so
    // this also bounds the commands waiting for the event thread.
    static constexpr size_t kMaxControlConnections = 16;
    // Failed hellos are logged one in full, then counted: one line a period, however many.
    static constexpr auto kTokenReportInterval = std::chrono::seconds(10);

    // Compares without stopping at the first difference, so the time taken does not tell
    // a guesser how much of the token was right.
    static std::string read_token_file(const std::string& path,
                                       const std::string& setting = "serve.token_file");
    // Logs the first few problems of a connection, then every power of two, so that a
    // relay sending garbage cannot flood the log.
    static bool worth_logging(uint64_t count) { return count <= 5 || (count & (count - 1)) == 0; }

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

    Impl(ServerConfig config, ServeOptions opts);
    ~Impl() { close_everything(); }

    void close_everything();

    void open_listeners();

    // The review page reads the store through a connection of its own, on its own thread.
    void open_review_page(const StoreSettings& store);

    void close_listeners();

    void write_ready_file();

    // ---- the loop ----

    bool run();

    // Takes what the event thread sent back; true once the drain is complete.
    bool collect_mail();

    void poll_once();

    void accept_all(const Listener& listener);

    // Relays that have a slot: authenticated, or on a socket that needs no token.
    size_t relay_connections() const;
    size_t pending_connections() const;

    // What the token throttle counted since the last line: at most one a period, and the
    // rest at the end.
    void report_token_failures(bool last);

    // A connection that owes a hello and has not given one in time is told so and closed.
    void close_silent_connections();
    size_t control_connections(Listener::Role role) const;
    size_t turned_away_connections() const;

    // Past serve.max_connections: the relay is told why, its bytes are read and thrown
    // away, and once the reason is sent our side is shut. Closing at once instead would
    // discard the reason: a socket closed with unread bytes resets the peer.
    void turn_away(Connection& connection);

    // The pending connections are full and one more came: the one that has waited longest
    // for its hello goes. It is read once more first: in a flood, more connections than the
    // cap can be accepted between a relay's connect and the first read of it, and its hello
    // may be waiting in the kernel. Each turn greets, closes or lets go one of them.
    void make_room_for_pending();

    // Told why (as a turned-away relay is) while there is room for that; a flood of them is
    // logged by count, not a line each.
    void let_pending_go(Connection& connection);

    // Frames a relay sent before the queue filled are taken, in order, as room comes back.
    // Each turn starts after the relay the last one started with, so that a fast relay of
    // a low number cannot keep a later one waiting. True when no backlog is left.
    bool take_backlogs();

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
    void turn_away_control(Connection& connection);

    void service_connection(uint64_t id, short revents);

    // One read per wake-up, so that every relay gets its turn; at a drain, `drain_bytes`
    // (what the kernel held for it when the drain began).
    void read_from(Connection& connection, size_t drain_bytes = 0);

    void take_relay_bytes(Connection& connection, std::span<const uint8_t> bytes);

    bool accept_hello(Connection& connection, const wire::Frame& frame);

    void send_error(Connection& connection, const std::string& problem, uint64_t offset,
                    bool closing, bool log = true);

    void take_control_bytes(Connection& connection, std::span<const uint8_t> bytes);

    // A scrape: the request head is read up to its blank line (a bounded amount), then
    // answered: /metrics through the event thread, which owns the host's figures (and hands
    // the rendering to a thread of its own); anything else here.
    void take_http_bytes(Connection& connection, std::span<const uint8_t> bytes);

    void answer_http(Connection& connection, int status, const std::string& body);

    void answer_control_error(Connection& connection, const std::string& problem);

    std::string connections_json() const;

    void write_to(Connection& connection);

    // Marks a connection closed; sweep() lets it go once nothing refers to it any more.
    void disconnect(Connection& connection, const std::string& error);

    void sweep();

    // SIGTERM: take in everything the relays have already sent, stop listening, and let
    // the event thread finish it.
    // A second signal while the drain runs (a plugin stuck in its last call, a queue too
    // long to wait for): the operator wants the process gone. The event thread may be
    // inside a plugin, so nothing of the host is touched; the security log writes each
    // record through as it goes, so it keeps all it was given.
    [[noreturn]] void exit_now(int signal);

    void begin_drain();

    // The last replies (final assessments, sync answers) get a short while to leave.
    void flush_before_exit();
};

}  // namespace arbiter::host
