// kaladin's config ([plugins.kaladin.config]); docs/detection.md, "plugins/kaladin", gives
// each default and where it comes from.
#pragma once

#include <cstdint>

#include <arbiter/sdk/config.hpp>

namespace arbiter::kaladin {

struct Settings {
    // Used for a match whose MatchStart the plugin did not see (or that gives no rate).
    double tick_rate_hz = 20.0;

    double rate_window_s = 30.0;
    double rate_limit_per_min = 600.0;
    double rate_tripwire_per_min = 2000.0;
    double rate_tripwire_tick_share = 0.9;

    // Windows of the CV and the entropy: at least this many intervals and seconds.
    uint32_t window_intervals = 100;
    double window_s = 30.0;
    // A new window is measured every this many distinct inputs.
    uint32_t window_step = 5;
    // Below this trimmed CV a window is a script's. Not the seed's 0.05: real humans never
    // go below 0.16 on windows of 100 intervals (../shared/data/human-traces; 0.29 on
    // kaladin's windows of 30 s at least), and scripts that jitter a fixed delay live in
    // between (uniform jitter of 30 %: about 0.075). docs/server-config.md has the margin.
    double cv_limit = 0.13;
    // The score of a window just under cv_limit, rising linearly to 1 at a CV of 0: above
    // the sample config's monitor_threshold (0.3), so that the whole band is at Monitor.
    double cv_score_at_limit = 0.35;
    // With a population baseline, the limit is its low tail times this: the tail is the
    // lowest humans reach, and a limit at it would take the lowest of them.
    double cv_baseline_margin = 0.8;
    double entropy_limit_bits = 1.0;

    uint32_t reaction_min_pairs = 20;
    double reaction_limit_ms = 100.0;
    double reaction_tripwire_ms = 40.0;
    uint32_t reaction_keep_pairs = 200;

    // Fatigue-free precision (precision.hpp): aim errors of aimed orders, their median per
    // block of relay time, judged over a long session. The spread limit is a fixed default
    // (population baselines hold no precision metric yet).
    double precision_block_s = 600.0;
    uint32_t precision_min_aims = 20;  // per block; a block with fewer is not counted
    double precision_min_session_s = 7200.0;
    uint32_t precision_min_blocks = 6;
    double precision_spread_limit_mrad = 5.0;
    double precision_widening_limit = 1.1;
    double precision_widening_floor_mrad = 0.25;
    // The game's own display delay (client interpolation), rewound on top of the round trip.
    double precision_view_delay_ms = 0.0;
    double precision_min_range_m = 2.0;

    // A baseline tier (or the pooled tier) is used only with at least this many
    // samples of a metric; a percentile of fewer players is not a far tail.
    uint32_t baseline_min_samples = 100;
    // View changes quantised to one step (quantum.hpp): over the latest this-many non-zero
    // yaw changes, all within quantum_tolerance (of a step) of multiples of one step
    // finer than quantum_max_step_rad.
    uint32_t quantum_window_changes = 100;
    double quantum_max_step_rad = 2e-5;
    double quantum_tolerance = 0.05;
    double quantum_score = 0.5;

    // Throws ConfigError naming the key.
    static Settings parse(const ConfigTable& table);
};

}  // namespace arbiter::kaladin
