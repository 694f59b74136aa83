#include "varint.hpp"

namespace arbiter::ddnet {

std::optional<int32_t> read_varint(std::span<const uint8_t> in, size_t& pos) {
    if (pos >= in.size()) return std::nullopt;
    uint8_t b = in[pos++];
    const bool negative = (b & 0x40) != 0;
    uint32_t value = b & 0x3f;
    // After the first byte: 7, 7, 7 and 4 more bits (32 in all); bit 7 asks for another.
    static constexpr uint32_t kMasks[] = {0x7f, 0x7f, 0x7f, 0x0f};
    static constexpr unsigned kShifts[] = {6, 13, 20, 27};
    for (size_t i = 0; i < 4 && (b & 0x80); ++i) {
        if (pos >= in.size()) return std::nullopt;
        b = in[pos++];
        value |= (b & kMasks[i]) << kShifts[i];
    }
    if (negative) value = ~value;
    return static_cast<int32_t>(value);
}

void write_varint(std::vector<uint8_t>& out, int32_t value) {
    uint32_t v = static_cast<uint32_t>(value);
    uint8_t first = 0;
    if (value < 0) {
        first = 0x40;
        v = ~v;
    }
    first |= static_cast<uint8_t>(v & 0x3f);
    v >>= 6;
    if (v == 0) {
        out.push_back(first);
        return;
    }
    out.push_back(first | 0x80);
    for (;;) {
        uint8_t b = static_cast<uint8_t>(v & 0x7f);
        v >>= 7;
        if (v == 0) {
            out.push_back(b);
            return;
        }
        out.push_back(b | 0x80);
    }
}

std::optional<std::vector<int32_t>> read_varints(std::span<const uint8_t> in, size_t max_ints) {
    std::vector<int32_t> out;
    size_t pos = 0;
    while (pos < in.size()) {
        if (out.size() >= max_ints) return std::nullopt;
        auto value = read_varint(in, pos);
        if (!value) return std::nullopt;
        out.push_back(*value);
    }
    return out;
}

std::vector<uint8_t> write_varints(std::span<const int32_t> values) {
    std::vector<uint8_t> out;
    for (int32_t v : values)
        write_varint(out, v);
    return out;
}

std::vector<uint8_t> ints_to_bytes(std::span<const int32_t> values) {
    std::vector<uint8_t> out;
    out.reserve(values.size() * 4);
    for (int32_t v : values) {
        const auto u = static_cast<uint32_t>(v);
        for (unsigned i = 0; i < 4; ++i)
            out.push_back(static_cast<uint8_t>(u >> (8 * i)));
    }
    return out;
}

std::vector<int32_t> bytes_to_ints(std::span<const uint8_t> bytes) {
    std::vector<int32_t> out((bytes.size() + 3) / 4, 0);
    for (size_t i = 0; i < bytes.size(); ++i) {
        auto u = static_cast<uint32_t>(out[i / 4]);
        u |= static_cast<uint32_t>(bytes[i]) << (8 * (i % 4));
        out[i / 4] = static_cast<int32_t>(u);
    }
    return out;
}

}  // namespace arbiter::ddnet
