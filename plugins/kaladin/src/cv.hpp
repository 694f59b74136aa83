// Metronomic timing: the coefficient of variation (standard deviation ÷ mean) of the
// intervals between distinct inputs.
//
// After lila's Statistics.scala, with two deliberate differences (docs/detection.md,
// "plugins/kaladin"): the windows are long (at least 100 intervals and at least 30 s: on 20
// intervals real players go down to 0.003), and lila's 100 ms is not added to each interval
// (it was made for chess moves that take seconds; on intervals of a tenth of a second it
// halves the CV). Like lila's streak windows, the single shortest and longest interval of
// each window are left out, so one lag spike or one pause does not decide the result.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "inputs.hpp"

namespace arbiter::kaladin {

// The window a CV or an entropy is measured on: the newest inputs that give at least
// `min_intervals` intervals over at least `min_span_us` of relay time.
struct IntervalWindow {
    std::vector<int64_t> intervals_us;  // in order
    int64_t from_us = 0, to_us = 0;
};
std::optional<IntervalWindow> newest_window(const Ring<Input>& recent, size_t min_intervals,
                                            int64_t min_span_us);

// The CV of the intervals, the single shortest and longest left out (sample standard
// deviation). nullopt for fewer than 4 intervals or a mean of 0.
std::optional<double> trimmed_cv(std::vector<int64_t> intervals_us);

// 0 at or above the limit; under it, at_limit just below the limit rising linearly to 1 at
// a CV of 0 (at_limit 0: the plain distance below the limit).
double cv_score(double cv, double limit, double at_limit = 0.0);

}  // namespace arbiter::kaladin
