// Writing JSON text without a JSON library: the one escaping rule that the SDK's JSON
// writers (evidence, the config schema) share.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace arbiter::detail {

// Appends `text` to `out` as a JSON string, quotes included.
inline void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    for (char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

}  // namespace arbiter::detail
