// A player's budgets by kind name: a few entries, kept sorted by name, inside the player's
// record. Every position looks one up; a std::map's nodes, one allocation each, cost a
// cache miss apiece once 100,000 players' state is past the caches. The bundled config has
// two kinds (movement, dig), held in the record itself, so that the look-ahead's request
// for the record brings them in too, rather than a block the record points to and that
// could only be asked for once the record had come; more kinds go to a block of their own.
#pragma once

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <arbiter/sdk/prefetch.hpp>
#include <boost/container/small_vector.hpp>

namespace arbiter::lagpool {

template <class Value>
class KindTable {
  public:
    using Entry = std::pair<std::string, Value>;

    size_t size() const { return entries_.size(); }
    // In name order, as a std::map would go (the state format relies on it).
    auto begin() { return entries_.begin(); }
    auto end() { return entries_.end(); }
    auto begin() const { return entries_.begin(); }
    auto end() const { return entries_.end(); }

    // Asks the memory system for the entries (a name of up to 15 characters, as the
    // bundled kinds' names are, is held in its entry; a longer one is not asked for).
    void prefetch() const {
        prefetch_span(std::span<const Entry>(entries_.data(), entries_.size()));
    }

    size_t count(std::string_view name) const { return index_of(name) < entries_.size() ? 1 : 0; }
    Value& at(std::string_view name) {
        const size_t i = index_of(name);
        if (i == entries_.size()) throw std::out_of_range("no budget of that kind");
        return entries_[i].second;
    }
    // The entry of `name`, made with a default value when there is none.
    Value& operator[](std::string_view name) {
        auto it = lower_bound(name);
        if (it == entries_.end() || it->first != name)
            it = entries_.emplace(it, std::string(name), Value{});
        return it->second;
    }
    // Adds `name` with `value` unless it is there already (then nothing changes).
    void emplace(std::string_view name, Value value) {
        auto it = lower_bound(name);
        if (it != entries_.end() && it->first == name) return;
        entries_.emplace(it, std::string(name), std::move(value));
    }
    template <class Predicate>
    void erase_if(Predicate&& drop) {
        entries_.erase(std::remove_if(entries_.begin(), entries_.end(), drop), entries_.end());
    }

  private:
    auto lower_bound(std::string_view name) const {
        return std::lower_bound(
            entries_.begin(), entries_.end(), name,
            [](const Entry& entry, std::string_view key) { return entry.first < key; });
    }
    auto lower_bound(std::string_view name) {
        return entries_.begin() + (std::as_const(*this).lower_bound(name) - entries_.cbegin());
    }
    // The entry's index, or size() when there is none.
    size_t index_of(std::string_view name) const {
        const auto it = lower_bound(name);
        return it != entries_.end() && it->first == name
                   ? static_cast<size_t>(it - entries_.begin())
                   : entries_.size();
    }

    // Two in place: the bundled kinds.
    boost::container::small_vector<Entry, 2> entries_;
};

}  // namespace arbiter::lagpool
