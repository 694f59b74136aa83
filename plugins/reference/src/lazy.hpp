// A value that costs one pointer while it is empty (a default T): most players never use most
// areas of the analyzer (in a positions-only match, none but movement's track), nor run over
// a limit, and each such record cost tens to hundreds of bytes per player, every player
// (docs/performance.md, memory per player). Readers see an empty T while there is none.
#pragma once

#include <memory>
#include <utility>

namespace arbiter::reference {

template <class T>
class Lazy {
  public:
    Lazy() = default;
    Lazy(Lazy&&) noexcept = default;
    Lazy& operator=(Lazy&&) noexcept = default;
    Lazy(const Lazy& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
    Lazy& operator=(const Lazy& other) {
        if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
        return *this;
    }

    // The value to read: an empty one while there is none.
    const T& view() const { return value_ ? *value_ : none(); }
    // The value to change, made on first use.
    T& get() {
        if (!value_) value_ = std::make_unique<T>();
        return *value_;
    }
    // The value to change if there is one: a change to an empty one that leaves it empty
    // need not make it.
    T* find() { return value_.get(); }
    explicit operator bool() const { return value_ != nullptr; }
    // Holds `value`, or nothing when it is as good as empty (the caller says).
    void assign(T value, bool empty) {
        if (empty) {
            value_.reset();
        } else if (value_) {
            *value_ = std::move(value);
        } else {
            value_ = std::make_unique<T>(std::move(value));
        }
    }
    void reset() { value_.reset(); }

  private:
    static const T& none() {
        static const T empty{};
        return empty;
    }

    std::unique_ptr<T> value_;
};

}  // namespace arbiter::reference
