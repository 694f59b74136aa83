#include "wire/relay_client.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wire/sockets.hpp"

namespace arbiter::host {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

RelayClient::RelayClient(int fd) : fd_(fd) {
    send_all(wire::stream_header());
}

RelayClient::~RelayClient() {
    if (fd_ >= 0) ::close(fd_);
}

RelayClient::RelayClient(RelayClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      decoder_(std::move(other.decoder_)),
      inbox_(std::move(other.inbox_)),
      hung_up_(other.hung_up_) {}

RelayClient& RelayClient::operator=(RelayClient&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        decoder_ = std::move(other.decoder_);
        inbox_ = std::move(other.inbox_);
        hung_up_ = other.hung_up_;
    }
    return *this;
}

RelayClient RelayClient::connect_unix(const std::string& path) {
    return RelayClient(serve::connect_unix(path));
}

RelayClient RelayClient::connect_tcp(const std::string& text) {
    const auto [host, port] = serve::split_host_port(text, "relay address");
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int error = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); error != 0)
        throw std::runtime_error(fmt::format("cannot resolve {}: {}", text, ::gai_strerror(error)));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, ::freeaddrinfo);
    const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
        const std::string error = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        throw std::runtime_error(fmt::format("cannot connect to {}: {}", text, error));
    }
    return RelayClient(fd);
}

std::string RelayClient::hello(const std::string& relay, const std::string& token,
                               std::chrono::milliseconds timeout) {
    nlohmann::json hello = {{"relay", relay}};
    if (!token.empty()) hello["token"] = token;
    std::vector<uint8_t> frame;
    wire::append_frame(frame, wire::FrameKind::hello, hello.dump());
    send_all(frame);
    const auto deadline = Clock::now() + timeout;
    while (auto reply = read_frame(left_until(deadline))) {
        const std::string text(reply->payload.begin(), reply->payload.end());
        if (reply->kind == wire::FrameKind::welcome) return text;
        if (reply->kind == wire::FrameKind::error)
            throw std::runtime_error("the host refused the hello: " + text);
    }
    throw std::runtime_error(hung_up_ ? "the host hung up before its welcome"
                                      : "no welcome from the host in time");
}

void RelayClient::send_batch(std::span<const uint8_t> batch) {
    std::vector<uint8_t> frame;
    frame.reserve(batch.size() + 16);
    wire::append_frame(frame, wire::FrameKind::batch, batch);
    send_all(frame);
}

void RelayClient::send_raw(std::span<const uint8_t> bytes) {
    send_all(bytes);
}

void RelayClient::send_all(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
        pollfd ready{fd_, POLLOUT | POLLIN, 0};
        if (::poll(&ready, 1, -1) < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        }
        // Take in the host's replies while waiting, so neither side waits on the other.
        if ((ready.revents & POLLIN) && !hung_up_) read_some(std::chrono::milliseconds(0));
        if (ready.revents & (POLLOUT | POLLERR | POLLHUP)) {
            const ssize_t sent =
                ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
            if (sent < 0)
                throw std::runtime_error(std::string("sending to the host: ") +
                                         std::strerror(errno));
            bytes = bytes.subspan(static_cast<size_t>(sent));
        }
    }
}

bool RelayClient::read_some(std::chrono::milliseconds timeout) {
    pollfd ready{fd_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(timeout.count())) <= 0) return true;
    uint8_t buffer[65536];
    const ssize_t got = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        hung_up_ = true;
        return false;
    }
    if (got > 0) decoder_.feed(std::span(buffer, static_cast<size_t>(got)));
    while (auto decoded = decoder_.next()) {
        if (decoded->frame) {
            inbox_.push_back(std::move(*decoded->frame));
        } else {
            // A damaged reply is the host's fault or the network's; keep it visible as an error
            // frame.
            wire::Frame problem;
            problem.kind = wire::FrameKind::error;
            const std::string text =
                nlohmann::json{{"error", "reply stream: " + decoded->problem}}.dump();
            problem.payload.assign(text.begin(), text.end());
            inbox_.push_back(std::move(problem));
        }
    }
    return true;
}

std::optional<wire::Frame> RelayClient::read_frame(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (inbox_.empty()) {
        if (hung_up_ || !read_some(left_until(deadline))) return std::nullopt;
        if (inbox_.empty() && Clock::now() >= deadline) return std::nullopt;
    }
    wire::Frame frame = std::move(inbox_.front());
    inbox_.pop_front();
    return frame;
}

std::string RelayClient::sync(uint64_t id, std::chrono::milliseconds timeout) {
    std::vector<uint8_t> frame;
    wire::append_frame(frame, wire::FrameKind::sync, nlohmann::json{{"id", id}}.dump());
    send_all(frame);
    const auto deadline = Clock::now() + timeout;
    std::deque<wire::Frame> others;
    std::optional<std::string> answer;
    while (!answer) {
        auto reply = read_frame(left_until(deadline));
        if (!reply) break;
        if (reply->kind == wire::FrameKind::sync) {
            auto parsed =
                nlohmann::json::parse(reply->payload.begin(), reply->payload.end(), nullptr, false);
            if (parsed.is_object() && parsed.value("id", uint64_t{0}) == id) {
                answer = parsed.dump();
                continue;
            }
        }
        others.push_back(std::move(*reply));
    }
    // What came before the answer stays for take_received(), in order.
    for (auto it = others.rbegin(); it != others.rend(); ++it)
        inbox_.push_front(std::move(*it));
    if (!answer)
        throw std::runtime_error(hung_up_ ? "the host hung up before answering the sync"
                                          : "no answer to the sync in time");
    return *answer;
}

std::vector<wire::Frame> RelayClient::take_received() {
    read_some(std::chrono::milliseconds(0));
    std::vector<wire::Frame> out(std::make_move_iterator(inbox_.begin()),
                                 std::make_move_iterator(inbox_.end()));
    inbox_.clear();
    return out;
}

void RelayClient::shutdown_write() {
    ::shutdown(fd_, SHUT_WR);
}

}  // namespace arbiter::host
