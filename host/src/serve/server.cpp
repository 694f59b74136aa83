// The network thread of `arbiter serve`: starting (sockets, the review page, the host,
// the event thread), the loop that polls every socket, and the drain SIGTERM begins.
// The connections themselves are connections.cpp and control.cpp.
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

std::string Server::Impl::read_token_file(const std::string& path, const std::string& setting) {
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
    if (token.empty()) throw std::runtime_error(setting + ": " + path + " holds an empty token");
    return token;
}

Server::Impl::Impl(ServerConfig config, ServeOptions opts)
    : options(std::move(opts)),
      settings(config.serve),
      queue(config.serve.max_queued_bytes),
      outbox(wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_fd < 0)
        throw std::runtime_error(std::string("cannot create an eventfd: ") + std::strerror(errno));
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
            throw std::runtime_error(config.file.string() +
                                     ": [serve] names no socket: set unix_socket or tcp_listen");
        if (!settings.review_listen.empty()) open_review_page(config.store);
        auto attachments = attach_store(config);
        host = std::make_unique<Host>(std::move(config), std::move(attachments));
        // As a changed config with such a plugin is refused (apply_config), so is one at
        // start: the operator finds out now, not when a check's cheaters go unflagged.
        if (const auto refused = host->refused_at_start()) throw std::runtime_error(*refused);
        processor =
            std::make_unique<serve::EventProcessor>(*host, options.config_options, queue, outbox);
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

void Server::Impl::close_everything() {
    for (auto& [id, connection] : connections)
        ::close(connection.fd);
    connections.clear();
    close_listeners();
    for (int* fd : {&wake_fd, &stop_fd, &signal_fd})
        if (*fd >= 0) ::close(std::exchange(*fd, -1));
}

void Server::Impl::open_listeners() {
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
void Server::Impl::open_review_page(const StoreSettings& store) {
    auto site = std::make_unique<review_page::ReviewSite>(
        store, read_token_file(settings.review_token_file, "serve.review_token_file"));
    const int fd = serve::listen_tcp(settings.review_listen, settings.review_allow_remote,
                                     "serve.review_listen", review_bound);
    review_page = std::make_unique<review_page::HttpServer>(fd, std::move(site));
}

void Server::Impl::close_listeners() {
    for (auto& listener : listeners) {
        ::close(listener.fd);
        if (!listener.unlink_path.empty()) ::unlink(listener.unlink_path.c_str());
    }
    listeners.clear();
}

void Server::Impl::write_ready_file() {
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

bool Server::Impl::run() {
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
bool Server::Impl::collect_mail() {
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

void Server::Impl::poll_once() {
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
             (room && !connection.backlogged && connection.unsent() < settings.max_reply_bytes));
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
                spdlog::info("serve: {} changed on disk; reloading the config", file.path.string());
                work.kind = Work::Kind::config_changed;
            } else {
                spdlog::info("serve: plugin '{}': {} changed on disk; reloading it", file.plugin,
                             file.path.string());
                work.kind = Work::Kind::reload;
                work.text = file.plugin;
            }
            queue.push_urgent(std::move(work));
        }
    }
}

// SIGTERM: take in everything the relays have already sent, stop listening, and let
// the event thread finish it.
// A second signal while the drain runs (a plugin stuck in its last call, a queue too
// long to wait for): the operator wants the process gone. The event thread may be
// inside a plugin, so nothing of the host is touched; the security log writes each
// record through as it goes, so it keeps all it was given.
[[noreturn]] void Server::Impl::exit_now(int signal) {
    spdlog::warn(
        "serve: {} again during the drain: exiting now; {} bytes of received "
        "batches were not processed, and the open matches were not ended",
        ::strsignal(signal), queue.queued_bytes());
    spdlog::default_logger()->flush();
    std::_Exit(128 + signal);
}

void Server::Impl::begin_drain() {
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
void Server::Impl::flush_before_exit() {
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
