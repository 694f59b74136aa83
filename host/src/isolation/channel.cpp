#include "isolation/channel.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace arbiter::host::isolation {

using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kSpin = std::chrono::microseconds(200);
}

Channel::Channel(int socket_fd, SharedAreas areas, Side side)
    : fd_(socket_fd), areas_(areas), side_(side) {}

std::span<uint8_t> Channel::my_area() const {
    return side_ == Side::host ? areas_.requests() : areas_.replies();
}

std::span<const uint8_t> Channel::peer_area() const {
    return side_ == Side::host ? areas_.replies() : areas_.requests();
}

void Channel::send_frame(const Frame& frame, Clock::time_point deadline) {
    for (;;) {
        // Never blocks: a peer that stops reading fills the socket, and then the frame waits
        // for room until the deadline, not for ever.
        const ssize_t sent = ::send(fd_, &frame, sizeof frame, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent == static_cast<ssize_t>(sizeof frame)) return;
        if (sent < 0 && errno == EINTR) continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int timeout_ms = -1;
            if (deadline != Clock::time_point::max()) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - Clock::now() + std::chrono::microseconds(999));
                if (left.count() <= 0)
                    throw ChannelError(ChannelError::Kind::timeout,
                                       "the other end read nothing before the deadline");
                timeout_ms = static_cast<int>(std::min<int64_t>(left.count(), 60'000));
            }
            pollfd wait{fd_, POLLOUT, 0};
            (void)::poll(&wait, 1, timeout_ms);
            continue;
        }
        if (sent < 0 && (errno == EPIPE || errno == ECONNRESET))
            throw ChannelError(ChannelError::Kind::closed, "the other end closed the link");
        throw ChannelError(ChannelError::Kind::io,
                           fmt::format("sending to the other end: {}", std::strerror(errno)));
    }
}

Frame Channel::receive_frame(Clock::time_point deadline) {
    // The first read does not wait: a reply to a batch started earlier is often there
    // already, and then one system call is all it costs.
    bool try_first = true;
    for (;;) {
        if (std::exchange(try_first, false)) {
            Frame frame;
            if (try_receive(frame)) return frame;
            // A reply (or the next batch) usually comes within tens of microseconds; waking
            // from poll on an idle core costs more than that. Ask again, yielding the core,
            // for a short while first.
            const auto spin_until = Clock::now() + kSpin;
            while (Clock::now() < spin_until && Clock::now() < deadline) {
                ::sched_yield();
                if (try_receive(frame)) return frame;
            }
        }
        int timeout_ms = -1;
        if (deadline != Clock::time_point::max()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - Clock::now() + std::chrono::microseconds(999));
            if (left.count() <= 0)
                throw ChannelError(ChannelError::Kind::timeout, "no answer before the deadline");
            timeout_ms = static_cast<int>(std::min<int64_t>(left.count(), 60'000));
        }
        pollfd wait{fd_, POLLIN, 0};
        const int ready = ::poll(&wait, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0)
            throw ChannelError(ChannelError::Kind::io,
                               fmt::format("waiting for the other end: {}", std::strerror(errno)));
        if (ready == 0) continue;  // the loop re-checks the deadline
        Frame frame;
        if (try_receive(frame)) return frame;
    }
}

bool Channel::try_receive(Frame& frame) {
    // One byte more than a frame, so that a longer datagram shows as one.
    uint8_t buffer[sizeof(Frame) + 1];
    const ssize_t got = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT | MSG_TRUNC);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (got == 0) throw ChannelError(ChannelError::Kind::closed, "the other end closed the link");
    if (got < 0 && errno == ECONNRESET)
        throw ChannelError(ChannelError::Kind::closed, "the other end closed the link");
    if (got < 0)
        throw ChannelError(ChannelError::Kind::io,
                           fmt::format("reading from the other end: {}", std::strerror(errno)));
    if (got != static_cast<ssize_t>(sizeof frame))
        throw ChannelError(ChannelError::Kind::protocol,
                           fmt::format("a frame of {} bytes, not {}", got, sizeof frame));
    std::memcpy(&frame, buffer, sizeof frame);
    return true;
}

void Channel::send(Op op, std::span<const uint8_t> payload, Clock::time_point deadline) {
    const std::span<uint8_t> area = my_area();
    size_t offset = 0;
    for (;;) {
        const size_t chunk = std::min(area.size(), payload.size() - offset);
        if (chunk) std::memcpy(area.data(), payload.data() + offset, chunk);
        offset += chunk;
        const bool more = offset < payload.size();
        send_frame({static_cast<uint32_t>(op), more ? kMoreChunks : 0u, payload.size(), chunk},
                   deadline);
        if (!more) return;
        const Frame answer = receive_frame(deadline);
        if (answer.op == static_cast<uint32_t>(Op::forbidden_call))
            throw ChannelError(ChannelError::Kind::forbidden_call, "a forbidden system call",
                               static_cast<int64_t>(answer.total));
        if (answer.op != static_cast<uint32_t>(Op::ack))
            throw ChannelError(ChannelError::Kind::protocol,
                               fmt::format("expected an acknowledgement, got frame {}", answer.op));
    }
}

