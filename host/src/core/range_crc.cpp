#include "arbiter/host/range_crc.hpp"

#include "arbiter/host/event_file.hpp"

#include <algorithm>

#include <zlib.h>

namespace arbiter::host {

namespace {

// The CRC of A||B from crc(A), crc(B) and |B|.
uint32_t combine(uint32_t first, uint32_t second, uint64_t second_length) {
    return static_cast<uint32_t>(
        ::crc32_combine64(first, second, static_cast<z_off64_t>(second_length)));
}

}  // namespace

uint32_t RangeCrc::direct_crc(std::span<const uint8_t> bytes) {
    hashed_ += bytes.size();
    return crc32(bytes);
}

uint32_t RangeCrc::running_to(uint64_t offset) {
    if (checkpoints_.empty()) {
        base_ = first_ = offset;
        checkpoints_.push_back(0);  // the CRC of nothing
        return 0;
    }
    while (first_ + (checkpoints_.size() - 1) * kStride < offset) {
        const uint64_t at = first_ + (checkpoints_.size() - 1) * kStride;
        hashed_ += kStride;
        checkpoints_.push_back(static_cast<uint32_t>(
            ::crc32(checkpoints_.back(), bytes_.data() + at, static_cast<uInt>(kStride))));
    }
    return checkpoints_[(offset - first_) / kStride];
}

uint32_t RangeCrc::of(uint64_t begin, uint64_t end) {
    uint64_t inner_begin = (begin + kStride - 1) / kStride * kStride;
    const uint64_t inner_end = end / kStride * kStride;
    // Checkpoints before first_ were forgotten; start from the earliest one kept.
    if (!checkpoints_.empty() && inner_begin < first_) inner_begin = first_;
    if (inner_begin + kStride > inner_end) return direct_crc(bytes_.subspan(begin, end - begin));
    const uint32_t head = direct_crc(bytes_.subspan(begin, inner_begin - begin));
    const uint32_t at_begin = running_to(inner_begin);
    const uint32_t at_end = running_to(inner_end);
    // running(end) is running(begin) shifted past the middle, xor the middle's own CRC.
    const uint32_t middle = at_end ^ combine(at_begin, 0, inner_end - inner_begin);
    const uint32_t tail = direct_crc(bytes_.subspan(inner_end, end - inner_end));
    return combine(combine(head, middle, inner_end - inner_begin), tail, end - inner_end);
}

void RangeCrc::forget_before(uint64_t offset) {
    while (checkpoints_.size() > 1 && first_ + kStride <= offset) {
        checkpoints_.pop_front();
        first_ += kStride;
    }
}

}  // namespace arbiter::host
