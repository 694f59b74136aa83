// A first-in first-out window of plain values: what a per-player std::deque is used for,
// in a fraction of its memory.
//
// libstdc++'s std::deque allocates a map and a 512-byte block the moment it is made, so a
// player record with a few of them costs kilobytes before it keeps anything
// (docs/performance.md, memory per tracked player). A Ring is 24 bytes while empty and one
// block while not: its values sit in one array used circularly, which grows by half again
// when full and keeps its size when emptied (a window refills to the same size).
//
//   arbiter::Ring<int64_t> window;
//   window.push_back(t_us);
//   while (window.size() > 1 && window[1] <= t_us - keep_us) window.pop_front();
//
// Values are trivially copyable and default-constructible (times, counts, small structs of
// them). Indexing and the iterators are random access, so the standard algorithms
// (upper_bound, a reverse walk) work on it. Unlike a deque's, its references and iterators
// do not survive a change: push_back may move every value to a new block, and pop_front
// shifts which value each index (and so each iterator) names.
#pragma once

#include <algorithm>
#include <cassert>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace arbiter {

template <class T>
requires std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> &&
    std::is_copy_assignable_v<T>
class Ring {
  public:
    using value_type = T;
    using size_type = size_t;

    template <bool Const>
    class Iterator {
      public:
        using iterator_category = std::random_access_iterator_tag;
        using iterator_concept = std::random_access_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = std::conditional_t<Const, const T*, T*>;
        using reference = std::conditional_t<Const, const T&, T&>;
        using RingRef = std::conditional_t<Const, const Ring*, Ring*>;

        Iterator() = default;
        Iterator(RingRef ring, size_t index) : ring_(ring), index_(index) {}
        // A mutable iterator converts to a const one, as a container's do.
        operator Iterator<true>() const requires(!Const) { return {ring_, index_}; }

        reference operator*() const { return (*ring_)[index_]; }
        pointer operator->() const { return std::addressof((*ring_)[index_]); }
        reference operator[](difference_type n) const { return *(*this + n); }
        Iterator& operator++() { return ++index_, *this; }
        Iterator operator++(int) { return Iterator(ring_, index_++); }
        Iterator& operator--() { return --index_, *this; }
        Iterator operator--(int) { return Iterator(ring_, index_--); }
        Iterator& operator+=(difference_type n) {
            index_ = static_cast<size_t>(static_cast<difference_type>(index_) + n);
            return *this;
        }
        Iterator& operator-=(difference_type n) { return *this += -n; }
        friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
        friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
        friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
        friend difference_type operator-(const Iterator& a, const Iterator& b) {
            return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
        }
        friend bool operator==(const Iterator& a, const Iterator& b) {
            return a.index_ == b.index_;
        }
        friend auto operator<=>(const Iterator& a, const Iterator& b) {
            return a.index_ <=> b.index_;
        }

      private:
        RingRef ring_ = nullptr;
        size_t index_ = 0;
    };
    using iterator = Iterator<false>;
    using const_iterator = Iterator<true>;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    Ring() = default;
    // The values of [first, last), oldest first.
    template <std::input_iterator It>
    Ring(It first, It last) {
        if constexpr (std::forward_iterator<It>)
            reserve(static_cast<size_t>(std::distance(first, last)));
        for (; first != last; ++first)
            push_back(*first);
    }
    Ring(const Ring& other) { *this = other; }
    Ring& operator=(const Ring& other) {
        if (this == &other) return *this;
        Ring copy;
        copy.reserve(other.size_);
        for (const T& value : other)
            copy.push_back(value);
        swap(copy);
        return *this;
    }
    Ring(Ring&& other) noexcept { swap(other); }
    Ring& operator=(Ring&& other) noexcept {
        Ring moved(std::move(other));
        swap(moved);
        return *this;
    }
    void swap(Ring& other) noexcept {
        std::swap(slots_, other.slots_);
        std::swap(head_, other.head_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t capacity() const { return capacity_; }

    // Value i, oldest first (i < size(); unchecked, as a deque's operator[]).
    T& operator[](size_t i) { return slots_[slot(i)]; }
    const T& operator[](size_t i) const { return slots_[slot(i)]; }
    T& front() { return (*this)[0]; }
    const T& front() const { return (*this)[0]; }
    T& back() { return (*this)[size_ - 1]; }
    const T& back() const { return (*this)[size_ - 1]; }

    iterator begin() { return {this, 0}; }
    iterator end() { return {this, size_}; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size_}; }
    reverse_iterator rbegin() { return reverse_iterator(end()); }
    reverse_iterator rend() { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

    void push_back(const T& value) {
        if (size_ == capacity_) grow(size_t{size_} + 1);
        slots_[slot(size_)] = value;
        ++size_;
    }
    // Drops the oldest value (the ring must not be empty).
    void pop_front() {
        assert(size_ > 0);
        head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
        --size_;
    }
    // Forgets every value and keeps the block.
    void clear() { head_ = size_ = 0; }
    // Makes room for `count` values without another allocation.
    void reserve(size_t count) {
        if (count > capacity_) grow(count);
    }

    // Where value i is stored, or for i == size() where the next push_back will store it,
    // for a look-ahead's prefetch (look_ahead.hpp); nullptr when that is outside the block
    // (the ring is empty, or full and about to move to a new one).
    const T* address(size_t i) const { return i < capacity_ ? &slots_[slot(i)] : nullptr; }

    // The most values a ring holds.
    static constexpr size_t kMaxSize = std::numeric_limits<uint32_t>::max();
    // The block a full ring of `capacity` slots moves to for `at_least` values: half again
    // as large (at least 4 slots, at least at_least, at most kMaxSize); throws
    // std::length_error past kMaxSize.
    static constexpr size_t next_capacity(size_t capacity, size_t at_least) {
        if (at_least > kMaxSize)
            throw std::length_error("arbiter::Ring: more than 2^32 - 1 values");
        return std::min(std::max<size_t>({4, at_least, capacity + capacity / 2}), kMaxSize);
    }

  private:
    size_t slot(size_t i) const {
        const size_t at = size_t{head_} + i;
        return at >= capacity_ ? at - capacity_ : at;
    }
    void grow(size_t at_least) {
        const auto capacity = static_cast<uint32_t>(next_capacity(capacity_, at_least));
        // Values only: trivially copyable, default-initialised slots are never read
        // before they are written.
        std::unique_ptr<T[]> slots(new T[capacity]);
        for (size_t i = 0; i < size_; ++i)
            slots[i] = (*this)[i];
        slots_ = std::move(slots);
        head_ = 0;
        capacity_ = capacity;
    }

    std::unique_ptr<T[]> slots_;
    uint32_t head_ = 0;
    uint32_t size_ = 0;
    uint32_t capacity_ = 0;
};

}  // namespace arbiter
