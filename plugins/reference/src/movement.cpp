#include "movement.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

namespace arbiter::reference {

double horizontal_distance(const Vec3& a, const Vec3& b) {
    // Not std::hypot: its care against overflow is for distances beyond 1e154, and the
    // positions are float32 on the wire (events.fbs), so a square stays far inside a
    // double. (A restored blob may hold any finite double; two positions 1e154 apart then
    // give an infinite distance instead of a huge one, as distance() below always did.)
    // glibc's hypot cost about 8% of the whole path with every bundled plugin.
    const double dx = a.x - b.x, dy = a.y - b.y;
    return std::sqrt(dx * dx + dy * dy);
}

double distance(const Vec3& a, const Vec3& b) {
    return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) +
                     (a.z - b.z) * (a.z - b.z));
}

int64_t typical_interval_us(const Track& track, int64_t since_us) {
    const auto& samples = track.samples;
    if (samples.size() < 2) return 0;
    // The first gap that ends at or after since_us (samples are in receive order).
    const auto first =
        std::lower_bound(samples.times_begin() + 1, samples.times_end(), since_us).index();
    // On the stack when it fits (it does at any usual rate): this runs for every position
    // update, and a fresh vector would cost an allocation each time. Not a thread_local
    // buffer: its destructor would keep the plugin loaded after a reload.
    const size_t count = samples.size() - first;
    if (count == 0) return 0;
    std::array<int64_t, 512> on_stack;
    std::vector<int64_t> on_heap;
    int64_t* gaps = on_stack.data();
    if (count > on_stack.size()) {
        on_heap.resize(count);
        gaps = on_heap.data();
    }
    for (size_t k = 0; k < count; ++k)
        gaps[k] = samples.time(first + k) - samples.time(first + k - 1);
    std::nth_element(gaps, gaps + count / 2, gaps + count);
    return gaps[count / 2];
}

int64_t typical_interval_us(const Track& track) {
    return typical_interval_us(track, std::numeric_limits<int64_t>::min());
}

SpacingMedian::Entry SpacingMedian::entry_of(const Track& track, size_t index) {
    return static_cast<Entry>(track.samples.first_seq() + index);
}

int64_t SpacingMedian::gap_of(const Track& track, Entry entry) {
    const auto index = static_cast<Entry>(entry - static_cast<Entry>(track.samples.first_seq()));
    return track.samples.time(index) - track.samples.time(index - 1u);
}

void SpacingMedian::insert(const Track& track, Entry entry, int64_t gap) {
    // After the gaps of its value: it is the newest.
    sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), gap,
                                    [&track](int64_t g, Entry e) { return g < gap_of(track, e); }),
                   entry);
}

void SpacingMedian::erase(const Track& track, Entry entry, int64_t gap) {
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), gap,
                               [&track](Entry e, int64_t g) { return gap_of(track, e) < g; });
    if (it != sorted_.end() && *it == entry) {
        sorted_.erase(it);
    } else {
        valid_ = false;  // not ours: recount
    }
}

void SpacingMedian::pushed(const Track& track) {
    const auto& samples = track.samples;
    if (samples.size() < 2) return;
    const size_t last = samples.size() - 1;
    const int64_t gap = samples.time(last) - samples.time(last - 1);
    if (gap < 0) ++descents_;
    if (!valid_) return;
    if (samples.size() > kMaxSamples) {
        valid_ = false;
        return;
    }
    insert(track, entry_of(track, last), gap);
    ++count_;
}

void SpacingMedian::popping_front(const Track& track) {
    const auto& samples = track.samples;
    if (samples.size() < 2) return;
    const int64_t gap = samples.time(1) - samples.time(0);
    if (gap < 0) --descents_;
    // The oldest gap of the track, in the set only if the set is every gap.
    if (!valid_ || count_ < samples.size() - 1) return;
    erase(track, entry_of(track, 1), gap);
    --count_;
}

void SpacingMedian::cleared() {
    sorted_.clear();
    count_ = 0;
    descents_ = 0;
    since_us_ = std::numeric_limits<int64_t>::min();
    valid_ = true;
}

bool SpacingMedian::rebuild(const Track& track, int64_t since_us) {
    const auto& samples = track.samples;
    sorted_.clear();
    count_ = 0;
    descents_ = 0;
    for (size_t i = 1; i < samples.size(); ++i)
        if (samples.time(i) < samples.time(i - 1)) ++descents_;
    valid_ = descents_ == 0 && samples.size() <= kMaxSamples;
    if (!valid_) return false;
    since_us_ = since_us;
    size_t first = samples.size();
    while (first > 1 && samples.time(first - 1) >= since_us)
        --first;
    for (size_t i = first; i < samples.size(); ++i) {
        sorted_.push_back(entry_of(track, i));
        ++count_;
    }
    // Oldest first among equal gaps, as insert keeps them.
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&track](Entry a, Entry b) { return gap_of(track, a) < gap_of(track, b); });
    return true;
}

