// The built-in human rhythm: a summary of the 30 StarCraft II players of
// ../shared/data/human-traces/dev-actions.csv, for machines without ../shared.
#pragma once

#include <cstdint>
#include <span>

namespace arbiter::tools::builtin_rhythm {

// (percentile, seconds): the distribution of gaps between a player's distinct timestamps.
struct GapKnot {
    double percentile;
    double gap_s;
};
// How many actions share a timestamp, and how often.
struct Multiplicity {
    uint16_t actions;
    uint32_t count;
};
// How often each action kind occurs.
struct KindShare {
    const char* kind;
    bool repeat;
    uint32_t count;
};

std::span<const GapKnot> gap_knots();
std::span<const Multiplicity> multiplicities();
std::span<const KindShare> kind_shares();
// StarCraft II's game loop, which quantises the measured gaps.
inline constexpr double kQuantumS = 1.0 / 22.4;

}  // namespace arbiter::tools::builtin_rhythm
