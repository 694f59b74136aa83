// View changes quantised to one tiny step (docs/aim.md, "kaladin"): a sensitivity hack, or
// an aim helper that moves the view in steps finer than any mouse at any sensitivity a
// game offers, leaves yaw changes that are all whole multiples of one step smaller than
// a mouse count ever turns. A mouse also moves the view in steps (one count times the
// sensitivity), but the step is far coarser; the default limit (2e-5 rad, 0.0011 degree)
// is under the finest step of common shooters' lowest sensitivity (Counter-Strike's 0.022
// degree a count at sensitivity 0.1: 3.8e-5 rad).
//
// The fit: over a window of the player's latest yaw changes (wrapped into (-pi, pi]), the
// smallest one is the first estimate of the step, refined change by change from the
// smallest up (the step is their sum over the sum of their multiples), and every change
// must lie within `tolerance` of a whole multiple of it. Random changes never fit: each
// lies within the tolerance of a multiple by chance with probability 2 x tolerance.
//
// A yaw crosses as a float: near 2 pi it is held to 4.8e-7 rad, so a float's own grid
// makes every change a multiple of a step that fine. No step under 20 times the float
// resolution of the yaw is measured (min_step_for): 9.5e-6 rad for any yaw within 2 pi;
// a game whose yaw grows without bound (turning adds up) loses the check as it grows.
#pragma once

#include <cstddef>
#include <optional>

#include <arbiter/sdk/ring.hpp>

namespace arbiter::kaladin {

struct QuantumFit {
    double step_rad = 0;
    double worst_residual = 0;  // of a change from its multiple, in steps
    double largest_multiple = 0;
    size_t changes = 0;
};

// The changes' common step, when all of them are multiples of one within `tolerance` and
// it is at least `min_step`.
std::optional<QuantumFit> fit_quantum(const Ring<double>& changes, double tolerance,
                                      double min_step);
// 20 times a float's resolution at |yaw| (at least at 2 pi).
double min_step_for(double yaw);

// A player's latest yaw and the yaw changes seen since (non-zero ones only).
struct QuantumTracker {
    std::optional<double> last_yaw;
    Ring<double> changes;
    // Adds a yaw; returns true when a change was kept (the window is `keep` long).
    bool add(double yaw, size_t keep);
};

}  // namespace arbiter::kaladin