int64_t SpacingMedian::value(const Track& track, int64_t since_us) {
    const auto& samples = track.samples;
    // Out of order, the binary search of typical_interval_us decides which gaps count.
    if (descents_ > 0) {
        valid_ = false;
        return typical_interval_us(track, since_us);
    }
    if (!valid_ || since_us < since_us_ ||
        count_ > samples.size() - std::min<size_t>(1, samples.size())) {
        if (!rebuild(track, since_us)) return typical_interval_us(track, since_us);
    }
    // Drop the gaps that end before since_us, oldest first.
    while (count_ > 0 && samples.time(samples.size() - count_) < since_us) {
        const size_t oldest = samples.size() - count_;
        erase(track, entry_of(track, oldest), samples.time(oldest) - samples.time(oldest - 1));
        --count_;
    }
    since_us_ = since_us;
    if (!valid_ && !rebuild(track, since_us)) return typical_interval_us(track, since_us);
    if (sorted_.empty()) return 0;
    return gap_of(track, sorted_[sorted_.size() / 2]);
}

double longest_wait_s(const Track& track, int64_t t0_us, const MovementLimits& limits,
                      int64_t typical_us) {
    // Look back over as long a stretch as the allowance may reach.
    const int64_t from_us =
        t0_us - static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) - 1'000'000;
    int64_t longest_us = 0;
    const auto& samples = track.samples;
    if (samples.size() > 1 && track.in_order) {
        // In order, the gaps that end in [from_us, t0_us] are one run of indexes: found by
        // two searches, then walked without a comparison of times per sample.
        const auto first =
            std::lower_bound(samples.times_begin() + 1, samples.times_end(), from_us);
        const auto last = std::upper_bound(first, samples.times_end(), t0_us);
        longest_us = samples.longest_step(first.index(), last.index());
    } else if (samples.size() > 1) {
        int64_t previous_us = samples.time(0);
        for (size_t i = 1; i < samples.size(); ++i) {
            const int64_t t_us = samples.time(i);
            if (t_us > t0_us) break;
            if (t_us >= from_us) longest_us = std::max(longest_us, t_us - previous_us);
            previous_us = t_us;
        }
    }
    // The usual spacing of updates is not lag: only the wait beyond it is.
    const int64_t late_us = std::max<int64_t>(0, longest_us - typical_us);
    return static_cast<double>(late_us) / 1e6;
}

double single_update_reach_m(const Track& track, const Sample& next, const MovementLimits& limits) {
    if (track.samples.empty() || !(limits.max_lag_allowance_s > 0)) return limits.teleport_distance;
    const Sample previous = track.samples.back();
    const double elapsed_s = static_cast<double>(next.t_us - previous.t_us) / 1e6;
    // The whole wait, not the wait beyond the usual spacing: right after a long silence the
    // track may hold little else, and the silence would be its usual spacing.
    const double stale_s = longest_wait_s(track, previous.t_us, limits, 0);
    return std::max(limits.teleport_distance, limits.max_speed * 2.0 * (elapsed_s + stale_s));
}

namespace {

double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits,
                       int64_t typical_us) {
    return std::min(longest_wait_s(track, t0_us, limits, typical_us), limits.max_lag_allowance_s);
}

// Where a window starting at sample `start` must start instead so that no silence the lag
// allowance cannot cover lies in the stretch its allowance looks back over: before the
// earliest such silence, so that the window spans it. An update received after a silence
// may show a position as old as the silence is long (the others it held back lost), and the
// allowance is capped; but the relay time between the last update before the silence and
// the window's end covers all the movement in between, whatever the silence's length.
// A cap of 0 asks for no lag tolerance at all: the start stays. wait_s: longest_wait_s
// at the start returned, for its allowance.
size_t span_long_silences(const Track& track, size_t start, const MovementLimits& limits,
                          int64_t typical_us, double& wait_s) {
    wait_s = 0;
    if (!(limits.max_lag_allowance_s > 0)) return start;
    const auto& samples = track.samples;
    const int64_t look_back_us = static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) + 1'000'000;
    for (;;) {
        // Only when longest_wait_s finds a wait over the cap (rare) is its stretch walked
        // again for the earliest such wait.
        const int64_t t0_us = samples.time(start);
        wait_s = longest_wait_s(track, t0_us, limits, typical_us);
        if (!(wait_s > limits.max_lag_allowance_s)) return start;
        const int64_t from_us = t0_us - look_back_us;
        size_t earliest = start;
        for (size_t i = 1; i < samples.size(); ++i) {
            const int64_t t_us = samples.time(i);
            if (t_us > t0_us) break;
            if (t_us < from_us) continue;
            const int64_t late_us = std::max<int64_t>(0, t_us - samples.time(i - 1) - typical_us);
            if (static_cast<double>(late_us) / 1e6 > limits.max_lag_allowance_s) {
                earliest = i - 1;
                break;
            }
        }
        if (earliest >= start) return start;
        start = earliest;
    }
}

}  // namespace