Channel::Message Channel::receive(Clock::time_point deadline, uint64_t limit) {
    const std::span<const uint8_t> area = peer_area();
    Message message;
    Frame frame = receive_frame(deadline);
    if (frame.op == static_cast<uint32_t>(Op::forbidden_call))
        throw ChannelError(ChannelError::Kind::forbidden_call, "a forbidden system call",
                           static_cast<int64_t>(frame.total));
    message.op = static_cast<Op>(frame.op);
    if (frame.total > limit)
        throw ChannelError(ChannelError::Kind::protocol,
                           fmt::format("a message of {} bytes, more than the {} allowed",
                                       frame.total, limit));
    auto check_chunk = [&](const Frame& f, uint64_t have) {
        if (f.chunk > area.size() || f.chunk > f.total - have || f.total != frame.total ||
            f.op != frame.op)
            throw ChannelError(ChannelError::Kind::protocol,
                               fmt::format("a chunk of {} bytes that does not fit its message",
                                           f.chunk));
        if (!(f.flags & kMoreChunks) && have + f.chunk != f.total)
            throw ChannelError(ChannelError::Kind::protocol,
                               fmt::format("a message that ends at {} of its {} bytes",
                                           have + f.chunk, f.total));
        if ((f.flags & kMoreChunks) && f.chunk == 0)
            throw ChannelError(ChannelError::Kind::protocol, "an empty chunk that is not the last");
    };
    check_chunk(frame, 0);
    if (!(frame.flags & kMoreChunks)) {
        if (side_ == Side::runner) {
            message.payload = area.first(frame.chunk);
        } else {
            // The runner can write its area at any time: read only a copy.
            message.owned.assign(area.begin(), area.begin() + static_cast<ptrdiff_t>(frame.chunk));
            message.payload = message.owned;
        }
        return message;
    }
    // Grown as chunks come, not reserved at the size a peer announces.
    for (;;) {
        message.owned.insert(message.owned.end(), area.begin(),
                             area.begin() + static_cast<ptrdiff_t>(frame.chunk));
        if (!(frame.flags & kMoreChunks)) break;
        send_frame({static_cast<uint32_t>(Op::ack), 0, 0, 0}, deadline);
        const uint64_t have = message.owned.size();
        frame = receive_frame(deadline);
        if (frame.op == static_cast<uint32_t>(Op::forbidden_call))
            throw ChannelError(ChannelError::Kind::forbidden_call, "a forbidden system call",
                               static_cast<int64_t>(frame.total));
        check_chunk(frame, have);
    }
    message.payload = message.owned;
    return message;
}

// ---- fields -------------------------------------------------------------------------

void MessageWriter::raw(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    data_.insert(data_.end(), bytes, bytes + size);
}
MessageWriter& MessageWriter::u8(uint8_t value) {
    data_.push_back(value);
    return *this;
}
MessageWriter& MessageWriter::u32(uint32_t value) {
    raw(&value, sizeof value);
    return *this;
}
MessageWriter& MessageWriter::u64(uint64_t value) {
    raw(&value, sizeof value);
    return *this;
}
MessageWriter& MessageWriter::i64(int64_t value) {
    raw(&value, sizeof value);
    return *this;
}
MessageWriter& MessageWriter::f64(double value) {
    raw(&value, sizeof value);
    return *this;
}
MessageWriter& MessageWriter::bytes(std::span<const uint8_t> value) {
    u64(value.size());
    raw(value.data(), value.size());
    return *this;
}
MessageWriter& MessageWriter::text(std::string_view value) {
    u64(value.size());
    raw(value.data(), value.size());
    return *this;
}

void MessageReader::raw(void* out, size_t size) {
    if (data_.size() - at_ < size)
        throw ChannelError(ChannelError::Kind::protocol,
                           fmt::format("a message cut short at byte {} of {}", at_, data_.size()));
    std::memcpy(out, data_.data() + at_, size);
    at_ += size;
}
uint8_t MessageReader::u8() {
    uint8_t value = 0;
    raw(&value, sizeof value);
    return value;
}
uint32_t MessageReader::u32() {
    uint32_t value = 0;
    raw(&value, sizeof value);
    return value;
}
uint64_t MessageReader::u64() {
    uint64_t value = 0;
    raw(&value, sizeof value);
    return value;
}
int64_t MessageReader::i64() {
    int64_t value = 0;
    raw(&value, sizeof value);
    return value;
}
double MessageReader::f64() {
    double value = 0;
    raw(&value, sizeof value);
    return value;
}
std::span<const uint8_t> MessageReader::bytes(uint64_t limit) {
    const uint64_t size = u64();
    if (size > limit || size > data_.size() - at_)
        throw ChannelError(ChannelError::Kind::protocol,
                           fmt::format("a field of {} bytes at byte {} ({} allowed, {} left)", size,
                                       at_, limit, data_.size() - at_));
    const auto field = data_.subspan(at_, size);
    at_ += size;
    return field;
}
std::string MessageReader::text(uint64_t limit) {
    const auto field = bytes(limit);
    return {reinterpret_cast<const char*>(field.data()), field.size()};
}
void MessageReader::finish() const {
    if (!done())
        throw ChannelError(ChannelError::Kind::protocol,
                           fmt::format("{} bytes after the end of a message", data_.size() - at_));
}

}  // namespace arbiter::host::isolation
