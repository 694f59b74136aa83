#include "arbiter/host/untrusted_text.hpp"

#include <vector>

#include <fmt/format.h>

namespace arbiter::host {

namespace {

// The code point of one well-formed UTF-8 character.
char32_t decode_utf8(std::string_view character) {
    const auto* b = reinterpret_cast<const unsigned char*>(character.data());
    switch (character.size()) {
        case 1:
            return b[0];
        case 2:
            return (char32_t(b[0] & 0x1F) << 6) | (b[1] & 0x3F);
        case 3:
            return (char32_t(b[0] & 0x0F) << 12) | (char32_t(b[1] & 0x3F) << 6) | (b[2] & 0x3F);
        default:
            return (char32_t(b[0] & 0x07) << 18) | (char32_t(b[1] & 0x3F) << 12) |
                   (char32_t(b[2] & 0x3F) << 6) | (b[3] & 0x3F);
    }
}

std::string code_point_escape(char32_t code) {
    return fmt::format("\\u{{{:04X}}}", static_cast<uint32_t>(code));
}

bool is_control(char32_t code) {
    return code < 0x20 || (code >= 0x7F && code <= 0x9F);
}

bool in(char32_t code, char32_t first, char32_t last) {
    return code >= first && code <= last;
}

// Characters that show as nothing, as a blank that is not ASCII's space, or that reorder
// or reshape the text around them (Unicode's format characters, bidi controls, fillers,
// variation selectors, tags).
bool hides_or_moves_text(char32_t c) {
    return c == 0x00A0 || c == 0x00AD || c == 0x034F || c == 0x061C || c == 0x115F ||
           c == 0x1160 || c == 0x1680 || in(c, 0x17B4, 0x17B5) || in(c, 0x180B, 0x180F) ||
           in(c, 0x2000, 0x200F) || in(c, 0x2028, 0x202F) || in(c, 0x205F, 0x206F) ||
           c == 0x3000 || c == 0x3164 || in(c, 0xFE00, 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
           in(c, 0xFFF9, 0xFFFB) || in(c, 0x1D173, 0x1D17A) || in(c, 0xE0000, 0xE0FFF);
}

// Letters that copy ASCII's in another form: fullwidth, mathematical, letter-like symbols.
bool copies_ascii(char32_t c) {
    return in(c, 0xFF01, 0xFF5E) || in(c, 0x1D400, 0x1D7FF) || in(c, 0x2100, 0x214F) ||
           in(c, 0x2460, 0x24FF);
}

// The scripts whose letters pass for each other's; others (Han, kana, Hangul, ...) are
// not counted, so names that mix them with Latin as people write them are not marked.
enum class Script { none, latin, greek, cyrillic, armenian, hebrew, arabic, georgian, cherokee };

Script script_of(char32_t c) {
    if (in(c, 'A', 'Z') || in(c, 'a', 'z') || c == 0xAA || c == 0xBA ||
        (in(c, 0xC0, 0x24F) && c != 0xD7 && c != 0xF7) || in(c, 0x250, 0x2AF) ||
        in(c, 0x1D00, 0x1D7F) || in(c, 0x1E00, 0x1EFF) || in(c, 0x2C60, 0x2C7F) ||
        in(c, 0xA720, 0xA7FF) || in(c, 0xAB30, 0xAB6F))
        return Script::latin;
    if (in(c, 0x370, 0x3FF) || in(c, 0x1F00, 0x1FFF) || in(c, 0x2C80, 0x2CFF))
        return Script::greek;  // with Coptic, which borrows its letters
    if (in(c, 0x400, 0x52F) || in(c, 0x1C80, 0x1C8F) || in(c, 0x2DE0, 0x2DFF) ||
        in(c, 0xA640, 0xA69F))
        return Script::cyrillic;
    if (in(c, 0x531, 0x58F)) return Script::armenian;
    if (in(c, 0x591, 0x5FF)) return Script::hebrew;
    if (in(c, 0x600, 0x6FF) || in(c, 0x750, 0x77F)) return Script::arabic;
    if (in(c, 0x10A0, 0x10FF)) return Script::georgian;
    if (in(c, 0x13A0, 0x13FF) || in(c, 0xAB70, 0xABBF)) return Script::cherokee;
    return Script::none;
}

// Calls `each(code, bytes)` for every character of `text`, or `each(-1, byte)` for a byte
// that is not part of well-formed UTF-8, while `each` returns true.
template <typename Each>
void for_each_character(std::string_view text, Each each) {
    while (!text.empty()) {
        const auto byte = static_cast<unsigned char>(text[0]);
        const size_t length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
        const bool whole = length <= text.size() && !first_invalid_utf8(text.substr(0, length));
        const std::string_view character = text.substr(0, whole ? length : 1);
        if (!each(whole ? static_cast<int64_t>(decode_utf8(character)) : int64_t{-1}, character))
            return;
        text.remove_prefix(character.size());
    }
}

// How many characters an escape or a character takes on screen.
size_t width_of(const std::string& piece) {
    return piece.size() > 1 && piece[0] == '\\' ? piece.size() : 1;
}

}  // namespace

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

std::string to_valid_utf8(std::string_view bytes, size_t max_bytes) {
    std::string out = to_valid_utf8(bytes);
    if (out.size() <= max_bytes) return out;
    size_t cut = max_bytes;
    // Back to the first byte of the character the bound falls in (continuation bytes are
    // 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
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
            // Those that are control characters or hide or move text are escaped, so
            // that a log line read on a terminal shows what is there.
            if (i + length <= shown && !first_invalid_utf8(bytes.substr(i, length))) {
                const char32_t code = decode_utf8(bytes.substr(i, length));
                if (is_control(code) || hides_or_moves_text(code))
                    out += code_point_escape(code);
                else
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

ShownName show_name(std::string_view bytes, size_t max_chars) {
    ShownName shown;
    // First the whole name: which scripts its letters come from.
    Script first_script = Script::none;
    bool mixed = false;
    for_each_character(bytes, [&](int64_t code, std::string_view) {
        const Script script = code < 0 ? Script::none : script_of(static_cast<char32_t>(code));
        if (first_script == Script::none) first_script = script;
        mixed = script != Script::none && script != first_script;
        return !mixed;
    });
    shown.look_alike = mixed;

    // Then each character as it is to be shown, up to one past the room there is: enough to
    // know whether the name is cut, however long it is.
    const size_t leading_spaces = std::min(bytes.find_first_not_of(' '), bytes.size());
    const size_t trailing_from = bytes.find_last_not_of(' ') + 1;  // 0 when all spaces
    std::vector<std::string> pieces;
    size_t width = 0, offset = 0;
    for_each_character(bytes, [&](int64_t code, std::string_view character) {
        const bool at_an_end = offset < leading_spaces || offset >= trailing_from;
        offset += character.size();
        const auto c = static_cast<char32_t>(code);
        if (code < 0) {
            pieces.push_back(fmt::format("\\x{:02x}", static_cast<unsigned char>(character[0])));
        } else if (c == '\\') {
            pieces.emplace_back("\\\\");
        } else if (is_control(c) || (c == ' ' && at_an_end)) {
            pieces.push_back(c < 0x80 ? fmt::format("\\x{:02x}", static_cast<unsigned>(c))
                                      : code_point_escape(c));
        } else if (c < 0x80) {
            pieces.emplace_back(character);
        } else {
            const bool hidden = hides_or_moves_text(c), copy = copies_ascii(c);
            shown.look_alike = shown.look_alike || hidden || copy;
            if (hidden || copy || (mixed && script_of(c) != Script::none) ||
                character == kLookAlikeMark || character == kCutMark)
                pieces.push_back(code_point_escape(c));
            else
                pieces.emplace_back(character);
        }
        width += width_of(pieces.back());
        return width <= max_chars;
    });
    // A look-alike found past the room shown still marks the name.
    if (!shown.look_alike)
        for_each_character(bytes.substr(offset), [&](int64_t code, std::string_view) {
            const auto c = static_cast<char32_t>(code);
            shown.look_alike = code >= 0 && (hides_or_moves_text(c) || copies_ascii(c));
            return !shown.look_alike;
        });

    // The marks take room too: the look-alike one before, the cut one after.
    size_t room = max_chars - std::min<size_t>(max_chars, shown.look_alike ? 1 : 0);
    shown.cut = offset < bytes.size() || width > room;
    if (shown.cut && room > 0) --room;
    if (shown.look_alike) shown.text = std::string(kLookAlikeMark);
    for (const auto& piece : pieces) {
        if (shown.cut && width_of(piece) > room) break;
        if (shown.cut) room -= width_of(piece);
        shown.text += piece;
    }
    if (shown.cut) shown.text += kCutMark;
    return shown;
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
