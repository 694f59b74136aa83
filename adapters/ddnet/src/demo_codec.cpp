#include "demo_codec.hpp"

#include <algorithm>

#include "huffman.hpp"
#include "varint.hpp"

namespace arbiter::ddnet {

std::optional<std::vector<int32_t>> decode_chunk_payload(std::span<const uint8_t> payload) {
    auto packed = Huffman::instance().decode(payload, kMaxChunkBytes);
    if (!packed) return std::nullopt;
    return read_varints(*packed, kMaxChunkBytes / 4);
}

std::vector<uint8_t> encode_chunk_payload(std::span<const int32_t> ints) {
    const std::vector<uint8_t> packed = write_varints(ints);
    return Huffman::instance().encode(packed);
}

std::string ints_to_string(std::span<const int32_t> ints) {
    std::string out;
    for (size_t i = 0; i < ints.size(); ++i) {
        const auto u = static_cast<uint32_t>(ints[i]);
        for (int shift = 24; shift >= 0; shift -= 8) {
            if (i + 1 == ints.size() && shift == 0) return out;  // the terminator's place
            const auto c = static_cast<char>(static_cast<uint8_t>(((u >> shift) & 0xff) - 128));
            if (c == '\0') return out;
            out.push_back(c);
        }
    }
    return out;
}

std::vector<int32_t> string_to_ints(const std::string& text, size_t count) {
    std::vector<int32_t> out(count, 0);
    for (size_t i = 0; i < count; ++i) {
        uint32_t v = 0;
        for (size_t c = 0; c < 4; ++c) {
            const size_t at = i * 4 + c;
            const auto ch = at < text.size() ? static_cast<uint8_t>(text[at]) : uint8_t{0};
            v = (v << 8) | static_cast<uint8_t>(ch + 128);
        }
        out[i] = static_cast<int32_t>(v);
    }
    if (count > 0)
        out[count - 1] = static_cast<int32_t>(static_cast<uint32_t>(out[count - 1]) & 0xffffff00u);
    return out;
}

namespace {

void put_be32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
    for (size_t i = 0; i < 4; ++i)
        out[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

void put_text(std::vector<uint8_t>& out, size_t at, size_t field, const std::string& text) {
    std::copy_n(text.begin(), std::min(text.size(), field - 1),
                out.begin() + static_cast<ptrdiff_t>(at));
}

}  // namespace

DemoWriter::DemoWriter(int version, const std::string& map_name, const std::string& net_version)
    : version_(version) {
    bytes_.assign(kHeaderBytes, 0);
    const char magic[] = "TWDEMO";
    std::copy_n(magic, 7, bytes_.begin());
    bytes_[7] = static_cast<uint8_t>(version);
    put_text(bytes_, 8, 64, net_version);
    put_text(bytes_, 72, 64, map_name);
    put_be32(bytes_, 136, 0);  // no map data
    put_be32(bytes_, 140, 0x12345678);
    put_text(bytes_, 144, 8, "client");
    put_be32(bytes_, 152, 0);
    put_text(bytes_, 156, 20, "2026-01-01_00-00-00");
    if (version >= 4) bytes_.resize(bytes_.size() + kMarkersBytes, 0);
    if (version >= 6) {
        bytes_.insert(bytes_.end(), std::begin(kSha256Extension), std::end(kSha256Extension));
        bytes_.resize(bytes_.size() + 32, 0xab);
    }
}

void DemoWriter::tick(int32_t tick, bool keyframe) {
    const int32_t step = tick - last_tick_;
    if (version_ >= 5 && last_tick_ >= 0 && !keyframe && step >= 0 && step <= 0x1f) {
        bytes_.push_back(static_cast<uint8_t>(kTickMarker | kTickCompressed | step));
    } else if (version_ < 5 && last_tick_ >= 0 && !keyframe && step > 0 && step <= 0x3f) {
        bytes_.push_back(static_cast<uint8_t>(kTickMarker | step));
    } else {
        bytes_.push_back(static_cast<uint8_t>(kTickMarker | (keyframe ? kKeyframe : 0)));
        const size_t at = bytes_.size();
        bytes_.resize(at + 4);
        put_be32(bytes_, at, static_cast<uint32_t>(tick));
    }
    last_tick_ = tick;
}

void DemoWriter::snapshot(const Snapshot& snapshot) {
    const std::vector<int32_t> ints = serialize_snapshot(snapshot);
    chunk(ChunkType::snapshot, ints);
}

void DemoWriter::delta(const Snapshot& from, const Snapshot& to) {
    const std::vector<int32_t> ints = make_delta(from, to);
    chunk(ChunkType::delta, ints);
}

void DemoWriter::message(std::span<const uint8_t> message_bytes) {
    const std::vector<int32_t> ints = bytes_to_ints(message_bytes);
    chunk(ChunkType::message, ints);
}

void DemoWriter::chunk(ChunkType type, std::span<const int32_t> ints) {
    const std::vector<uint8_t> payload = encode_chunk_payload(ints);
    raw_chunk(type, payload);
}

void DemoWriter::raw_chunk(ChunkType type, std::span<const uint8_t> payload) {
    const auto head = static_cast<uint8_t>((static_cast<uint8_t>(type) & 3) << 5);
    const size_t size = payload.size();
    if (size < 30) {
        bytes_.push_back(static_cast<uint8_t>(head | size));
    } else if (size < 256) {
        bytes_.push_back(head | 30);
        bytes_.push_back(static_cast<uint8_t>(size));
    } else {
        bytes_.push_back(head | 31);
        bytes_.push_back(static_cast<uint8_t>(size & 0xff));
        bytes_.push_back(static_cast<uint8_t>(size >> 8));
    }
    bytes_.insert(bytes_.end(), payload.begin(), payload.end());
}

}  // namespace arbiter::ddnet
