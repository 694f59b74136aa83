// The rules arbiter_plugin.h sets for an arb_signal, as code: the host drops a signal that
// breaks one, and the SDK's test harness (arbiter/sdk/testing.hpp) refuses it the same way,
// so that a plugin author's test and a running host never judge a signal differently.
//
// Header-only and free of any library (C++17), so that both sides include the one copy.
// signal_problem() returns "" for a signal the host keeps, else why it is dropped.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <arbiter/arbiter_plugin.h>

namespace arbiter::signal_rules {

inline constexpr uint64_t kMaxCodeBytes = 128;
inline constexpr uint64_t kMaxEvidenceBytes = 64 * 1024;
// Deeper evidence is refused: what reads it later (the store, the review page) recurses.
inline constexpr size_t kMaxEvidenceDepth = 64;

namespace detail {

// A strict reader of RFC 8259 JSON that builds nothing: it says whether the text is one
// JSON object, with every string valid UTF-8 (no lone surrogate escape), nested at most
// kMaxEvidenceDepth deep. What it accepts, nlohmann::json (what the host later reads
// evidence with) accepts too: fuzz/fuzz_signal_rules.cpp holds the two side by side.
class JsonObjectReader {
  public:
    explicit JsonObjectReader(std::string_view text) : text_(text) {}

    std::string problem() {
        skip_space();
        if (at_end() || peek() != '{') return "evidence is not a JSON object";
        if (!value(0)) return "evidence is not a JSON object: " + why_;
        skip_space();
        if (!at_end()) return "evidence is not a JSON object: text follows the object";
        return "";
    }

  private:
    bool at_end() const { return pos_ >= text_.size(); }
    unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }
    bool fail(const char* why) {
        why_ = why;
        return false;
    }
    void skip_space() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
            ++pos_;
    }
    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return fail("not valid JSON");
        pos_ += word.size();
        return true;
    }

    bool value(size_t depth) {
        skip_space();
        if (at_end()) return fail("the text ends inside it");
        switch (peek()) {
            case '{':
                return container(depth + 1, '}');
            case '[':
                return container(depth + 1, ']');
            case '"':
                return string();
            case 't':
                return literal("true");
            case 'f':
                return literal("false");
            case 'n':
                return literal("null");
            default:
                return number();
        }
    }

    bool container(size_t depth, char close) {
        if (depth > kMaxEvidenceDepth) return fail("nested deeper than 64 levels");
        const bool object = close == '}';
        ++pos_;
        skip_space();
        if (!at_end() && peek() == static_cast<unsigned char>(close)) {
            ++pos_;
            return true;
        }
        for (;;) {
            if (object) {
                skip_space();
                if (at_end() || peek() != '"') return fail("a member's name is not a string");
                if (!string()) return false;
                skip_space();
                if (at_end() || peek() != ':') return fail("a member's name has no ':'");
                ++pos_;
            }
            if (!value(depth)) return false;
            skip_space();
            if (at_end()) return fail("the text ends inside it");
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() == static_cast<unsigned char>(close)) {
                ++pos_;
                return true;
            }
            return fail("not valid JSON");
        }
    }

    bool hex4(uint32_t& unit) {
        if (text_.size() - pos_ < 4) return fail("a \\u escape is cut short");
        unit = 0;
        for (int i = 0; i < 4; ++i) {
            const unsigned char c = peek();
            ++pos_;
            unit <<= 4;
            if (c >= '0' && c <= '9')
                unit |= c - '0';
            else if (c >= 'a' && c <= 'f')
                unit |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                unit |= c - 'A' + 10;
            else
                return fail("a \\u escape is not hexadecimal");
        }
        return true;
    }

    bool escape() {
        ++pos_;  // the backslash
        if (at_end()) return fail("the text ends inside a string");
        const unsigned char c = peek();
        ++pos_;
        switch (c) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                return true;
            case 'u': {
                uint32_t unit = 0;
                if (!hex4(unit)) return false;
                if (unit >= 0xDC00 && unit <= 0xDFFF) return fail("a lone low surrogate escape");
                if (unit < 0xD800 || unit > 0xDBFF) return true;
                if (text_.substr(pos_, 2) != "\\u") return fail("a lone high surrogate escape");
                pos_ += 2;
                if (!hex4(unit)) return false;
                if (unit < 0xDC00 || unit > 0xDFFF) return fail("a lone high surrogate escape");
                return true;
            }
            default:
                return fail("an unknown escape in a string");
        }
    }

    // One UTF-8 sequence of two to four bytes, shortest form, no surrogates.
    bool utf8() {
        const unsigned char lead = peek();
        size_t length = 0;
        uint32_t code = 0;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
            code = lead & 0x1F;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            code = lead & 0x0F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            code = lead & 0x07;
        } else {
            return fail("a string in it is not UTF-8");
        }
        if (text_.size() - pos_ < length) return fail("a string in it is not UTF-8");
        for (size_t i = 1; i < length; ++i) {
            const unsigned char next = static_cast<unsigned char>(text_[pos_ + i]);
            if ((next & 0xC0) != 0x80) return fail("a string in it is not UTF-8");
            code = (code << 6) | (next & 0x3F);
        }
        if ((length == 3 && code < 0x800) || (length == 4 && (code < 0x10000 || code > 0x10FFFF)) ||
            (code >= 0xD800 && code <= 0xDFFF))
            return fail("a string in it is not UTF-8");
        pos_ += length;
        return true;
    }

    bool string() {
        ++pos_;  // the opening quote
        for (;;) {
            if (at_end()) return fail("the text ends inside a string");
            const unsigned char c = peek();
            if (c == '"') {
                ++pos_;
                return true;
            }
            if (c == '\\') {
                if (!escape()) return false;
            } else if (c < 0x20) {
                return fail("a control character in a string");
            } else if (c < 0x80) {
                ++pos_;
            } else if (!utf8()) {
                return false;
            }
        }
    }

    bool digits() {
        const size_t start = pos_;
        while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
        return pos_ > start;
    }

    bool number() {
        if (peek() == '-') ++pos_;
        if (at_end()) return fail("not valid JSON");
        if (peek() == '0') {
            ++pos_;
        } else if (!digits()) {
            return fail("not valid JSON");
        }
        if (!at_end() && peek() == '.') {
            ++pos_;
            if (!digits()) return fail("a number has no digits after its point");
        }
        if (!at_end() && (peek() == 'e' || peek() == 'E')) {
            ++pos_;
            if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
            if (!digits()) return fail("a number has no digits in its exponent");
        }
        return true;
    }

    std::string_view text_;
    size_t pos_ = 0;
    std::string why_;
};

