// A hash map's entries in key order, for what must not depend on the map's layout: a saved
// state that is the same bytes for the same state, signals that come in the same order.
//
// A plugin keyed by player id wants a hash map for the events (a tree of 100,000 players
// is a dozen cache misses deep, docs/performance.md) and key order for its state and its
// match-end reports; this gives the second without a second container.
#pragma once

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

namespace arbiter {

// Pointers to the entries of `map` (std::unordered_map or alike), sorted by key. They stay
// valid while no entry is erased.
template <class Map>
auto in_key_order(Map& map) {
    using Entry = std::remove_reference_t<decltype(*map.begin())>;
    std::vector<Entry*> entries;
    entries.reserve(map.size());
    for (auto& entry : map)
        entries.push_back(std::addressof(entry));
    std::sort(entries.begin(), entries.end(),
              [](const Entry* a, const Entry* b) { return a->first < b->first; });
    return entries;
}

}  // namespace arbiter
