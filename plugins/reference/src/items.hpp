// Inventory checks as pure functions of one change, the item table and the relay's
// measures: stack size, unknown item ids, a unique item held twice, and items acquired
// faster than they respawn (docs/detection.md, "Items").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hits.hpp"

namespace arbiter::reference {

struct ItemLimits {
    int64_t stack = 0;     // most one player may hold; 0: no limit
    bool unique = false;   // one player may hold one at most
    double respawn_s = 0;  // the shortest time between two acquisitions; 0: not checked
};

struct ItemSettings {
    // An item the table does not name is a signal; only when the table names any, since
    // an empty table means the game gave none.
    bool known_only = true;
    double window_s = 60.0;            // relay time over which acquisitions are counted
    double max_lag_allowance_s = 2.0;  // the most a window is widened by a silence
    std::vector<std::string> rate_sources = {"pickup"};  // sources that respawn limits
    std::map<std::string, ItemLimits> items;

    const ItemLimits* find(const std::string& id) const;
    bool rate_limited(const std::string& source) const;
};

// A count past a hard limit is an impossible state: the score starts high at one over
// and rises with the excess.
double impossible_score(double value, double limit);

// count_after against the item's stack; nullopt within it or when not limited.
std::optional<Excess> check_stack(int64_t count_after, const ItemLimits& item);

// count_after of a unique item above one.
std::optional<Excess> check_unique(int64_t count_after, const ItemLimits& item);

// An item id not in the table, when the table is in force.
bool is_unknown_item(const std::string& id, const ItemSettings& settings);

struct AcquisitionMeasure {
    int64_t acquisitions = 0;
    int64_t allowed = 0;
    double window_s = 0;  // relay time from the window's first acquisition to its last
    double allowance_s = 0;
    int64_t first_us = 0;
    int64_t last_us = 0;
    double score = 0;
};

// The acquisitions of one item (relay times, oldest first) in the window ending at the
// last one, against one per respawn time over the window and its lag allowance.
std::optional<AcquisitionMeasure> check_acquisition_rate(const std::deque<int64_t>& times_us,
                                                         const ItemLimits& item, double allowance_s,
                                                         const ItemSettings& settings);

}  // namespace arbiter::reference
