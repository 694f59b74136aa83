// Relay clock checks as pure functions: orders stamped with a tick the relay has not
// opened yet, a client clock running faster than the relay's, and a run's claimed length
// against the relay's wall time (DETECTION.md, row "clock").
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "hits.hpp"

namespace arbiter::reference {

struct ClockLimits {
    double tick_rate_hz = 20.0;       // until a MatchStart gives the match's own
    int64_t ahead_ticks = 2;          // a claimed tick this far past the relay's is fine
    int64_t confident_count = 5;      // orders ahead for full confidence
    double max_rate = 1.05;           // client elapsed time / relay elapsed time
    double rate_window_s = 30.0;      // relay time the rate is measured over...
    double rate_min_window_s = 10.0;  // ...once it spans at least this much
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
    double rate = 0;
    double relay_s = 0;
    double client_s = 0;
    double allowance_s = 0;
    ClockSample first, last;
    double score = 0;
};

// Client time elapsed over relay time elapsed (plus the lag allowance, which only lowers
// the rate) in the window ending at the last sample. A constant offset cancels out: it is
// latency; only a rate is a clock running fast.
std::optional<ClockRateMeasure> check_clock_rate(const std::deque<ClockSample>& samples,
                                                 double allowance_s, const ClockLimits& limits);

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
