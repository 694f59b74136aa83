// A first-in first-out list that costs one pointer while it has never held anything.
//
// libstdc++'s std::deque allocates its map and a first 512-byte block when it is
// constructed: a player whose game never sends a latency sample, a stat or an order still
// paid about 600 bytes for each such list (docs/performance.md, memory per player).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>

namespace arbiter::reference {

template <class T>
class Fifo {
  public:
    using Items = std::deque<T>;

    Fifo() = default;
    Fifo(Fifo&&) noexcept = default;
    Fifo& operator=(Fifo&&) noexcept = default;
    Fifo(const Fifo& other)
        : items_(other.items_ ? std::make_unique<Items>(*other.items_) : nullptr) {}
    Fifo& operator=(const Fifo& other) {
        if (this != &other)
            items_ = other.items_ ? std::make_unique<Items>(*other.items_) : nullptr;
        return *this;
    }
    Fifo& operator=(Items items) {
        items_ = items.empty() ? nullptr : std::make_unique<Items>(std::move(items));
        return *this;
    }

    bool empty() const { return !items_ || items_->empty(); }
    size_t size() const { return items_ ? items_->size() : 0; }
    const T& front() const { return items_->front(); }
    const T& back() const { return items_->back(); }
    // The items, for the checks that read a deque (an empty one while there are none).
    const Items& items() const { return items_ ? *items_ : none(); }
    typename Items::const_iterator begin() const { return items().begin(); }
    typename Items::const_iterator end() const { return items().end(); }

    // The items to change, allocated on first use.
    Items& get() {
        if (!items_) items_ = std::make_unique<Items>();
        return *items_;
    }
    void push_back(const T& item) { get().push_back(item); }
    void pop_front() { items_->pop_front(); }
    template <class It>
    void assign(It first, It last) {
        get().assign(first, last);
    }
    void clear() { items_.reset(); }

  private:
    static const Items& none() {
        static const Items empty;
        return empty;
    }

    std::unique_ptr<Items> items_;
};

}  // namespace arbiter::reference
