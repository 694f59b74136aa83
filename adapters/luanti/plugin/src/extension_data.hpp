// The small JSON objects of the mod's "luanti.inside" and "luanti.cheat" extensions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace arbiter::luanti {

// The string member `key` of a JSON object, or nothing when the data is not a JSON object
// or has no such string. At most kLongestName bytes are kept: a node or cheat name is
// short, and whatever is kept goes into evidence and the saved state.
inline constexpr size_t kLongestName = 64;
std::optional<std::string> json_string_member(std::span<const uint8_t> data, std::string_view key);

// A name the host takes as part of a metric name ([a-z0-9_], at most 32 characters):
// Luanti's cheat types (moved_too_fast, interacted_too_far, ...) already are; anything
// else is mapped onto it, and a name with nothing left is "other".
std::string metric_part(std::string_view name);

}  // namespace arbiter::luanti
