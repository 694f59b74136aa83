#include "world.hpp"

#include <algorithm>
#include <cmath>

#include "arbiter/tools/random.hpp"

namespace arbiter::tools::sim {

namespace {
constexpr double kTwoPi = 6.283185307179586;
constexpr double kSquadSpacingM = 250.0;
constexpr double kAnchorRadiusM = 40.0;
constexpr double kAnchorPeriodS = 120.0;  // the anchor moves at about 2 m/s
constexpr double kSpawnDistanceM = 150.0;
}  // namespace

double terrain_height(double x, double y) {
    return 4.0 * std::sin(x / 60.0) + 3.0 * std::cos(y / 45.0);
}

Squads::Squads(uint32_t players, uint64_t seed) : seed_(seed) {
    // Squads of 2 to 5: at least two squads as soon as there are three players, so that
    // there are targets both near (squad mates) and far (other squads).
    size_ = std::clamp<uint32_t>((players + 3) / 4, 2, 5);
    count_ = std::max<uint32_t>(1, (players + size_ - 1) / size_);
    side_ = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(count_))));
}

Vec2 Squads::centre(uint32_t squad) const {
    return {static_cast<double>(squad % side_) * kSquadSpacingM,
            static_cast<double>(squad / side_) * kSquadSpacingM};
}

double Squads::phase(uint32_t squad) const {
    return static_cast<double>(mix64(seed_ ^ (0x51ad5ull + squad)) >> 11) * 0x1.0p-53 * kTwoPi;
}

Vec2 Squads::anchor(uint32_t squad, double t_s) const {
    const Vec2 c = centre(squad);
    const double a = phase(squad) + kTwoPi * t_s / kAnchorPeriodS;
    return {c.x + kAnchorRadiusM * std::cos(a), c.y + kAnchorRadiusM * std::sin(a)};
}

Vec2 Squads::spawn(uint32_t squad) const {
    const Vec2 c = centre(squad);
    const double a = phase(squad) + kTwoPi / 2;
    return {c.x + kSpawnDistanceM * std::cos(a), c.y + kSpawnDistanceM * std::sin(a)};
}

}  // namespace arbiter::tools::sim
