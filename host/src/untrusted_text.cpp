#include "arbiter/host/untrusted_text.hpp"

#include <fmt/format.h>

namespace arbiter::host {

std::optional<size_t> first_invalid_utf8(std::string_view text) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const size_t size = text.size();
    size_t i = 0;
    while (i < size) {
        const unsigned char lead = bytes[i];
        if (lead < 0x80) {
            ++i;
            continue;
        }
        // The lead byte fixes the length and the range the second byte may take; the
        // narrowed ranges are what exclude overlong forms, surrogates and > U+10FFFF.
        size_t length = 0;
        unsigned char low = 0x80, high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) low = 0xA0;
            if (lead == 0xED) high = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) low = 0x90;
            if (lead == 0xF4) high = 0x8F;
        } else {
            return i;
        }
        if (size - i < length) return i;
        if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
        for (size_t k = 2; k < length; ++k)
            if ((bytes[i + k] & 0xC0) != 0x80) return i;
        i += length;
    }
    return std::nullopt;
}

std::string to_valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    while (!bytes.empty()) {
        const auto bad = first_invalid_utf8(bytes);
        out.append(bytes.substr(0, bad.value_or(bytes.size())));
        if (!bad) break;
        out += "\xEF\xBF\xBD";
        bytes.remove_prefix(*bad + 1);
    }
    return out;
}

std::string escape_for_message(std::string_view bytes, size_t max_bytes) {
    std::string out;
    const size_t shown = std::min(bytes.size(), max_bytes);
    out.reserve(shown + 8);
    for (size_t i = 0; i < shown;) {
        const auto byte = static_cast<unsigned char>(bytes[i]);
        if (byte >= 0x80) {
            // Whole, well-formed UTF-8 characters are kept, so that names stay readable.
            const size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
            if (i + length <= shown && !first_invalid_utf8(bytes.substr(i, length))) {
                out.append(bytes.substr(i, length));
                i += length;
                continue;
            }
        }
        if (byte >= 0x20 && byte < 0x7F && byte != '\\')
            out.push_back(static_cast<char>(byte));
        else if (byte == '\\')
            out += "\\\\";
        else
            out += fmt::format("\\x{:02x}", byte);
        ++i;
    }
    if (shown < bytes.size()) out += "...";
    return out;
}

namespace {

// The deepest nesting in `text`, counting brackets outside strings. It stops counting
// past `limit`, so a hostile document costs one linear pass and no stack.
size_t nesting_depth(std::string_view text, size_t limit) {
    size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

}  // namespace

UntrustedJson parse_untrusted_json(std::string_view text, size_t max_bytes, size_t max_depth) {
    UntrustedJson result;
    if (text.size() > max_bytes) {
        result.problem =
            fmt::format("the JSON is {} bytes, over the limit of {}", text.size(), max_bytes);
        return result;
    }
    if (nesting_depth(text, max_depth) > max_depth) {
        result.problem = fmt::format("the JSON is nested deeper than {} levels", max_depth);
        return result;
    }
    result.value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (result.value.is_discarded()) {
        result.value = nullptr;
        result.problem = "not valid JSON (or a string in it is not UTF-8)";
    }
    return result;
}

std::string dump_json(const nlohmann::json& value, int indent) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

StringMember string_member(const nlohmann::json& object, std::string_view key) {
    StringMember member;
    if (!object.is_object()) return member;
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return member;
    if (!it->is_string()) {
        member.problem = fmt::format("\"{}\" must be a string, not {}", escape_for_message(key),
                                     it->type_name());
        return member;
    }
    member.text = it->get<std::string>();
    return member;
}

}  // namespace arbiter::host
