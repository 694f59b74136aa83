// Reads the evidence a signal carries. The SDK writes JSON but has no parser, and a plugin
// must not drag one in: a strict grammar check plus a lookup of top-level-looking members
// is all the tests need (the plugin's member names are unique within one object).
#pragma once

#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace arbiter::reference::test {

// Checks text against the JSON grammar of RFC 8259.
class JsonGrammar {
  public:
    explicit JsonGrammar(std::string_view text) : text_(text) {}

    // One object and nothing else.
    bool is_object() {
        skip_space();
        if (peek() != '{' || !value()) return false;
        skip_space();
        return at_ == text_.size();
    }

  private:
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    bool eat(char c) {
        if (peek() != c) return false;
        ++at_;
        return true;
    }
    void skip_space() {
        while (peek() == ' ' || peek() == '\t' || peek() == '\r' || peek() == '\n')
            ++at_;
    }
    bool literal(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
        return true;
    }
    bool digits() {
        const size_t start = at_;
        while (peek() >= '0' && peek() <= '9')
            ++at_;
        return at_ > start;
    }

    bool value() {
        skip_space();
        switch (peek()) {
            case '{':
                return members('{', '}', true);
            case '[':
                return members('[', ']', false);
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

    // An object (keyed) or an array.
    bool members(char open, char close, bool keyed) {
        eat(open);
        skip_space();
        if (eat(close)) return true;
        do {
            skip_space();
            if (keyed) {
                if (!string()) return false;
                skip_space();
                if (!eat(':')) return false;
            }
            if (!value()) return false;
            skip_space();
        } while (eat(','));
        return eat(close);
    }

    bool string() {
        if (!eat('"')) return false;
        while (at_ < text_.size()) {
            const char c = text_[at_++];
            if (c == '"') return true;
            if (static_cast<unsigned char>(c) < 0x20) return false;
            if (c != '\\') continue;
            const char escaped = peek();
            ++at_;
            if (escaped == 'u') {
                for (int i = 0; i < 4; ++i, ++at_)
                    if (!std::isxdigit(static_cast<unsigned char>(peek()))) return false;
            } else if (escaped == '\0' || !std::strchr("\"\\/bfnrt", escaped)) {
                return false;
            }
        }
        return false;
    }

    bool number() {
        eat('-');
        if (!eat('0') && !(peek() >= '1' && peek() <= '9' && digits())) return false;
        if (eat('.') && !digits()) return false;
        if (eat('e') || eat('E')) {
            if (!eat('+')) eat('-');
            if (!digits()) return false;
        }
        return true;
    }

    std::string_view text_;
    size_t at_ = 0;
};

inline bool is_json_object(std::string_view text) {
    return JsonGrammar(text).is_object();
}

// The first member "key": <number> in the text.
inline std::optional<double> evidence_number(std::string_view json, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\":";
    const size_t at = json.find(needle);
    if (at == std::string_view::npos) return std::nullopt;
    const char* first = json.data() + at + needle.size();
    double value = 0;
    auto [end, error] = std::from_chars(first, json.data() + json.size(), value);
    if (error != std::errc() || end == first) return std::nullopt;
    return value;
}

// The first member "key": "<string without escapes>" in the text.
inline std::optional<std::string> evidence_string(std::string_view json, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\":\"";
    const size_t at = json.find(needle);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t from = at + needle.size();
    const size_t to = json.find('"', from);
    if (to == std::string_view::npos) return std::nullopt;
    return std::string(json.substr(from, to - from));
}

}  // namespace arbiter::reference::test
