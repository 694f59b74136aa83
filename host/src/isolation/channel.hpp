// The link between the host and an isolated plugin's runner: a Unix SOCK_SEQPACKET pair for
// small frames, and one shared memory file (memfd) for the bytes. The memory holds two
// areas: requests (host writes, runner reads) and replies (runner writes, host reads). A
// frame says "the payload of this message is in your area, N bytes"; a message larger
// than an area goes in chunks, each acknowledged before the next is written. So a batch
// crosses as the same bytes, written once, and the runner hands the plugin a pointer into
// the shared memory.
//
// The runner is as untrusted as the plugin it holds (they share an address space): the
// host copies a reply out of the shared memory before it reads a byte of it, bounds every
// length, and gives up on a peer that breaks the framing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace arbiter::host::isolation {

// The runner's fixed descriptors: the socket and the shared memory.
inline constexpr int kRunnerSocketFd = 3;
inline constexpr int kRunnerMemoryFd = 4;
// The plugin library's bytes, sealed: the runner loads it as /proc/self/fd/5, so that a
// runner that became another user needs no right to the host's private copy.
inline constexpr int kRunnerLibraryFd = 5;

// Exit codes the runner uses for what it can tell the host no other way.
inline constexpr int kExitBadStart = 90;         // wrong arguments or descriptors
inline constexpr int kExitConfinement = 91;      // could not confine itself: never runs a plugin
inline constexpr int kExitOutOfMemory = 92;      // an allocation failed outside the plugin
inline constexpr int kExitForbiddenCall = 93;    // the plugin made a system call the filter forbids

enum class Op : uint32_t {
    // host -> runner
    load = 1,       // the private copy to load and negotiate with
    create = 2,     // config, baseline, shard
    batch = 3,      // one verified batch
    match_end = 4,  // relay id, match id
    save_state = 5,
    restore_state = 6,
    configure = 7,
    // runner -> host
    reply = 100,
    forbidden_call = 101,  // from the runner's SIGSYS handler: the system call's number
    // either way
    ack = 200,  // "next chunk, please"
};

// What goes over the socket: 24 bytes, no pointers.
struct Frame {
    uint32_t op = 0;
    uint32_t flags = 0;  // kMoreChunks
    uint64_t total = 0;  // the whole message's size
    uint64_t chunk = 0;  // bytes of it in the sender's area now
};
inline constexpr uint32_t kMoreChunks = 1u;

// The link failed: the peer is gone, late, or broke the framing. what() says which.
class ChannelError : public std::runtime_error {
  public:
    enum class Kind { closed, timeout, protocol, forbidden_call, io };
    ChannelError(Kind kind, const std::string& what, int64_t detail = 0)
        : std::runtime_error(what), kind_(kind), detail_(detail) {}
    Kind kind() const { return kind_; }
    // forbidden_call: the system call's number.
    int64_t detail() const { return detail_; }

  private:
    Kind kind_;
    int64_t detail_;
};

// The shared memory, mapped: the two areas back to back.
struct SharedAreas {
    uint8_t* base = nullptr;
    size_t request_size = 0;
    size_t reply_size = 0;
    std::span<uint8_t> requests() const { return {base, request_size}; }
    std::span<uint8_t> replies() const { return {base + request_size, reply_size}; }
    size_t total() const { return request_size + reply_size; }
};

// One end of the link. The host's end copies what it receives (`copy_received`); the
// runner's end may read a single-chunk request in place.
class Channel {
  public:
    enum class Side { host, runner };
    Channel(int socket_fd, SharedAreas areas, Side side);
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    // Sends one message; waits for acknowledgements of all but the last chunk.
    // deadline: steady_clock::time_point::max() for none.
    void send(Op op, std::span<const uint8_t> payload,
              std::chrono::steady_clock::time_point deadline);

    struct Message {
        Op op{};
        // The payload: in place in the shared memory (runner side, one chunk), or in
        // `owned`. Valid until the next receive.
        std::span<const uint8_t> payload;
        std::vector<uint8_t> owned;
    };
    // Receives one message, at most `limit` bytes. A forbidden_call frame from the runner
    // is thrown as ChannelError::forbidden_call.
    Message receive(std::chrono::steady_clock::time_point deadline, uint64_t limit);

    int socket_fd() const { return fd_; }

  private:
    void send_frame(const Frame& frame, std::chrono::steady_clock::time_point deadline);
    Frame receive_frame(std::chrono::steady_clock::time_point deadline);
    // One frame if one is waiting; false when none is. Throws as receive_frame does.
    bool try_receive(Frame& frame);
    std::span<uint8_t> my_area() const;
    std::span<const uint8_t> peer_area() const;

    int fd_;
    SharedAreas areas_;
    Side side_;
};

// Little-endian fields, as the two ends of one machine write them: a message is a run of
// these. The reader checks every length against what is left and throws ChannelError
// (protocol) on a short or oversized field.
class MessageWriter {
  public:
    MessageWriter& u8(uint8_t value);
    MessageWriter& u32(uint32_t value);
    MessageWriter& u64(uint64_t value);
    MessageWriter& i64(int64_t value);
    MessageWriter& f64(double value);
    MessageWriter& bytes(std::span<const uint8_t> value);
    MessageWriter& text(std::string_view value);
    const std::vector<uint8_t>& data() const { return data_; }
    std::vector<uint8_t>& data() { return data_; }

  private:
    void raw(const void* data, size_t size);
    std::vector<uint8_t> data_;
};

class MessageReader {
  public:
    explicit MessageReader(std::span<const uint8_t> data) : data_(data) {}
    uint8_t u8();
    uint32_t u32();
    uint64_t u64();
    int64_t i64();
    double f64();
    // A field of at most `limit` bytes, in place.
    std::span<const uint8_t> bytes(uint64_t limit);
    std::string text(uint64_t limit);
    bool done() const { return at_ == data_.size(); }
    // The message must end here.
    void finish() const;

  private:
    void raw(void* out, size_t size);
    std::span<const uint8_t> data_;
    size_t at_ = 0;
};

}  // namespace arbiter::host::isolation
