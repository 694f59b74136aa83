// A flag's evidence in words for the review page: why it was raised (the measured value,
// the limit and the unit, when the evidence carries them) and each entry with its unit.
// The evidence was written by plugins: nothing about its shape, keys or text is trusted.
// Everything here returns plain text (valid UTF-8, bounded); the caller escapes it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace arbiter::host::review_page {

// The unit a key's suffix names ("speed_mps" -> "m/s", "window_s" -> "s"), "" for none.
std::string_view unit_of_key(std::string_view key);
// `value` rounded for a reader: integers whole, 24.23602185 -> "24.2", 0.0123 -> "0.0123",
// past 1e15 in scientific notation.
std::string readable_number(double value);
// An evidence entry's value with its key's unit ("24.2 m/s"); a string as it is (made
// valid UTF-8, cut past 200 characters), an array or object summarised, bounded.
std::string evidence_value_text(std::string_view key, const nlohmann::json& value);
// One row per top-level entry of `evidence` (key, value with unit), in key order, at most
// `max_rows`; a non-object evidence is one row with an empty key.
std::vector<std::pair<std::string, std::string>> evidence_rows(const nlohmann::json& evidence,
                                                               size_t max_rows = 40);
// Why the flag `event` (a dossier's event: evidence, tripwire) was raised, in words:
// "speed 24.2 m/s over 1.0 s, limit 22.0 m/s", prefixed "trip-wire: " when it is one. When
// the evidence names no measure the page knows, up to three of its numbers.
std::string reason_text(const nlohmann::json& event);

// Aggregator actions, strongest last: Clear 0, Monitor 1, FlagForReview 2,
// ShadowRestrict 3; -1 for anything else (no assessment, an unknown word).
int action_rank(std::string_view action);

}  // namespace arbiter::host::review_page
