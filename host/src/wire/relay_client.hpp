// The relay's side of the serve protocol (arbiter/host/wire.hpp), for relays written in
// C++, for the tests and for the benchmarks: connect, say hello, stream batches, and
// read the assessments the host sends back.
//
// Sending never deadlocks against the host's replies: while a send waits for room, it
// reads whatever the host has sent and keeps it for received().
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arbiter/host/wire.hpp"

namespace arbiter::host {

class RelayClient {
  public:
    // Connects and sends the stream header. Throws std::runtime_error naming the address.
    static RelayClient connect_unix(const std::string& path);
    static RelayClient connect_tcp(const std::string& address);  // "127.0.0.1:7878"
    ~RelayClient();
    RelayClient(RelayClient&& other) noexcept;
    RelayClient& operator=(RelayClient&& other) noexcept;

    // Sends a hello and waits for the welcome. Returns the welcome's JSON; throws with the
    // host's error (a wrong token, say) when it refuses.
    std::string hello(const std::string& relay, const std::string& token = "",
                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // One EventBatch as a frame. Blocks while the host pushes back.
    void send_batch(std::span<const uint8_t> batch);
    // Any bytes at all (the tests use it for damaged frames).
    void send_raw(std::span<const uint8_t> bytes);
    // Sends a sync and waits for its answer: once it comes, every frame sent before it
    // has been processed. Returns the answer's JSON ("batches", "events", "refused" this
    // connection has had processed); throws on timeout or when the host hangs up.
    std::string sync(uint64_t id, std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // The next frame the host sent; nothing on timeout or once the host has hung up.
    std::optional<wire::Frame> read_frame(std::chrono::milliseconds timeout);
    // Every frame the host has sent that was not yet taken (read while sending or
    // waiting for a sync), in order.
    std::vector<wire::Frame> take_received();
    // No more bytes from this side (the host sees the end of the stream).
    void shutdown_write();
    bool host_hung_up() const { return hung_up_; }

  private:
    explicit RelayClient(int fd);
    void send_all(std::span<const uint8_t> bytes);
    // Reads what is there (waiting up to timeout for the first byte); false at the end.
    bool read_some(std::chrono::milliseconds timeout);

    int fd_ = -1;
    wire::FrameDecoder decoder_{64u * 1024u * 1024u};
    std::deque<wire::Frame> inbox_;  // decoded, not yet taken
    bool hung_up_ = false;
};

}  // namespace arbiter::host
