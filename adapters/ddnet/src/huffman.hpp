// The Huffman code of Teeworlds and DDNet: every demo chunk (and every network packet
// flagged as compressed) is coded with one fixed tree, built from a fixed table of byte
// frequencies that the format defines (DDNet's src/engine/shared/huffman.cpp). Only
// decoding is needed here; the encoder exists for the tests, which build chunks with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace arbiter::ddnet {

class Huffman {
  public:
    static constexpr int kEofSymbol = 256;
    static constexpr int kSymbols = 257;

    // The one tree of the format (built once, on first use).
    static const Huffman& instance();

    // Decodes `in` up to its end-of-data symbol. Returns nothing when the input ends before
    // it, or when the output would pass `max_out` bytes: the caller's bound.
    std::optional<std::vector<uint8_t>> decode(std::span<const uint8_t> in, size_t max_out) const;
    // Codes `in`, ending with the end-of-data symbol.
    std::vector<uint8_t> encode(std::span<const uint8_t> in) const;

  private:
    Huffman();

    struct Node {
        uint32_t bits = 0;    // the code, first bit in bit 0 (a symbol only)
        uint32_t length = 0;  // bits of the code; 0 for an inner node
        uint16_t child[2] = {0xffff, 0xffff};
        uint16_t symbol = 0;
    };
    void assign_codes(uint16_t node, uint32_t bits, uint32_t depth);

    std::array<Node, kSymbols * 2 - 1> nodes_{};
    uint16_t root_ = 0;
};

}  // namespace arbiter::ddnet
