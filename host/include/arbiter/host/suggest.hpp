// "Did you mean ...?": the closest of a few known words to one that was mistyped, for a
// command, a config key or a bundled plugin's name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::host {

// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions
// and swaps of two neighbours), when it is near enough to be a slip: at most one edit for
// words of up to four letters, a third of the word's length beyond. Ties go to the first.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// " (did you mean 'x'?)", or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace arbiter::host
