// Handling a batch with its players' state asked for ahead of time.
//
// Past a few thousand players a plugin's per-player state no longer fits the caches, and
// an event's handler waits for each of its player's blocks in turn: the record, then the
// arrays it points to, each a trip to memory (about 100 ns) that the next cannot start
// before. Asked for ahead, a group of events at a time, those trips overlap: with the
// reference and lagpool plugins, an event at 100,000 players went from 1.8-1.9x the cost
// of one at 1,000 players to 1.2x (docs/performance.md, players). A group of 8 was the
// fastest of 4, 8, 16 and 32 there: a larger one asks for more than the first-level cache
// keeps until its handlers run.
//
//   void on_batch(const Batch& batch, Signals& signals) override {
//       Match& match = matches_[batch.match()];
//       for_each_event_looking_ahead(
//           batch.events(),
//           [&](const fb::Event& next) { return find_or_null(match.players, next.player()); },
//           [](const Player& player) { player.prefetch(); },
//           [&](const fb::Event& event) { handle(match, event, signals); });
//   }
//
// find and prefetch only read: they must not create a player's record (that is the
// handler's to do, in order) and must not throw. prefetch_span (prefetch.hpp) asks for an
// array's lines.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

#include <arbiter/sdk/events.hpp>
#include <arbiter/sdk/prefetch.hpp>

namespace arbiter {

// The value `map` (std::unordered_map or alike) holds for `key`, or nullptr: what a
// look-ahead's find returns.
template <class Map, class Key>
const typename Map::mapped_type* find_or_null(const Map& map, const Key& key) {
    const auto found = map.find(key);
    return found == map.end() ? nullptr : &found->second;
}

// Handles the events in order, a group of `Group` at a time, and before handling a group
// asks for its players' state in two passes: find(event) for each of its events (a
// pointer to the player's record, or nullptr), then prefetch(record) for each record
// found. The finds of a group do not wait for each other, so their trips to memory
// overlap; the prefetches read records the finds just brought in and ask for the blocks
// they point to, which the handlers then find in the caches.
template <size_t Group = 8, class Find, class Prefetch, class Handle>
void for_each_event_looking_ahead(const EventRange& events, Find&& find, Prefetch&& prefetch,
                                  Handle&& handle) {
    static_assert(Group > 0);
    using Record = std::remove_pointer_t<std::invoke_result_t<Find&, const fb::Event&>>;
    std::array<Record*, Group> records{};
    for (size_t first = 0; first < events.size(); first += Group) {
        const size_t count = std::min(events.size() - first, Group);
        for (size_t i = 0; i < count; ++i)
            records[i] = find(*events[first + i]);
        for (size_t i = 0; i < count; ++i)
            if (records[i] != nullptr) prefetch(*records[i]);
        for (size_t i = 0; i < count; ++i)
            handle(*events[first + i]);
    }
}

}  // namespace arbiter
