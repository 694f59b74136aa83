#include "review_page/evidence_text.hpp"

#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::review_page {

using nlohmann::json;

namespace {

// Key suffixes and the units they name, longest first where one ends another ("_mps2"
// before "_mps", "_rad_s" before "_s"). From the keys the bundled plugins write
// (plugins/*/src: Evidence().add(...)).
struct UnitSuffix {
    std::string_view suffix, unit;
};
constexpr std::array kUnits = {
    UnitSuffix{"_mps2", "m/s²"},      UnitSuffix{"_mps", "m/s"},
    UnitSuffix{"_rad_s", "rad/s"},    UnitSuffix{"_deg_s", "°/s"},
    UnitSuffix{"_per_min", "/min"},   UnitSuffix{"_per_hour", "/h"},
    UnitSuffix{"_hz", "Hz"},          UnitSuffix{"_mrad", "mrad"},
    UnitSuffix{"_rad", "rad"},        UnitSuffix{"_deg", "°"},
    UnitSuffix{"_ms", "ms"},          UnitSuffix{"_us", "µs"},
    UnitSuffix{"_bits", "bits"},      UnitSuffix{"_s", "s"},
    UnitSuffix{"_m", "m"},
};

// What a check measured, most telling first: the value a reason names. Keys not here are
// still shown in the evidence table.
constexpr std::string_view kMeasured[] = {
    "speed_mps",      "highest_speed_mps", "mean_speed_mps",   "acceleration_mps2",
    "change_mps",     "distance_m",        "depth_m",          "climb_m",
    "horizontal_m",   "range_m",           "speed_rad_s",      "speed_deg_s",
    "turned_rad",     "median_ms",         "fastest_ms",       "lowest_rtt_ms",
    "view_delay_ms",  "inputs_per_min",    "rate",             "per_hour",
    "cv",             "entropy_bits",      "deficit_s",        "largest_deficit_s",
    "overdrawn_s",    "airborne_s",        "claimed_s",        "stated_s",
    "offset_s",       "separation_s",      "silence_s",        "short_s",
    "session_s",      "cost_s",            "count",            "snaps",
    "reconnects",     "hits_without_line_of_sight", "damage",  "value",
    "delta",          "gained",            "orders_ahead",     "ahead_ticks",
    "widest_block_spread_mrad", "worst_residual_steps", "largest_multiple", "changes",
};

// Keys whose words read better than the key.
struct Label {
    std::string_view key, words;
};
constexpr std::array kLabels = {
    Label{"cv", "interval variation (CV)"},
    Label{"entropy_bits", "interval entropy"},
    Label{"median_ms", "median"},
    Label{"inputs_per_min", "inputs"},
    Label{"hits_without_line_of_sight", "hits without line of sight"},
};

// The stretch a measure was taken over.
constexpr std::string_view kDurations[] = {"window_s", "duration_s", "elapsed_s",
                                                        "session_s"};

constexpr size_t kMaxStringBytes = 200;
constexpr size_t kMaxValueBytes = 400;
constexpr size_t kMaxArrayShown = 5;
constexpr size_t kMaxMembersShown = 6;

bool ends_with(std::string_view text, std::string_view tail) {
    return text.size() > tail.size() && text.substr(text.size() - tail.size()) == tail;
}

std::optional<double> finite_number(const json& value) {
    if (!value.is_number()) return std::nullopt;
    const double v = value.get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// A member as a number; a limit may be an object with its `value` (kaladin's).
std::optional<double> number_member(const json& object, std::string_view key) {
    if (!object.is_object()) return std::nullopt;
    const auto found = object.find(std::string(key));
    if (found == object.end()) return std::nullopt;
    if (found->is_object()) {
        const auto inner = found->find("value");
        return inner != found->end() ? finite_number(*inner) : std::nullopt;
    }
    return finite_number(*found);
}

std::string with_unit(std::string number, std::string_view unit) {
    if (unit.empty()) return number;
    return number + (unit.front() == '/' ? "" : " ") + std::string(unit);
}

// A number under `key`: microseconds (times, mostly) as seconds, the rest with their unit.
std::string number_text(std::string_view key, const json& value) {
    const std::string_view unit = unit_of_key(key);
    const auto v = finite_number(value);
    if (!v) return "?";
    if (unit == "µs") return fmt::format("{:.3f} s", *v / 1e6);
    if (value.is_number_integer() && std::abs(*v) < 1e15) return with_unit(value.dump(), unit);
    return with_unit(readable_number(*v), unit);
}

std::string cut(std::string text, size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    return to_valid_utf8(text, max_bytes) + "…";
}

std::string shown_key(std::string_view key) {
    return showable_name(key, 40);
}

std::string value_text(std::string_view key, const json& value, int depth) {
    if (value.is_number()) return number_text(key, value);
    if (value.is_string()) return cut(to_valid_utf8(value.get_ref<const std::string&>()),
                                      kMaxStringBytes);
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (value.is_null()) return "none";
    if (depth >= 2) return value.is_array() ? "[…]" : "{…}";
    std::string out;
    if (value.is_array()) {
        out = fmt::format("{} value{}", value.size(), value.size() == 1 ? "" : "s");
        if (value.empty()) return out;
        out += ": ";
        size_t shown = 0;
        for (const auto& item : value) {
            if (shown == kMaxArrayShown) {
                out += ", …";
                break;
            }
            out += (shown++ ? ", " : "") + value_text(key, item, depth + 1);
        }
        return cut(std::move(out), kMaxValueBytes);
    }
    size_t shown = 0;
    for (const auto& [member, item] : value.items()) {
        if (shown == kMaxMembersShown) {
            out += ", …";
            break;
        }
        out += (shown++ ? ", " : "") + shown_key(member) + " " + value_text(member, item, depth + 1);
    }
    return cut(out.empty() ? std::string("{}") : std::move(out), kMaxValueBytes);
}

// "highest_speed_mps" -> "highest speed"; known keys get their words.
std::string label_of(std::string_view key) {
    for (const auto& label : kLabels)
        if (label.key == key) return std::string(label.words);
    for (const auto& u : kUnits)
        if (ends_with(key, u.suffix)) {
            key.remove_suffix(u.suffix.size());
            break;
        }
    std::string out = shown_key(key);
    for (char& c : out)
        if (c == '_') c = ' ';
    return out;
}

// A member of `object`, or null when it is missing.
const json& member_of(const json& object, std::string_view key) {
    static const json none;
    if (!object.is_object()) return none;
    const auto found = object.find(std::string(key));
    return found != object.end() ? *found : none;
}

bool is_limit_key(std::string_view key) {
    return key == "limit" || (key.size() > 6 && key.substr(0, 6) == "limit_");
}

}  // namespace

std::string_view unit_of_key(std::string_view key) {
    for (const auto& u : kUnits)
        if (ends_with(key, u.suffix)) return u.unit;
    if (key == "per_hour") return "/h";
    return "";
}

std::string readable_number(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
    const double magnitude = std::abs(value);
    if (magnitude >= 1e15) return fmt::format("{:.3e}", value);
    if (magnitude >= 100) return fmt::format("{:.0f}", value);
    if (magnitude >= 1) return fmt::format("{:.1f}", value);
    if (magnitude == 0) return "0";
    return fmt::format("{:.3g}", value);
}

std::string evidence_value_text(std::string_view key, const json& value) {
    return value_text(key, value, 0);
}

std::vector<std::pair<std::string, std::string>> evidence_rows(const json& evidence,
                                                               size_t max_rows) {
    std::vector<std::pair<std::string, std::string>> rows;
    if (!evidence.is_object()) {
        if (!evidence.is_null()) rows.emplace_back("", value_text("", evidence, 0));
        return rows;
    }
    for (const auto& [key, value] : evidence.items()) {
        if (rows.size() == max_rows) {
            rows.emplace_back("…", fmt::format("{} more", evidence.size() - max_rows));
            break;
        }
        rows.emplace_back(shown_key(key), value_text(key, value, 0));
    }
    return rows;
}

std::string reason_text(const json& event) {
    const bool tripwire = event.is_object() && event.contains("tripwire") &&
                          event["tripwire"].is_boolean() && event["tripwire"].get<bool>();
    const std::string prefix = tripwire ? "trip-wire: " : "";
    const json* found = nullptr;
    if (event.is_object()) {
        const auto it = event.find("evidence");
        if (it != event.end()) found = &*it;
    }
    if (!found || !found->is_object() || found->empty())
        return prefix + "the evidence names no measure";
    const json& evidence = *found;

    // A limit and the measure in its unit; else the first measure the page knows.
    std::optional<std::string_view> measured;
    std::optional<std::string> limit_key;
    for (const auto& [key, value] : evidence.items()) {
        if (!is_limit_key(key) || !number_member(evidence, key)) continue;
        const std::string_view unit = unit_of_key(key);
        for (const std::string_view m : kMeasured)
            if (number_member(evidence, m) && (key == "limit" || unit_of_key(m) == unit)) {
                measured = m;
                limit_key = key;
                break;
            }
        if (measured) break;
    }
    if (!measured)
        for (const std::string_view m : kMeasured)
            if (number_member(evidence, m)) {
                measured = m;
                break;
            }

    if (!measured) {
        // Up to three of its numbers, in key order.
        std::string out;
        size_t shown = 0;
        for (const auto& [key, value] : evidence.items()) {
            if (!finite_number(value)) continue;
            out += (shown ? ", " : "") + label_of(key) + " " + number_text(key, value);
            if (++shown == 3) break;
        }
        return prefix + (out.empty() ? std::string("the evidence names no measure") : out);
    }

    auto as_measured = [&](double v) {
        // A number in the measure's unit (a unitless limit is in the measure's).
        return number_text(*measured, json(v));
    };
    const json& measure = member_of(evidence, *measured);
    std::string out = label_of(*measured) + " " +
                      (measure.is_number() ? number_text(*measured, measure)
                                           : as_measured(*number_member(evidence, *measured)));
    for (const std::string_view d : kDurations)
        if (d != *measured && finite_number(member_of(evidence, d))) {
            out += " over " + number_text(d, member_of(evidence, d));
            break;
        }
    if (limit_key) out += ", limit " + as_measured(*number_member(evidence, *limit_key));
    for (const auto& [key, value] : evidence.items())
        if (key.size() > 9 && key.substr(0, 9) == "tripwire_" && finite_number(value)) {
            out += ", trip-wire at " + number_text(key, value);
            break;
        }
    return prefix + out;
}

int action_rank(std::string_view action) {
    if (action == "Clear") return 0;
    if (action == "Monitor") return 1;
    if (action == "FlagForReview") return 2;
    if (action == "ShadowRestrict") return 3;
    return -1;
}

}  // namespace arbiter::host::review_page
