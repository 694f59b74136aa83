// The simulated game: an arena with gentle hills, players in squads that roam around
// moving anchors, two weapons and a few items. Pure functions of the match seed, so that
// every player's simulation can consult it in any order.
#pragma once

#include <cstdint>
#include <string_view>

namespace arbiter::tools::sim {

struct Vec2 {
    double x = 0, y = 0;
};

// The game's rules, as docs/recorded-matches.md states them for analyzers' configs.
inline constexpr double kMaxSpeedMps = 20.0;  // horizontal
inline constexpr double kJumpSpeedMps = 4.5;  // a jump: about 0.92 s in the air
inline constexpr double kGravity = 9.81;
inline constexpr double kMaxExperiencePerHour = 20000.0;
inline constexpr double kRespawnDelayS = 3.0;

struct Weapon {
    std::string_view name;
    double range_m;
    double max_shots_per_s;
    double min_damage, max_damage;
};
inline constexpr Weapon kRifle{"rifle", 80.0, 10.0, 8.0, 12.0};
inline constexpr Weapon kPistol{"pistol", 40.0, 4.0, 12.0, 18.0};

struct Item {
    std::string_view id;
    int32_t stack;  // most one player may hold; 1 for a unique item
};
inline constexpr Item kItems[] = {
    {"wood", 64}, {"stone", 64}, {"arrows", 64}, {"potion", 8}, {"crown", 1}};
inline constexpr size_t kCommonItems = 4;  // the first four; the crown is unique
inline constexpr size_t kCrown = 4;
inline constexpr size_t kWood = 0;

// Terrain height under (x, y), metres.
double terrain_height(double x, double y);

class Squads {
  public:
    Squads(uint32_t players, uint64_t seed);
    uint32_t size() const { return size_; }
    uint32_t count() const { return count_; }
    // Players are dealt to squads in turn, so that squads differ in size by one at most:
    // squad s holds players s + 1, s + 1 + count(), s + 1 + 2 count(), ...
    uint32_t squad_of(uint32_t player) const { return (player - 1) % count_; }
    uint32_t first(uint32_t squad) const { return squad + 1; }
    uint32_t stride() const { return count_; }
    // Where a squad gathers at time t: a point circling its centre.
    Vec2 anchor(uint32_t squad, double t_s) const;
    // Where its players respawn: 150 m from its centre.
    Vec2 spawn(uint32_t squad) const;

  private:
    Vec2 centre(uint32_t squad) const;
    double phase(uint32_t squad) const;

    uint32_t size_;
    uint32_t count_;
    uint32_t side_;
    uint64_t seed_;
};

}  // namespace arbiter::tools::sim
