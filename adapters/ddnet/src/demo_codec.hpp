// The pieces of a demo's byte layout that reading and writing share: the chunk header
// bits, a chunk payload's two codings (integers packed as variable-length integers, then
// the Huffman code), and a writer that lays out a demo the way DDNet's recorder does. The
// writer is what the tests and the fuzz seeds build demos with; Arbiter never writes demos
// for DDNet to play.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "snapshot.hpp"

namespace arbiter::ddnet {

// Chunk header byte (DDNet's src/engine/shared/demo.cpp): bit 7 marks a tick marker, whose
// bit 6 marks a keyframe and bit 5 (versions 5 and later) a tick given as a delta in bits
// 0-4 (versions before 5: bits 0-5, when not zero); otherwise bits 5-6 are the chunk type
// and bits 0-4 the size (30: one size byte follows, 31: two, little-endian).
constexpr uint8_t kTickMarker = 0x80;
constexpr uint8_t kKeyframe = 0x40;
constexpr uint8_t kTickCompressed = 0x20;
enum class ChunkType : uint8_t { snapshot = 1, message = 2, delta = 3 };

constexpr size_t kHeaderBytes = 176;          // the fixed header
constexpr size_t kMarkersBytes = 260;         // count and 64 timeline markers (versions 4+)
constexpr size_t kMaxChunkBytes = 64 * 1024;  // coded and decoded
// "demoitem-sha256@ddnet.tw": a SHA-256 of the map follows (versions 6+).
constexpr uint8_t kSha256Extension[16] = {0x6b, 0xe6, 0xda, 0x4a, 0xce, 0xbd, 0x38, 0x0c,
                                          0x9b, 0x5b, 0x12, 0x89, 0xc8, 0x42, 0xd7, 0x80};

// A chunk payload to its integers; nothing when either coding is broken or too large.
std::optional<std::vector<int32_t>> decode_chunk_payload(std::span<const uint8_t> payload);
std::vector<uint8_t> encode_chunk_payload(std::span<const int32_t> ints);

// Teeworlds strings in integers (a ClientInfo's name): four characters an integer, each
// byte offset by 128, most significant first; the last byte is always a terminator.
std::string ints_to_string(std::span<const int32_t> ints);
std::vector<int32_t> string_to_ints(const std::string& text, size_t count);

// Lays out a demo in memory, as DDNet's recorder does.
class DemoWriter {
  public:
    DemoWriter(int version, const std::string& map_name,
               const std::string& net_version = "0.6 626fce9a778df4d4");
    // A tick marker (full, or as a delta from the last when small and not a keyframe).
    void tick(int32_t tick, bool keyframe);
    void snapshot(const Snapshot& snapshot);                           // a keyframe's full snapshot
    void delta(const Snapshot& from, const Snapshot& to);              // a delta chunk
    void message(std::span<const uint8_t> message_bytes);              // a message chunk
    void raw_chunk(ChunkType type, std::span<const uint8_t> payload);  // coded already
    const std::vector<uint8_t>& bytes() const { return bytes_; }

  private:
    void chunk(ChunkType type, std::span<const int32_t> ints);
    int version_;
    int32_t last_tick_ = -1;
    std::vector<uint8_t> bytes_;
};

}  // namespace arbiter::ddnet
