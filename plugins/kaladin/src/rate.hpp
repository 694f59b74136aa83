// Sustained rate: distinct inputs per minute over a sliding window of relay time.
//
// docs/detection.md, "plugins/kaladin": by default a signal above 600 a minute (with a
// baseline, beyond the tier's 99.9th percentile, never past the trip-wire), a trip-wire
// above 2,000 or above input on 90 % of the relay's ticks, whichever is lower: a 22.4 Hz
// relay has only 1,344 ticks a minute.
#pragma once

#include <cstdint>
#include "inputs.hpp"

namespace arbiter::kaladin {

struct RateMeasure {
    double per_min = 0;   // distinct inputs a minute over the window
    uint64_t inputs = 0;  // inputs in the window
    int64_t from_us = 0;  // the window: [from_us, to_us]
    int64_t to_us = 0;
    bool full = false;  // the player's inputs span the whole window
};

// The rate over the `window_us` before the newest input of `recent`.
RateMeasure measure_rate(const Ring<Input>& recent, int64_t window_us, int64_t first_input_us);

// The trip-wire: min(absolute, share × the relay's ticks a minute).
double rate_tripwire(double absolute_per_min, double tick_share, double tick_rate_hz);

// 0 at the limit, 1 at the trip-wire; growing linearly between.
double rate_score(double per_min, double limit, double tripwire);

}  // namespace arbiter::kaladin
