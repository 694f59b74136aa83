#include "arbiter/host/wire.hpp"

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::wire {

namespace {

struct KindMagic {
    FrameKind kind;
    char magic[5];
};
constexpr std::array<KindMagic, 6> kKinds = {{{FrameKind::hello, "ARBH"},
                                              {FrameKind::batch, "ARBR"},
                                              {FrameKind::sync, "ARBS"},
                                              {FrameKind::welcome, "ARBW"},
                                              {FrameKind::assessment, "ARBA"},
                                              {FrameKind::error, "ARBE"}}};

Decoded problem_at(uint64_t offset, std::string problem, bool fatal = false) {
    Decoded decoded;
    decoded.problem = std::move(problem);
    decoded.offset = offset;
    decoded.fatal = fatal;
    return decoded;
}

}  // namespace

const char* magic_of(FrameKind kind) {
    for (const auto& entry : kKinds)
        if (entry.kind == kind) return entry.magic;
    return "????";
}

std::optional<FrameKind> kind_of(std::span<const uint8_t, 4> magic) {
    for (const auto& entry : kKinds)
        if (std::memcmp(entry.magic, magic.data(), 4) == 0) return entry.kind;
    return std::nullopt;
}

std::vector<uint8_t> stream_header() {
    return encode_file_header();
}

void append_frame(std::vector<uint8_t>& out, FrameKind kind, std::span<const uint8_t> payload) {
    const auto header = encode_record_header(payload, magic_of(kind));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), payload.begin(), payload.end());
}

void append_frame(std::vector<uint8_t>& out, FrameKind kind, std::string_view payload) {
    append_frame(out, kind,
                 std::span(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
}

FrameDecoder::FrameDecoder(uint32_t max_payload) : max_payload_(max_payload) {}

void FrameDecoder::feed(std::span<const uint8_t> bytes) {
    fed_ += bytes.size();
    // Compact before growing, so a long stream never holds more than about one frame.
    if (start_ > 0 && (start_ >= buffer_.size() / 2 || start_ > (1u << 20))) {
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
        start_ = 0;
    }
    if (skip_ > 0) {
        const size_t passed = static_cast<size_t>(std::min<uint64_t>(skip_, bytes.size()));
        skip_ -= passed;
        offset_ += passed;
        bytes = bytes.subspan(passed);
    }
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void FrameDecoder::consume(size_t count) {
    start_ += count;
    offset_ += count;
}

bool FrameDecoder::header_valid_at(size_t index) const {
    const uint8_t* header = at(index);
    return kind_of(std::span<const uint8_t, 4>(header, 4)).has_value() &&
           read_u32_le(header + 12) == crc32({header, 12});
}

void FrameDecoder::resync() {
    size_t index = 0;
    while (index + kRecordHeaderSize <= available()) {
        if (*at(index) == 'A' && header_valid_at(index)) {
            consume(index);
            resyncing_ = false;
            return;
        }
        ++index;
    }
    consume(index);  // keep the tail: it may be the start of the next header
}

std::optional<Decoded> FrameDecoder::next() {
    if (fatal_) return std::nullopt;
    if (!header_checked_) {
        if (available() < kEventFileHeaderSize) return std::nullopt;
        header_checked_ = true;
        const uint8_t* header = at(0);
        const bool magic_ok = std::memcmp(header, kEventFileMagic, sizeof kEventFileMagic) == 0;
        const uint16_t version = static_cast<uint16_t>(header[8] | header[9] << 8);
        if (!magic_ok || version != kEventFileVersion) {
            fatal_ = true;
            return problem_at(
                0,
                magic_ok ? fmt::format("stream format version {} is not supported (this host "
                                       "speaks version {})",
                                       version, kEventFileVersion)
                         : "the stream does not begin with the ARBEVLOG header: not an Arbiter "
                           "event stream",
                true);
        }
        consume(kEventFileHeaderSize);
    }
    while (true) {
        if (resyncing_) {
            resync();
            if (resyncing_) return std::nullopt;
        }
        if (available() < kRecordHeaderSize) return std::nullopt;
        const uint8_t* header = at(0);
        const uint64_t offset = offset_;
        const auto kind = kind_of(std::span<const uint8_t, 4>(header, 4));
        if (read_u32_le(header + 12) != crc32({header, 12})) {
            resyncing_ = true;
            consume(1);
            return problem_at(
                offset, kind ? "frame header checksum mismatch; looking for the next frame"
                             : "no frame magic where a frame should begin; looking for the next "
                               "frame");
        }
        const uint32_t length = read_u32_le(header + 4);
        if (length > max_payload_) {
            consume(kRecordHeaderSize);
            const size_t here = static_cast<size_t>(std::min<uint64_t>(length, available()));
            consume(here);
            skip_ = length - here;
            return problem_at(offset,
                              fmt::format("a message of {} bytes is over the limit of {} bytes; it "
                                          "was passed over",
                                          length, max_payload_));
        }
        if (available() < kRecordHeaderSize + length) return std::nullopt;
        std::span<const uint8_t> payload(at(kRecordHeaderSize), length);
        const bool payload_ok = read_u32_le(header + 8) == crc32(payload);
        Decoded decoded = problem_at(offset, "");
        if (!kind) {
            decoded.problem = fmt::format(
                "unknown frame kind '{}'; the frame was passed over",
                escape_for_message(std::string_view(reinterpret_cast<const char*>(header), 4)));
        } else if (!payload_ok) {
            decoded.problem = "payload checksum mismatch; the frame was dropped";
        } else {
            decoded.frame = Frame{.kind = *kind,
                                  .payload = std::vector<uint8_t>(payload.begin(), payload.end()),
                                  .offset = offset};
        }
        consume(kRecordHeaderSize + length);
        return decoded;
    }
}

}  // namespace arbiter::host::wire
