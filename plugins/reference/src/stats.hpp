// Progression checks as pure functions: experience per hour, no damage taken through long
// combat, and resources that are spent but never go down (docs/detection.md, "Stats").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <arbiter/sdk/ring.hpp>

#include "hits.hpp"

namespace arbiter::reference {

struct StatLimits {
    std::string experience_stat = "experience";
    double max_experience_per_hour = 36'000.0;  // the game's theoretical maximum
    double experience_window_s = 600.0;         // relay time experience is summed over
    std::string damage_stat = "damage_taken";
    double combat_window_s = 60.0;  // relay time hits taken are counted over
    int64_t min_hits_taken = 10;    // damaging hits in the window that must hurt
    std::string resource_prefix = "resource.";
    int64_t confident_count = 3;  // resource spends that did not spend, for full confidence
};

struct StatGain {
    int64_t t_us = 0;
    double delta = 0;
};

struct RateMeasure {
    double per_hour = 0;
    double limit_per_hour = 0;
    double gained = 0;
    double window_s = 0;
    int64_t first_us = 0;
    int64_t last_us = 0;
    int64_t changes = 0;
    double score = 0;
};

// Experience gained (relay times, oldest first) in the window ending at the last gain,
// divided by the whole window: a quest's one large reward averages out over it, a farm
// that gains without pause does not.
std::optional<RateMeasure> check_experience_rate(const Ring<StatGain>& gains,
                                                 const StatLimits& limits);

struct InvulnerableMeasure {
    int64_t hits_taken = 0;
    double window_s = 0;
    double score = 0;
    double confidence = 0;
};

// Damaging hits the player took in the combat window against damage it registered in it.
// `damage_events` counts the player's damage stat changes in the same window.
std::optional<InvulnerableMeasure> check_invulnerable(int64_t hits_taken, int64_t damage_events,
                                                      const StatLimits& limits);

// A resource spend (delta < 0) whose value did not go down from `previous` by it.
bool resource_not_spent(std::optional<double> previous, double delta, double value_after);

}  // namespace arbiter::reference
