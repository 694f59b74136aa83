// The CRC-32 of any stretch of a byte span, in time that does not grow with the
// stretch's length. The event-file reader needs it to recover from damage in linear
// time: a hostile file can hold a plausible record header every few bytes, each claiming
// a long payload, and checking each payload from scratch costs length x headers.
//
// How: the running CRC at every kStride bytes ("checkpoints"), each computed once as
// reading moves forward; a stretch's CRC is then two direct CRCs of under kStride bytes
// plus zlib's crc32_combine, which shifts a CRC past any length in logarithmic time
// (CRC-32 is linear over GF(2)).
#pragma once

#include <cstdint>
#include <deque>
#include <span>

namespace arbiter::host {

class RangeCrc {
  public:
    RangeCrc() = default;
    explicit RangeCrc(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    // Reads `bytes` from now on, forgetting what it knew of the old ones.
    void attach(std::span<const uint8_t> bytes) { *this = RangeCrc(bytes); }

    // The CRC-32 (as crc32() in event_file.hpp) of bytes[begin, end); end <= size.
    uint32_t of(uint64_t begin, uint64_t end);

    // No stretch that begins before `offset` will be asked for again: drop what only
    // those would need, so memory follows the reading position, not the file's size.
    void forget_before(uint64_t offset);

    // Bytes read through crc32() so far: the work done, for the tests that bound it.
    uint64_t bytes_hashed() const { return hashed_; }

    static constexpr uint64_t kStride = 64;

  private:
    uint32_t direct_crc(std::span<const uint8_t> bytes);
    // The running CRC from base_ to the checkpoint at `offset` (a multiple of kStride).
    uint32_t running_to(uint64_t offset);

    std::span<const uint8_t> bytes_;
    uint64_t base_ = 0;                 // where the running CRCs start
    uint64_t first_ = 0;                // the offset of checkpoints_.front()
    std::deque<uint32_t> checkpoints_;  // running CRC at first_, first_ + kStride, ...
    uint64_t hashed_ = 0;
};

}  // namespace arbiter::host
