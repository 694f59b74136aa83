#include "review_page/form.hpp"

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::review_page {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The %-decoded `text` ('+' as a space), or nullopt for a broken escape.
std::optional<std::string> url_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '+') {
            out.push_back(' ');
        } else if (c == '%') {
            if (i + 2 >= text.size()) return std::nullopt;
            const int high = hex_digit(text[i + 1]), low = hex_digit(text[i + 2]);
            if (high < 0 || low < 0) return std::nullopt;
            out.push_back(static_cast<char>(high * 16 + low));
            i += 2;
        } else {
            out.push_back(c);
        }
    }
    return out;
}

}  // namespace

const std::string& Fields::get(const std::string& name) const {
    static const std::string empty;
    const auto found = values.find(name);
    return found == values.end() ? empty : found->second;
}

Fields parse_urlencoded(std::string_view text, size_t max_fields) {
    Fields fields;
    size_t count = 0;
    while (!text.empty()) {
        const size_t amp = text.find('&');
        const std::string_view pair = text.substr(0, amp);
        text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
        if (pair.empty()) continue;
        if (++count > max_fields) {
            fields.problem = "too many fields";
            return fields;
        }
        const size_t eq = pair.find('=');
        auto name = url_decode(pair.substr(0, eq));
        auto value =
            url_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        if (!name || !value) {
            fields.problem = "a broken %-escape";
            return fields;
        }
        if (name->empty() || name->size() > 64) {
            fields.problem = "a field name of 1 to 64 bytes expected";
            return fields;
        }
        if (!is_valid_utf8(*name) || !is_valid_utf8(*value)) {
            fields.problem = "a field that is not UTF-8";
            return fields;
        }
        fields.values.try_emplace(std::move(*name), std::move(*value));
    }
    return fields;
}

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
    while (!header.empty()) {
        const size_t semi = header.find(';');
        std::string_view item = header.substr(0, semi);
        header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
        while (!item.empty() && item.front() == ' ')
            item.remove_prefix(1);
        const size_t eq = item.find('=');
        if (eq != std::string_view::npos && item.substr(0, eq) == name)
            return std::string(item.substr(eq + 1));
    }
    return std::nullopt;
}

Target split_target(std::string_view target) {
    const size_t question = target.find('?');
    if (question == std::string_view::npos) return {std::string(target), ""};
    return {std::string(target.substr(0, question)), std::string(target.substr(question + 1))};
}

}  // namespace arbiter::host::review_page
