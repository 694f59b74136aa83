#include "huffman.hpp"

#include <algorithm>

namespace arbiter::ddnet {

namespace {

// The frequency of each byte value (and last, of the end-of-data symbol) that the
// Teeworlds/DDNet format builds its one Huffman tree from: data of the format, as defined
// by DDNet's src/engine/shared/huffman.cpp (CHuffman::ms_aFreqTable; the same table as
// Teeworlds 0.6). A different number anywhere gives another tree and unreadable demos.
constexpr std::array<uint32_t, Huffman::kSymbols> kFrequencies = {
    1u << 30, 4545, 2657, 431, 1950, 919, 444, 482, 2244, 617,  838, 542, 715,  1814, 304, 240, 754,
    212,      647,  186,  283, 131,  146, 166, 543, 164,  167,  136, 179, 859,  363,  113, 157, 154,
    204,      108,  137,  180, 202,  176, 872, 404, 168,  134,  151, 111, 113,  109,  120, 126, 129,
    100,      41,   20,   16,  22,   18,  18,  17,  19,   16,   37,  13,  21,   362,  166, 99,  78,
    95,       88,   81,   70,  83,   284, 91,  187, 77,   68,   52,  68,  59,   66,   61,  638, 71,
    157,      50,   46,   69,  43,   11,  24,  13,  19,   10,   12,  12,  20,   14,   9,   20,  20,
    10,       10,   15,   15,  12,   12,  7,   19,  15,   14,   13,  18,  35,   19,   17,  14,  8,
    5,        15,   17,   9,   15,   14,  18,  8,   10,   2173, 134, 157, 68,   188,  60,  170, 60,
    194,      62,   175,  71,  148,  67,  167, 78,  211,  67,   156, 69,  1674, 90,   174, 53,  147,
    89,       181,  51,   174, 63,   163, 80,  167, 94,   128,  122, 223, 153,  218,  77,  200, 110,
    190,      73,   174,  69,  145,  66,  277, 143, 141,  60,   136, 53,  180,  57,   142, 57,  158,
    61,       166,  112,  152, 92,   26,  22,  21,  28,   20,   26,  30,  21,   32,   27,  20,  17,
    23,       21,   30,   22,  22,   21,  27,  25,  17,   27,   23,  18,  39,   26,   15,  21,  12,
    18,       18,   27,   20,  18,   15,  19,  11,  17,   33,   12,  18,  15,   19,   18,  16,  26,
    17,       18,   9,    10,  25,   22,  22,  17,  20,   16,   6,   16,  15,   20,   14,  18,  24,
    335,      1};

}  // namespace

const Huffman& Huffman::instance() {
    static const Huffman tree;
    return tree;
}

Huffman::Huffman() {
    // The format's construction, step for step (any other tie-breaking gives other codes):
    // keep the live nodes ordered by falling frequency, stably, and join the two rarest
    // into a new node whose child 0 is the rarest; the new node takes the second rarest's
    // place in the list before the list is ordered again.
    struct Live {
        uint16_t node;
        uint64_t frequency;
    };
    std::vector<Live> live;
    for (uint16_t s = 0; s < kSymbols; ++s) {
        nodes_[s].symbol = s;
        nodes_[s].length = 1;  // marks a symbol until its real length is set
        live.push_back({s, kFrequencies[s]});
    }
    uint16_t next = kSymbols;
    while (live.size() > 1) {
        std::stable_sort(live.begin(), live.end(),
                         [](const Live& a, const Live& b) { return b.frequency < a.frequency; });
        Live& second = live[live.size() - 2];
        const Live& rarest = live.back();
        Node& joined = nodes_[next];
        joined.length = 0;
        joined.child[0] = rarest.node;
        joined.child[1] = second.node;
        second = {next, second.frequency + rarest.frequency};
        ++next;
        live.pop_back();
    }
    root_ = static_cast<uint16_t>(next - 1);
    assign_codes(root_, 0, 0);
}

void Huffman::assign_codes(uint16_t node, uint32_t bits, uint32_t depth) {
    Node& n = nodes_[node];
    if (n.length == 0) {
        assign_codes(n.child[1], bits | (1u << depth), depth + 1);
        assign_codes(n.child[0], bits, depth + 1);
        return;
    }
    n.bits = bits;
    n.length = depth;
}

std::optional<std::vector<uint8_t>> Huffman::decode(std::span<const uint8_t> in,
                                                    size_t max_out) const {
    std::vector<uint8_t> out;
    out.reserve(std::min(max_out, in.size() * 4));
    size_t byte = 0;
    unsigned bit = 0;
    for (;;) {
        // Walk from the root, one bit at a time, least significant bit of each byte first.
        uint16_t node = root_;
        while (nodes_[node].length == 0) {
            if (byte >= in.size()) return std::nullopt;  // ends inside a code
            const unsigned b = (in[byte] >> bit) & 1u;
            if (++bit == 8) {
                bit = 0;
                ++byte;
            }
            node = nodes_[node].child[b];
        }
        const uint16_t symbol = nodes_[node].symbol;
        if (symbol == kEofSymbol) return out;
        if (out.size() >= max_out) return std::nullopt;
        out.push_back(static_cast<uint8_t>(symbol));
    }
}

std::vector<uint8_t> Huffman::encode(std::span<const uint8_t> in) const {
    std::vector<uint8_t> out;
    uint64_t pending = 0;
    unsigned count = 0;
    auto put = [&](uint16_t symbol) {
        const Node& n = nodes_[symbol];
        pending |= static_cast<uint64_t>(n.bits) << count;
        count += n.length;
        while (count >= 8) {
            out.push_back(static_cast<uint8_t>(pending & 0xff));
            pending >>= 8;
            count -= 8;
        }
    };
    for (uint8_t b : in)
        put(b);
    put(kEofSymbol);
    if (count > 0) out.push_back(static_cast<uint8_t>(pending & 0xff));
    return out;
}

}  // namespace arbiter::ddnet
