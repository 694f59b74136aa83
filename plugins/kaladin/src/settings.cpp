#include "settings.hpp"

namespace arbiter::kaladin {

Settings Settings::parse(const ConfigTable& t) {
    Settings s;
    s.tick_rate_hz = t.number("tick_rate_hz", s.tick_rate_hz, Range::between(0.5, 1000.0));
    s.rate_window_s = t.number("rate_window_s", s.rate_window_s, Range::between(1.0, 600.0));
    s.rate_limit_per_min = t.number("rate_limit_per_min", s.rate_limit_per_min, Range::positive());
    s.rate_tripwire_per_min =
        t.number("rate_tripwire_per_min", s.rate_tripwire_per_min, Range::positive());
    s.rate_tripwire_tick_share =
        t.number("rate_tripwire_tick_share", s.rate_tripwire_tick_share, Range::between(0.01, 1.0));
    if (s.rate_tripwire_per_min < s.rate_limit_per_min)
        throw ConfigError("rate_tripwire_per_min", "expected at least rate_limit_per_min");
    s.window_intervals = static_cast<uint32_t>(
        t.integer("window_intervals", s.window_intervals, Range::between(10, 100000)));
    s.window_s = t.number("window_s", s.window_s, Range::between(1.0, 3600.0));
    s.window_step =
        static_cast<uint32_t>(t.integer("window_step", s.window_step, Range::between(1, 1000)));
    s.cv_limit = t.number("cv_limit", s.cv_limit, Range::between(0.0, 10.0));
    s.cv_score_at_limit =
        t.number("cv_score_at_limit", s.cv_score_at_limit, Range::between(0.0, 1.0));
    s.cv_baseline_margin =
        t.number("cv_baseline_margin", s.cv_baseline_margin, Range::between(0.0, 1.0));
    s.entropy_limit_bits =
        t.number("entropy_limit_bits", s.entropy_limit_bits, Range::between(0.0, 64.0));
    s.reaction_min_pairs = static_cast<uint32_t>(
        t.integer("reaction_min_pairs", s.reaction_min_pairs, Range::between(1, 10000)));
    s.reaction_limit_ms =
        t.number("reaction_limit_ms", s.reaction_limit_ms, Range::between(1.0, 10000.0));
    s.reaction_tripwire_ms =
        t.number("reaction_tripwire_ms", s.reaction_tripwire_ms, Range::between(0.0, 10000.0));
    if (s.reaction_tripwire_ms > s.reaction_limit_ms)
        throw ConfigError("reaction_tripwire_ms", "expected at most reaction_limit_ms");
    s.reaction_keep_pairs = static_cast<uint32_t>(
        t.integer("reaction_keep_pairs", s.reaction_keep_pairs, Range::between(1, 100000)));
    if (s.reaction_keep_pairs < s.reaction_min_pairs)
        throw ConfigError("reaction_keep_pairs", "expected at least reaction_min_pairs");
    s.precision_block_s =
        t.number("precision_block_s", s.precision_block_s, Range::between(10.0, 86400.0));
    s.precision_min_aims = static_cast<uint32_t>(
        t.integer("precision_min_aims", s.precision_min_aims, Range::between(1, 100000)));
    s.precision_min_session_s = t.number("precision_min_session_s", s.precision_min_session_s,
                                         Range::between(60.0, 7 * 86400.0));
    s.precision_min_blocks = static_cast<uint32_t>(
        t.integer("precision_min_blocks", s.precision_min_blocks, Range::between(3, 100000)));
    if (s.precision_min_session_s < 2 * s.precision_block_s)
        throw ConfigError("precision_min_session_s", "expected at least 2 x precision_block_s");
    s.precision_spread_limit_mrad = t.number(
        "precision_spread_limit_mrad", s.precision_spread_limit_mrad, Range::between(0.0, 1000.0));
    s.precision_widening_limit =
        t.number("precision_widening_limit", s.precision_widening_limit, Range::between(1.0, 10.0));
    s.precision_widening_floor_mrad =
        t.number("precision_widening_floor_mrad", s.precision_widening_floor_mrad,
                 Range::between(0.0, 100.0));
    s.precision_view_delay_ms =
        t.number("precision_view_delay_ms", s.precision_view_delay_ms, Range::between(0.0, 1000.0));
    s.precision_min_range_m =
        t.number("precision_min_range_m", s.precision_min_range_m, Range::between(0.01, 10000.0));
    s.baseline_min_samples = static_cast<uint32_t>(
        t.integer("baseline_min_samples", s.baseline_min_samples, Range::between(1, 100000000)));
    s.quantum_window_changes = static_cast<uint32_t>(
        t.integer("quantum_window_changes", s.quantum_window_changes, Range::between(10, 100000)));
    s.quantum_max_step_rad =
        t.number("quantum_max_step_rad", s.quantum_max_step_rad, Range::between(0.0, 0.1));
    s.quantum_tolerance =
        t.number("quantum_tolerance", s.quantum_tolerance, Range::between(0.0, 0.25));
    s.quantum_score = t.number("quantum_score", s.quantum_score, Range::between(0.0, 1.0));
    t.reject_unknown_keys();
    return s;
}

}  // namespace arbiter::kaladin