inline std::string format_number(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;  // shortest exact
    return std::string(text, end);
}

inline std::string unit_problem(const char* name, double value) {
    if (!std::isfinite(value)) return std::string(name) + " is " + format_number(value);
    if (value < 0.0 || value > 1.0)
        return std::string(name) + " " + format_number(value) + " is outside [0, 1]";
    return "";
}

}  // namespace detail

// "" when `evidence` is one JSON object the host keeps, else why not.
inline std::string evidence_problem(std::string_view evidence) {
    if (evidence.size() > kMaxEvidenceBytes) return "evidence is larger than 64 KiB";
    return detail::JsonObjectReader(evidence).problem();
}

// "" when the host keeps `signal`, else why it drops it.
inline std::string signal_problem(const arb_signal* signal) {
    if (!signal) return "the signal is NULL";
    // A newer plugin's larger signal is fine: only the fields of 1.0 are read.
    if (signal->struct_size < ARB_SIGNAL_SIZE_1_0)
        return "struct_size " + std::to_string(signal->struct_size) +
               " is smaller than ABI 1.0's " + std::to_string(ARB_SIGNAL_SIZE_1_0);
    if (signal->player == 0) return "player is 0";
    if (std::string problem = detail::unit_problem("score", signal->score); !problem.empty())
        return problem;
    if (std::string problem = detail::unit_problem("confidence", signal->confidence);
        !problem.empty())
        return problem;
    if (!signal->code.data || signal->code.size == 0) return "code is empty";
    if (signal->code.size > kMaxCodeBytes) return "code is longer than 128 bytes";
    for (uint64_t i = 0; i < signal->code.size; ++i) {
        const char c = signal->code.data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return "code has a character outside [a-z0-9_.-]";
    }
    if (signal->evidence_json.size > kMaxEvidenceBytes) return "evidence is larger than 64 KiB";
    if (signal->evidence_json.size && !signal->evidence_json.data)
        return "evidence pointer is NULL";
    if (signal->evidence_json.size)
        return evidence_problem({signal->evidence_json.data, signal->evidence_json.size});
    return "";
}

}  // namespace arbiter::signal_rules
