// Text from outside (relay frames, event files, imported traces, control lines) handled
// without trusting it. Three rules, each learnt from a crash: a string is UTF-8 only once
// checked; bytes quoted into a message are escaped, so the message itself stays valid
// text; JSON from outside is parsed with a size and depth cap, and JSON we write never
// throws on a string that slipped through unchecked.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace arbiter::host {

// The index of the first byte that does not belong to well-formed UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF are ill-formed too), or nullopt if all is well.
std::optional<size_t> first_invalid_utf8(std::string_view text);
inline bool is_valid_utf8(std::string_view text) {
    return !first_invalid_utf8(text).has_value();
}

// `bytes` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD, for
// text from an operator's file that must become an event string (which ingest checks).
std::string to_valid_utf8(std::string_view bytes);
// The same, then cut to at most `max_bytes` between two characters (never inside one, which
// would make it invalid again): a name made from a file's or a folder's name that must fit
// a bound, such as a relay's 64 bytes.
std::string to_valid_utf8(std::string_view bytes, size_t max_bytes);

// `bytes` fit for a log line or an error reply: printable ASCII and well-formed UTF-8
// characters as they are; control characters, backslashes and bytes that are not UTF-8
// as \xNN (a backslash as \\); cut at `max_bytes` of input with "..." after.
std::string escape_for_message(std::string_view bytes, size_t max_bytes = 64);

// A name from outside (an account, a relay, a server, a reviewer) made fit to show a
// person, on a terminal or on the review page, so that two names that differ never look
// alike and none acts on what shows it:
// - control characters (C0, DEL, C1: ESC, CR, LF among them), backslashes and bytes that
//   are not UTF-8 are escaped as \xNN or \u{XXXX}, as are characters that show as nothing
//   or move text about (zero-width characters, bidi controls such as U+202E, spaces other
//   than ASCII's), compatibility look-alikes of ASCII (fullwidth, mathematical letters)
//   and spaces at either end;
// - a name that mixes scripts (Latin with Cyrillic, say) has its letters outside ASCII
//   escaped too;
// - a name with any of those look-alike marks starts with kLookAlikeMark; one longer than
//   `max_chars` characters shown is cut, kCutMark after it.
// Both marks are escaped wherever a name itself holds them, so they cannot be forged.
inline constexpr std::string_view kLookAlikeMark = "\xE2\x9A\xA0";  // U+26A0 warning sign
inline constexpr std::string_view kCutMark = "\xE2\x80\xA6";        // U+2026 ellipsis
inline constexpr size_t kShownNameChars = 48;

struct ShownName {
    std::string text;        // the name as it is to be shown, marks included
    bool look_alike = false; // invisible or moving characters, look-alikes, mixed scripts
    bool cut = false;
};
ShownName show_name(std::string_view bytes, size_t max_chars = kShownNameChars);
inline std::string showable_name(std::string_view bytes, size_t max_chars = kShownNameChars) {
    return show_name(bytes, max_chars).text;
}

// Deeper than any document Arbiter reads or writes, far shallower than what exhausts a
// stack when a nested value is written back out or destroyed.
inline constexpr size_t kMaxJsonDepth = 64;

struct UntrustedJson {
    nlohmann::json value;  // when problem is empty
    std::string problem;   // what was wrong, fit to show
    bool ok() const { return problem.empty(); }
};

// Parses `text` as one JSON document, refusing more than `max_bytes` or nesting past
// `max_depth` before the parser sees it; strings must be UTF-8.
UntrustedJson parse_untrusted_json(std::string_view text, size_t max_bytes,
                                   size_t max_depth = kMaxJsonDepth);
inline UntrustedJson parse_untrusted_json(std::span<const uint8_t> bytes, size_t max_bytes,
                                          size_t max_depth = kMaxJsonDepth) {
    return parse_untrusted_json(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), max_bytes,
        max_depth);
}

// `value` written out; a string that is not UTF-8 has its bad bytes replaced with U+FFFD
// rather than throwing (nlohmann's default) from a sink or a reply.
std::string dump_json(const nlohmann::json& value, int indent = -1);

// A member that must be a string if present: its text, nullopt when absent, and a problem
// naming the member when it is there with another type.
struct StringMember {
    std::optional<std::string> text;
    std::string problem;
};
StringMember string_member(const nlohmann::json& object, std::string_view key);

}  // namespace arbiter::host
