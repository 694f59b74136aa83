// Handling a batch with its players' state asked for ahead of time.
//
// Past a few thousand players a plugin's per-player state no longer fits the caches, and
// an event's handler waits for each of its player's blocks in turn: the record, then the
// arrays it points to, each a trip to memory (about 100 ns) that the next cannot start
// before. Asked for ahead, a group of events at a time, those trips overlap: with the
// bundled plugins, an event at 100,000 players went from 1.8-2.5x the cost of one at
// 1,000 players to 1.2-1.34x (docs/performance.md, players). A group of 8 was the fastest
// of 4, 8, 16 and 32 there.
//
//   void on_batch(const Batch& batch, Signals& signals) override {
//       Match& match = matches_[batch.match()];
//       for_each_event_looking_ahead(
//           batch.events(), match.players,  // a hash map by player id
//           [](const Player& player) { player.prefetch(); },
//           [&](const fb::Event& event) { handle(match, event, signals); });
//   }
//
// prefetch only reads and must not throw; a player's record is made by the handler, in
// order, never ahead. prefetch_span (prefetch.hpp) asks for an array's lines.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

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
// pointer to the player's record, or nullptr), then, for each record found, its own lines
// and prefetch(record). The finds of a group do not wait for each other, so their trips
// to memory overlap; the prefetches read records the finds just brought in and ask for
// the blocks they point to, which the handlers then find in the caches. find must only
// read and not throw.
template <size_t Group = 8, class Find, class Prefetch, class Handle>
requires std::invocable<Find&, const fb::Event&>
void for_each_event_looking_ahead(const EventRange& events, Find&& find, Prefetch&& prefetch,
                                  Handle&& handle) {
    static_assert(Group > 0);
    using Record = std::remove_pointer_t<std::invoke_result_t<Find&, const fb::Event&>>;
    std::array<Record*, Group> records{};
    for (size_t first = 0; first < events.size(); first += Group) {
        const size_t count = std::min(events.size() - first, Group);
        for (size_t i = 0; i < count; ++i)
            records[i] = find(*events[first + i]);
        for (size_t i = 0; i < count; ++i) {
            if (records[i] == nullptr) continue;
            // The find brought in the line of the record's key; the record may span more.
            prefetch_span(std::span<const Record>(records[i], 1));
            prefetch(*records[i]);
        }
        for (size_t i = 0; i < count; ++i)
            handle(*events[first + i]);
    }
}

// The same with the players' records in `players`, a map by player id (std::unordered_map
// or alike): an event's record is the one its player() names, if there is one.
template <size_t Group = 8, class Players, class Prefetch, class Handle>
requires requires {
    typename Players::mapped_type;
}
void for_each_event_looking_ahead(const EventRange& events, const Players& players,
                                  Prefetch&& prefetch, Handle&& handle) {
    for_each_event_looking_ahead<Group>(
        events, [&players](const fb::Event& next) { return find_or_null(players, next.player()); },
        std::forward<Prefetch>(prefetch), std::forward<Handle>(handle));
}

}  // namespace arbiter
