// The serve protocol: what a relay and `arbiter serve` say to each other on one
// connection, over a Unix socket or TCP. docs/serve-protocol.md describes it for relays
// written in other languages.
//
// Each direction is an event log (docs/event-file-format.md) as a stream: the 16-byte
// ARBEVLOG header, then frames shaped exactly like its records (magic, length, payload
// CRC, header CRC, payload). The magic names the frame's kind:
//
//   relay → host:  ARBH hello (JSON)   ARBR batch (one EventBatch)   ARBS sync (JSON)
//   host → relay:  ARBW welcome (JSON) ARBA assessment (JSON)        ARBE error (JSON)
//                  ARBS sync reply (JSON)
//
// Batches are event-log records byte for byte, so a recorded match streams to the Unix
// socket unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace arbiter::host::wire {

enum class FrameKind : uint8_t { hello, batch, sync, welcome, assessment, error };

// The four bytes that open a frame of this kind.
const char* magic_of(FrameKind kind);
// The kind a frame's magic names, or nothing for an unknown magic.
std::optional<FrameKind> kind_of(std::span<const uint8_t, 4> magic);

// The 16 bytes that open each direction of a connection (the event log's file header).
std::vector<uint8_t> stream_header();
// Appends one frame of `kind` carrying `payload`.
void append_frame(std::vector<uint8_t>& out, FrameKind kind, std::span<const uint8_t> payload);
void append_frame(std::vector<uint8_t>& out, FrameKind kind, std::string_view payload);

struct Frame {
    FrameKind kind = FrameKind::batch;
    std::vector<uint8_t> payload;
    uint64_t offset = 0;  // where its header began in the stream
};

// What the decoder found next: a frame, or a problem with the stream. A problem is
// `fatal` only when the stream does not begin with the header, which means the peer
// does not speak this protocol at all; after any other problem decoding goes on with
// the next good frame.
struct Decoded {
    std::optional<Frame> frame;
    std::string problem;
    uint64_t offset = 0;
    bool fatal = false;
};

// Cuts a byte stream into frames as bytes arrive, however they are split. Each frame
// is checked before it is handed on: a damaged header is reported and the decoder looks
// for the next frame whose header checksum holds; a frame longer than the cap is
// reported and passed over (its header checksum vouches for its length) without being
// buffered; a payload checksum mismatch or an unknown kind is reported and dropped.
class FrameDecoder {
  public:
    explicit FrameDecoder(uint32_t max_payload);

    void feed(std::span<const uint8_t> bytes);
    // A new cap for the frames that follow (the serve loop raises it after the hello).
    void set_max_payload(uint32_t max_payload) { max_payload_ = max_payload; }
    // The next frame or problem, or nothing until more bytes arrive.
    std::optional<Decoded> next();

    // Bytes held of a frame not yet complete (for reporting a peer that left mid-message).
    size_t pending_bytes() const { return buffer_.size() - start_; }
    uint64_t bytes_fed() const { return fed_; }

  private:
    size_t available() const { return buffer_.size() - start_; }
    const uint8_t* at(size_t index) const { return buffer_.data() + start_ + index; }
    void consume(size_t count);
    bool header_valid_at(size_t index) const;
    // After damage: drops bytes up to the next plausible frame header.
    void resync();

    uint32_t max_payload_;
    std::vector<uint8_t> buffer_;
    size_t start_ = 0;     // first unread byte of buffer_
    uint64_t offset_ = 0;  // stream offset of buffer_[start_]
    uint64_t fed_ = 0;
    bool header_checked_ = false;
    bool fatal_ = false;
    bool resyncing_ = false;
    uint64_t skip_ = 0;  // payload bytes of an oversized frame still to pass over
};

}  // namespace arbiter::host::wire
