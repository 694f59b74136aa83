// Asking the memory system for data ahead of its use (look_ahead.hpp says when that pays).
// Free of the rest of the SDK, so that a plugin's plain data structures may use it.
#pragma once

#include <cstddef>
#include <span>

namespace arbiter {

// Asks the memory system for every cache line of `items` (a hint: nothing is read, and an
// empty span asks for nothing).
template <class T>
void prefetch_span(std::span<const T> items) {
    constexpr size_t kLine = 64;
    const auto* first = reinterpret_cast<const char*>(items.data());
    const size_t bytes = items.size_bytes();
    if (bytes == 0) return;
    for (size_t at = 0; at < bytes; at += kLine)
        __builtin_prefetch(first + at);
    __builtin_prefetch(first + bytes - 1);  // the last line, when the span is not aligned
}

}  // namespace arbiter
