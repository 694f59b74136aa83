// The variable-length integers of Teeworlds and DDNet (DDNet's
// src/engine/shared/compression.cpp, CVariableInt): one to five bytes per 32-bit integer.
// The first byte holds the sign (bit 6) and six bits of the value, each following byte
// seven more (the fifth, four); bit 7 says another byte follows. A negative number is
// stored as its complement. Demo chunks are arrays of such integers; so are messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace arbiter::ddnet {

constexpr size_t kMaxVarintBytes = 5;

// Reads one integer at `pos` and moves `pos` past it; nothing when the input ends first.
std::optional<int32_t> read_varint(std::span<const uint8_t> in, size_t& pos);
// Appends the coding of `value`.
void write_varint(std::vector<uint8_t>& out, int32_t value);

// A whole buffer of integers: nothing when one is cut short or when there would be more
// than `max_ints`, the caller's bound.
std::optional<std::vector<int32_t>> read_varints(std::span<const uint8_t> in, size_t max_ints);
std::vector<uint8_t> write_varints(std::span<const int32_t> values);

// The bytes of 32-bit integers as the format lays them out in memory (little-endian):
// a demo's message chunks are bytes padded to a multiple of four and packed as integers.
std::vector<uint8_t> ints_to_bytes(std::span<const int32_t> values);
std::vector<int32_t> bytes_to_ints(std::span<const uint8_t> bytes);  // pads with zeros

}  // namespace arbiter::ddnet
