#include "text.hpp"

#include <cstring>

namespace arbiter::ddnet::antibot {

std::string bounded_c_string(const char* text, size_t max_bytes) {
    if (!text) return {};
    // strnlen reads no further than max_bytes: the server's buffer may not be terminated.
    return std::string(text, strnlen(text, max_bytes));
}

namespace {

// The length of the valid UTF-8 sequence starting at `at`, 0 when there is none
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t sequence_length(std::string_view s, size_t at) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char b0 = byte(at);
    size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        length = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        length = 3;
        if (b0 == 0xe0) low = 0xa0;
        if (b0 == 0xed) high = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        length = 4;
        if (b0 == 0xf0) low = 0x90;
        if (b0 == 0xf4) high = 0x8f;
    } else {
        return 0;
    }
    if (at + length > s.size()) return 0;
    if (byte(at + 1) < low || byte(at + 1) > high) return 0;
    for (size_t i = 2; i < length; ++i)
        if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
    return length;
}

}  // namespace

std::string to_valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (size_t at = 0; at < bytes.size();) {
        const unsigned char b = static_cast<unsigned char>(bytes[at]);
        if (b < 0x80) {
            out.push_back(b < 0x20 || b == 0x7f ? '?' : static_cast<char>(b));
            ++at;
            continue;
        }
        const size_t length = sequence_length(bytes, at);
        if (length == 0) {
            out.push_back('?');
            ++at;
        } else {
            out.append(bytes.substr(at, length));
            at += length;
        }
    }
    return out;
}

}  // namespace arbiter::ddnet::antibot
