// Deterministic random numbers for the match simulator.
//
// std::mt19937_64's raw output is fixed by the C++ standard, so it is the same with every
// standard library; std::uniform_real_distribution, std::normal_distribution and the
// others are not. The transforms below are our own, so that the same seed gives the same
// match, byte for byte, whatever library the simulator was built with.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace arbiter::tools {

// SplitMix64's finaliser: a good 64-bit mix, to derive independent seeds.
constexpr uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The seed of one independent stream (a player, the relay) of a match's seed.
constexpr uint64_t derive_seed(uint64_t seed, uint64_t stream) {
    return mix64(mix64(seed) ^ mix64(stream + 1));
}

class Rng {
  public:
    explicit Rng(uint64_t seed) : engine_(seed) {}

    uint64_t bits() { return engine_(); }
    // Uniform in [0, 1), 53 bits.
    double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    // Uniform in [0, n), without modulo bias; n > 0.
    uint64_t below(uint64_t n) {
        const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t x = engine_();
        while (x >= limit)
            x = engine_();
        return x % n;
    }
    bool chance(double p) { return uniform() < p; }
    // Standard normal, by Box-Muller (one value per call, so no hidden state).
    double normal() {
        const double u1 = 1.0 - uniform();  // (0, 1]
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    double normal(double mean, double sd) { return mean + sd * normal(); }
    double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }
    double lognormal(double median, double sigma) { return median * std::exp(sigma * normal()); }

  private:
    std::mt19937_64 engine_;
};

}  // namespace arbiter::tools
