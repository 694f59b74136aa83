#include "text.hpp"

#include <cstring>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::ddnet::antibot {

std::string bounded_c_string(const char* text, size_t max_bytes) {
    if (!text) return {};
    // strnlen reads no further than max_bytes: the server's buffer may not be terminated.
    return std::string(text, strnlen(text, max_bytes));
}

std::string to_valid_utf8(std::string_view bytes) {
    // The host's cleaning, so that a name comes out the same through the module as through
    // the teehistorian and the demo import (U+FFFD for what is not UTF-8); control
    // characters besides, which DDNet's own names never hold, become '?'.
    std::string out = host::to_valid_utf8(bytes);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

}  // namespace arbiter::ddnet::antibot
