// Reads the evidence a signal carries. The SDK writes JSON but has no parser, and a plugin
// must not drag one in: the contract's own check that evidence is one JSON object
// (arbiter_signal_rules.hpp) plus a lookup of top-level-looking members is all the tests
// need (the plugin's member names are unique within one object).
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <arbiter/arbiter_signal_rules.hpp>

namespace arbiter::reference::test {

// One JSON object and nothing else, by the rule the host keeps a signal's evidence by.
inline bool is_json_object(std::string_view text) {
    return arbiter::signal_rules::evidence_problem(text).empty();
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
