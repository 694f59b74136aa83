// Asking the memory system for data ahead of its use (look_ahead.hpp says when that pays).
// Free of the rest of the SDK, so that a plugin's plain data structures may use it.
#pragma once

#include <cstddef>
#include <span>

namespace arbiter {

// Asks the memory system for the cache line at `address` (a hint: nothing is read, and
// no address faults).
//
// The empty asm is what keeps the hint. GCC takes a loop whose body has no side effect
// but a prefetch as work it may drop (C++ lets it assume such a loop ends, and the hint is
// no side effect to it): with -O3 -DNDEBUG it deleted a look-ahead that was tried, the
// finds and every prefetch, and left the handlers waiting on memory as if it were not
// there (docs/performance.md, players). Handing it the address as an input of an asm it
// cannot see into makes the address, and so the find behind it, needed.
inline void prefetch_line(const void* address) {
    __builtin_prefetch(address);
    asm volatile("" : : "r"(address));
}

// Asks the memory system for every cache line of `items` (a hint: nothing is read, and an
// empty span asks for nothing).
template <class T>
void prefetch_span(std::span<const T> items) {
    constexpr size_t kLine = 64;
    const auto* first = reinterpret_cast<const char*>(items.data());
    const size_t bytes = items.size_bytes();
    if (bytes == 0) return;
    for (size_t at = 0; at < bytes; at += kLine)
        prefetch_line(first + at);
    prefetch_line(first + bytes - 1);  // the last line, when the span is not aligned
}

}  // namespace arbiter
