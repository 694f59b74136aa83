#include "arbiter/host/suggest.hpp"

#include <algorithm>

namespace arbiter::host {

namespace {

// Optimal string alignment distance: Levenshtein plus the swap of two adjacent letters,
// the commonest slip on a keyboard ("refernece").
size_t edit_distance(std::string_view a, std::string_view b) {
    const size_t columns = b.size() + 1;
    std::vector<size_t> two_back(columns), previous(columns), current(columns);
    for (size_t j = 0; j < columns; ++j)
        previous[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (size_t j = 1; j < columns; ++j) {
            const size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
            current[j] =
                std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], two_back[j - 2] + 1);
        }
        std::swap(two_back, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
    // Words longer than any command or key are not slips; this also bounds the work on
    // whatever an attacker put in a config.
    if (word.empty() || word.size() > 64) return std::nullopt;
    const size_t allowed = std::max<size_t>(1, word.size() / 3);
    std::optional<std::string> best;
    size_t best_distance = allowed + 1;
    for (const auto& candidate : candidates) {
        if (candidate == word || candidate.size() > 64) continue;
        const size_t distance = edit_distance(word, candidate);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    auto match = closest_match(word, candidates);
    return match ? " (did you mean '" + *match + "'?)" : std::string();
}

}  // namespace arbiter::host
