// Relay clock checks as pure functions: orders stamped with a tick the relay has not
// opened yet, a client clock running faster than the relay's, and a run's claimed length
// against the relay's wall time (docs/detection.md, "Clock").
#pragma once

#include <cstdint>
#include <optional>

#include <arbiter/sdk/ring.hpp>

#include "hits.hpp"

namespace arbiter::reference {

struct ClockLimits {
    double tick_rate_hz = 20.0;       // until a MatchStart gives the match's own
    int64_t ahead_ticks = 2;          // a claimed tick this far past the relay's is fine
    int64_t confident_count = 5;      // orders ahead for full confidence
    double max_rate = 1.05;           // client elapsed time / relay elapsed time
    double rate_window_s = 60.0;      // relay time the rate is measured over...
    double rate_min_window_s = 30.0;  // ...once it spans at least this much
    double rate_step_s = 5.0;         // the trend's steps: one least-delayed order each
    // Kept so that configs that set it stay valid: the trend needs no lag allowance.
    double max_lag_allowance_s = 2.0;
    double run_length_leeway_s = 2.0;  // a run may claim this much less than the relay saw
};

// ahead = claimed tick - relay tick, past the allowance.
std::optional<Excess> check_tick_ahead(uint64_t relay_tick, uint64_t claimed_tick,
                                       const ClockLimits& limits);

struct ClockSample {
    int64_t relay_us = 0;
    int64_t client_us = 0;
};

struct ClockRateMeasure {
    double rate = 0;     // over the trend, the two pairs that gained most set aside
    double median = 0;   // the pairs' median rate
    double slowest = 0;  // the steps' rates, lowest and highest
    double fastest = 0;
    size_t steps = 0;    // consecutive pairs of the trend measured
    double relay_s = 0;  // from the trend's first point to its last
    double client_s = 0;
    ClockSample first, last;
    double score = 0;
};

// The client's clock against the relay's, robust to lag. Lag only ever delays an order,
// so in each step of `rate_step_s` of relay time the order with the least delay (relay
// time - client time smallest) is the one closest to the truth; the trend is the series of
// those, one per step. The clock's rate is client time elapsed over relay time elapsed
// along the trend, less the two pairs of consecutive points that gained the most client
// time. A constant offset is latency and cancels out; a lag spike delays a point, and the
// pair after it gains what the pair before it lost; a step of the client's clock (an NTP
// correction) gains in one pair only, and up to two of them are set aside. A clock run
// fast gains in every pair, and one switched on and off in every stretch it is on.
//
// Adds `sample` to the trend (one point per step, the least delayed, oldest first, none
// older than `rate_window_s` before it). True when a step has just closed: the moment to
// call check_clock_rate.
bool add_to_clock_trend(Ring<ClockSample>& trend, ClockSample sample, const ClockLimits& limits);

// The rate over the trend's closed steps (all but the last point), once they span
// `rate_min_window_s`; nothing when it is within `max_rate`.
std::optional<ClockRateMeasure> check_clock_rate(const Ring<ClockSample>& trend,
                                                 const ClockLimits& limits);

struct RunLengthMeasure {
    double relay_s = 0;    // relay wall time from start to end
    double claimed_s = 0;  // what the client claims
    double short_s = 0;    // how much shorter the claim is
    double score = 0;
};

// A claimed run shorter than the relay's wall time by more than the leeway.
std::optional<RunLengthMeasure> check_run_length(int64_t started_unix_us, int64_t ended_unix_us,
                                                 int64_t claimed_length_us,
                                                 const ClockLimits& limits);

}  // namespace arbiter::reference