size_t window_start_index(const Track& track, size_t end_index, const MovementLimits& limits) {
    const auto& samples = track.samples;
    if (samples.empty() || end_index >= samples.size()) return samples.size();
    const size_t size = end_index + 1;  // the samples the window may use
    const int64_t end_us = samples.time(end_index);
    const int64_t window_us = static_cast<int64_t>(limits.window_s * 1e6);
    const auto last = samples.times_begin() + static_cast<std::ptrdiff_t>(size);
    auto it = std::upper_bound(samples.times_begin(), last, end_us - window_us);
    if (it == samples.times_begin()) return samples.size();  // shorter than a window
    size_t start = it.index() - 1;
    // Updates of a catch-up burst arrive together but were sent over the whole silence
    // before it: the first of them shows a position older than its receive time says.
    // Start from the burst's last update, the one sent closest to its arrival; but never
    // further than a quarter of the window, so that a window is never one update long.
    // The gap is absolute, not relative to the track's usual spacing: the updates of a
    // long catch-up burst can be most of a track, and must not redefine what normal is.
    const auto spacing_us = static_cast<int64_t>(limits.burst_gap_s * 1e6);
    const int64_t latest_us = samples.time(start) + window_us / 4;
    while (start + 2 < size && samples.time(start + 1) - samples.time(start) < spacing_us &&
           samples.time(start + 1) <= latest_us)
        ++start;
    return start;
}

size_t window_start_index(const Track& track, const MovementLimits& limits) {
    if (track.samples.empty()) return 0;  // shorter than a window
    return window_start_index(track, track.samples.size() - 1, limits);
}

double lag_allowance_s(const Track& track, int64_t t0_us, const MovementLimits& limits) {
    return lag_allowance_s(track, t0_us, limits, typical_interval_us(track));
}

std::optional<WindowMeasure> measure_window(const Track& track, size_t end_index,
                                            const MovementLimits& limits, int64_t typical_us) {
    if (end_index >= track.samples.size() || end_index < 1) return std::nullopt;
    size_t start = window_start_index(track, end_index, limits);
    if (start >= end_index) return std::nullopt;
    double wait_s = 0;
    start = span_long_silences(track, start, limits, typical_us, wait_s);
    // A start whose position the owner let go (only after the limits changed under it:
    // MovementArea::forget_positions) is no window.
    if (!track.samples.has_position(start)) return std::nullopt;
    const Sample end = track.samples[end_index];
    WindowMeasure m;
    m.start_index = start;
    m.start = track.samples[start];
    m.end = end;
    m.samples = static_cast<int64_t>(end_index + 1 - start);
    m.elapsed_s = static_cast<double>(end.t_us - m.start.t_us) / 1e6;
    // lag_allowance_s, from the wait the span already measured (0 with a cap of 0).
    m.allowance_s = std::min(wait_s, limits.max_lag_allowance_s);
    m.horizontal_m = horizontal_distance(m.start.position, end.position);
    m.distance_m = distance(m.start.position, end.position);
    m.speed = m.horizontal_m / (m.elapsed_s + m.allowance_s);
    return m;
}

std::optional<WindowMeasure> measure_window(const Track& track, const MovementLimits& limits) {
    if (track.samples.size() < 2) return std::nullopt;
    return measure_window(track, track.samples.size() - 1, limits, typical_interval_us(track));
}

std::optional<AccelerationMeasure> measure_acceleration(const Track& track,
                                                        const MovementLimits& limits,
                                                        int64_t typical_us) {
    if (track.samples.size() < 3) return std::nullopt;
    const size_t end = track.samples.size() - 1;
    auto after = measure_window(track, end, limits, typical_us);
    if (!after) return std::nullopt;
    return measure_acceleration(track, *after, after->start_index, limits, typical_us);
}

