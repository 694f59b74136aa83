// Numbers from text, strictly: the whole text must be the number, in the C locale.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace arbiter::tools {

inline std::optional<double> parse_double(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') text.remove_prefix(1);
    double value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

inline std::optional<double> parse_finite(std::string_view text) {
    auto value = parse_double(text);
    if (!value || !std::isfinite(*value)) return std::nullopt;
    return value;
}

inline std::optional<uint64_t> parse_u64(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') text.remove_prefix(1);
    uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace arbiter::tools