std::optional<AccelerationMeasure> measure_acceleration(const Track& track,
                                                        const WindowMeasure& after,
                                                        size_t after_start,
                                                        const MovementLimits& limits,
                                                        int64_t typical_us) {
    auto before = measure_window(track, after_start, limits, typical_us);
    if (!before) return std::nullopt;
    AccelerationMeasure m;
    m.before = *before;
    m.after = after;
    m.change_mps = after.speed - before->speed;
    m.separation_s = static_cast<double>((after.start.t_us + after.end.t_us) -
                                         (before->start.t_us + before->end.t_us)) /
                     2e6;
    // The longest wait in either window, beyond the usual spacing: a late update inside a
    // window shows an old position and makes that window look slow.
    int64_t longest_us = 0;
    const auto& samples = track.samples;
    if (track.in_order) {
        // The samples received after the earlier window's start are the run from the first
        // one after it to the end.
        const auto later =
            std::upper_bound(samples.times_begin(), samples.times_end(), before->start.t_us);
        longest_us = samples.longest_step(later.index(), samples.size());
    } else {
        for (size_t i = samples.size() - 1; i > 0; --i) {
            const int64_t t_us = samples.time(i);
            if (t_us <= before->start.t_us) break;
            longest_us = std::max(longest_us, t_us - samples.time(i - 1));
        }
    }
    const double inside_s =
        static_cast<double>(std::max<int64_t>(0, longest_us - typical_us)) / 1e6;
    m.allowance_s = std::min(std::max({before->allowance_s, after.allowance_s, inside_s}),
                             limits.max_lag_allowance_s);
    m.acceleration = std::abs(m.change_mps) / (m.separation_s + m.allowance_s);
    return m;
}

SustainedRun extend_run(SustainedRun run, const WindowMeasure& window,
                        const MovementLimits& limits) {
    // Negated so that a NaN speed ends the run.
    if (!(window.speed > limits.max_speed * limits.tolerance)) return SustainedRun{};
    if (!run.active) {
        run = SustainedRun{};
        run.active = true;
        run.first_from = window.start;
        run.first_to = window.end;
        run.lowest_mps = run.highest_mps = window.speed;
    }
    run.last_to = window.end;
    run.lowest_mps = std::min(run.lowest_mps, window.speed);
    run.highest_mps = std::max(run.highest_mps, window.speed);
    run.sum_mps += window.speed;
    ++run.windows;
    return run;
}

std::optional<SustainedMeasure> check_sustained(const SustainedRun& run,
                                                const MovementLimits& limits) {
    if (!run.active) return std::nullopt;
    SustainedMeasure m;
    m.duration_s = static_cast<double>(run.last_to.t_us - run.first_to.t_us) / 1e6;
    m.limit_s = limits.sustained_s;
    if (!(m.duration_s > m.limit_s)) return std::nullopt;
    m.mean_mps = run.sum_mps / static_cast<double>(std::max<int64_t>(1, run.windows));
    m.lowest_mps = run.lowest_mps;
    m.speed_limit_mps = limits.max_speed * limits.tolerance;
    m.score = excess_score(m.mean_mps, m.speed_limit_mps);
    if (m.score <= 0) return std::nullopt;
    return m;
}

AirborneStretch extend_airborne(AirborneStretch stretch, const Sample& sample,
                                std::optional<bool> on_ground, int64_t previous_us,
                                int64_t typical_us) {
    // Only the server's word counts: without it, or on the ground, the stretch is over.
    if (!on_ground.has_value() || *on_ground) return AirborneStretch{};
    if (!stretch.active) {
        // A wait before the takeoff is not time in the air.
        stretch = AirborneStretch{};
        stretch.active = true;
        stretch.takeoff = sample;
    } else if (previous_us >= 0) {
        const int64_t wait_us = std::max<int64_t>(0, sample.t_us - previous_us - typical_us);
        stretch.longest_wait_us = std::max(stretch.longest_wait_us, wait_us);
    }
    stretch.last = sample;
    ++stretch.updates;
    return stretch;
}

std::optional<AirborneMeasure> check_airborne(const AirborneStretch& stretch,
                                              const MovementLimits& limits) {
    if (!stretch.active) return std::nullopt;
    AirborneMeasure m;
    m.elapsed_s = static_cast<double>(stretch.last.t_us - stretch.takeoff.t_us) / 1e6;
    m.allowance_s = static_cast<double>(stretch.longest_wait_us) / 1e6;
    m.airborne_s = std::max(0.0, m.elapsed_s - m.allowance_s);
    m.limit_s = limits.max_jump_time_s + limits.airborne_grace_s;
    m.score = excess_score(m.airborne_s, m.limit_s);
    if (m.score <= 0) return std::nullopt;
    return m;
}

std::optional<BelowTerrainMeasure> check_below_terrain(double z,
                                                       std::optional<double> ground_height,
                                                       const MovementLimits& limits) {
    if (!ground_height.has_value()) return std::nullopt;
    BelowTerrainMeasure m;
    m.depth_m = *ground_height - z;
    m.limit_m = limits.below_terrain_m;
    m.score = excess_score(m.depth_m, m.limit_m);
    if (m.score <= 0) return std::nullopt;
    return m;
}

double excess_score(double value, double limit) {
    // Negated so that a NaN value scores 0 too: a score must stay in [0, 1].
    if (!(limit > 0) || !(value > limit)) return 0.0;
    return std::clamp(1.0 - std::exp(-5.0 * (value / limit - 1.0)), 0.0, 1.0);
}

}  // namespace arbiter::reference
