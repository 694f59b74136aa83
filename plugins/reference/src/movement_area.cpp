#include "movement_area.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "event_fields.hpp"
#include "relay_times.hpp"

namespace arbiter::reference {

namespace {
Evidence position_evidence(const Sample& sample) {
    return Evidence()
        .add("t_us", sample.t_us)
        .add("x", sample.position.x)
        .add("y", sample.position.y)
        .add("z", sample.position.z);
}
}  // namespace

MovementArea::MovementArea(const ConfigTable& config) {
    ConfigTable movement = config.table("movement");
    MovementLimits& m = limits_;
    m.max_speed = movement.number("max_speed", m.max_speed, Range::positive());
    m.tolerance = movement.number("tolerance", m.tolerance, Range::between(1.0, 10.0));
    m.window_s = movement.number("window_s", m.window_s, Range::between(0.1, 60.0));
    m.max_lag_allowance_s =
        movement.number("max_lag_allowance_s", m.max_lag_allowance_s, Range::between(0.0, 10.0));
    m.teleport_distance =
        movement.number("teleport_distance", m.teleport_distance, Range::positive());
    m.min_samples = movement.integer("min_samples", m.min_samples, Range::between(1, 1000));
    m.burst_gap_s = movement.number("burst_gap_s", m.burst_gap_s, Range{0.0, 0.05, true});
    m.max_acceleration = movement.number("max_acceleration", m.max_acceleration, Range::positive());
    m.sustained_s = movement.number("sustained_s", m.sustained_s, Range::between(0.1, 3600.0));
    m.max_jump_time_s =
        movement.number("max_jump_time_s", m.max_jump_time_s, Range::between(0.1, 60.0));
    m.airborne_grace_s =
        movement.number("airborne_grace_s", m.airborne_grace_s, Range::between(0.0, 60.0));
    m.below_terrain_m =
        movement.number("below_terrain_m", m.below_terrain_m, Range{0.0, 100.0, true});
}

void MovementArea::on_position(const fb::Event& event, const Arrivals& arrivals, Player& player,
                               Reporter& out) const {
    const uint32_t player_id = event.player();
    const int64_t t_us = event.relay_time_us();
    const fb::PositionUpdate& update = *event.body_as_PositionUpdate();
    Sample sample{t_us, to_vec(update.position())};
    Track& track = player.track;
    // A teleport the server made itself is exempt: start the track afresh from it, and the
    // runs and stretches of the other movement checks with it.
    if (update.server_teleport()) {
        track.samples.clear();
        player.spacing.cleared();
        player.long_gaps = 0;
        track.samples.push_back(sample);
        player.spacing.pushed(track);
        player.sustained.reset();
        player.airborne.reset();
        player.below_updates = 0;
        player.below_since.reset();
        return;
    }

    // One update's displacement: no tick of movement produces this much, nor does the
    // movement of a silence before it (the updates it held back lost).
    if (!track.samples.empty()) {
        const Sample previous = track.samples.back();
        double jump = distance(previous.position, sample.position);
        // The reach is never under teleport_distance: only a longer jump needs it.
        const double reach_m = jump > limits_.teleport_distance
                                   ? single_update_reach_m(track, sample, limits_)
                                   : limits_.teleport_distance;
        if (jump > reach_m) {
            out.report({.player = player_id,
                        .code = "movement.teleport",
                        .score = 1.0,
                        .confidence = 0.95,
                        .evidence = Evidence()
                                        .add("kind", "single_update")
                                        .add("distance_m", jump)
                                        .add("limit_m", reach_m)
                                        .add("from", position_evidence(previous))
                                        .add("to", position_evidence(sample))});
        }
    }
    const int64_t previous_us =
        track.samples.empty() ? -1 : track.samples.time(track.samples.size() - 1);
    // The usual spacing before this update's gap: after a silence longer than the stretch
    // the spacing is measured over, the silence would be the only gap left, and a wait
    // measured against itself is no wait.
    const int64_t spacing_before_us =
        track.samples.empty() ? 0 : player.spacing.value(track, t_us - spacing_horizon_us());
    track.samples.push_back(sample);
    player.spacing.pushed(track);
    if (player.long_gap_cap == limits_.max_lag_allowance_s &&
        is_long_gap(track, track.samples.size() - 1))
        ++player.long_gaps;
    forget_old(player, t_us);
    const int64_t typical_us = player.spacing.value(track, t_us - spacing_horizon_us());
    track.in_order = player.spacing.in_order();
    check_ground(player_id, player, sample, update, previous_us, spacing_before_us, out);
    check_windows(player_id, player, arrivals, typical_us, out);
    forget_positions(player);
}

bool MovementArea::is_long_gap(const Track& track, size_t i) const {
    // span_long_silences moves a window's start back over a gap whose wait beyond the usual
    // spacing, max(0, gap - typical), is over the cap; the usual spacing is never negative
    // in a track in order, so only a gap itself over the cap can be one.
    return i >= 1 && i < track.samples.size() && limits_.max_lag_allowance_s > 0 &&
           static_cast<double>(track.samples.time(i) - track.samples.time(i - 1)) / 1e6 >
               limits_.max_lag_allowance_s;
}

void MovementArea::forget_positions(Player& player) const {
    // The checks read positions only at a window's start and end (measure_window): the after
    // window ends at the newest sample and starts at window_start_index of it, the before
    // window ends there and starts at window_start_index of that, and either start may move
    // back, in span_long_silences, only to the sample before a gap over the cap. In a track
    // in order (relay time never goes back within a match: the host refuses such batches),
    // window_start_index of a later sample is never earlier: it starts from the latest sample
    // a window before, which only moves forward, and a burst moves it further. So no window,
    // now or after any update to come, starts before the latest sample a window before the
    // latest sample a window before the newest, except before a long gap, where the before
    // window may start as far as a window before it. Those positions stay; the rest of the
    // track keeps only its times, which the spacing and the look-backs read. A change of the
    // limits may ask for a position let go: measure_window measures no such window.
    Track& track = player.track;
    SampleRing& samples = track.samples;
    if (!track.in_order || !samples.compact() || samples.size() < 3) return;
    const auto window_us = static_cast<int64_t>(limits_.window_s * 1e6);
    // The latest sample at least a window before sample e, as window_start_index finds it
    // before a burst moves it forward; samples.size() if none.
    auto window_before = [&samples, window_us](size_t e) {
        const auto it = std::upper_bound(samples.times_begin(),
                                         samples.times_begin() + static_cast<std::ptrdiff_t>(e + 1),
                                         samples.time(e) - window_us);
        return it == samples.times_begin() ? samples.size() : it.index() - 1;
    };
    const size_t after = window_before(samples.size() - 1);
    if (after >= samples.size()) return;
    size_t keep = window_before(after);
    if (keep >= samples.size()) return;
    if (!(player.long_gap_cap == limits_.max_lag_allowance_s)) {
        player.long_gaps = 0;
        for (size_t i = 1; i < samples.size(); ++i)
            if (is_long_gap(track, i)) ++player.long_gaps;
        player.long_gap_cap = limits_.max_lag_allowance_s;
    }
    if (player.long_gaps > 0) {
        for (size_t i = 1; i < samples.size(); ++i) {
            if (!is_long_gap(track, i)) continue;
            const size_t before_gap = window_before(i - 1);
            if (before_gap >= samples.size()) return;
            keep = std::min(keep, before_gap);
        }
    }
    samples.forget_positions_before(keep);
}

void MovementArea::check_ground(uint32_t player_id, Player& player, const Sample& sample,
                                const fb::PositionUpdate& update, int64_t previous_us,
                                int64_t typical_us, Reporter& out) const {
    std::optional<double> ground;
    if (auto h = update.ground_height(); h.has_value()) ground = static_cast<double>(*h);
    if (auto below = check_below_terrain(sample.position.z, ground, limits_)) {
        if (player.below_updates++ == 0) player.below_since.assign(sample, false);
        out.report({.player = player_id,
                    .code = "movement.below_terrain",
                    .score = below->score,
                    .confidence = std::min(1.0, static_cast<double>(player.below_updates) /
                                                    static_cast<double>(limits_.min_samples)),
                    .evidence = Evidence()
                                    .add("depth_m", below->depth_m)
                                    .add("limit_m", below->limit_m)
                                    .add("z", sample.position.z)
                                    .add("ground_height", *ground)
                                    .add("updates_below", player.below_updates)
                                    .add("since", position_evidence(player.below_since.view()))
                                    .add("at", position_evidence(sample))});
    } else {
        player.below_updates = 0;
        player.below_since.reset();
    }

    std::optional<bool> on_ground;
    if (auto g = update.on_ground(); g.has_value()) on_ground = *g;
    AirborneStretch stretch =
        extend_airborne(player.airborne.view(), sample, on_ground, previous_us, typical_us);
    const bool flying = stretch.active;
    player.airborne.assign(std::move(stretch), !flying);
    if (auto airborne = check_airborne(player.airborne.view(), limits_)) {
        out.report(
            {.player = player_id,
             .code = "movement.airborne",
             .score = airborne->score,
             .confidence = 0.9,
             .evidence = Evidence()
                             .add("airborne_s", airborne->airborne_s)
                             .add("limit_s", airborne->limit_s)
                             .add("max_jump_time_s", limits_.max_jump_time_s)
                             .add("grace_s", limits_.airborne_grace_s)
                             .add("elapsed_s", airborne->elapsed_s)
                             .add("lag_allowance_s", airborne->allowance_s)
                             .add("updates", player.airborne.view().updates)
                             .add("takeoff", position_evidence(player.airborne.view().takeoff))
                             .add("at", position_evidence(player.airborne.view().last))});
    }
}

namespace {

// A window's lag allowance, widened to the silence the relay saw from the player before
// the window's start where the track does not hold it: a track starts empty at a session's
// start (and again at a server teleport), and the positions of a spike that began before
// them (the first of a burst, the rest lost, as a router's full queue drops them) are as
// old as the silence since the join is long. Only a silence that began before the track's
// first position counts: one the track holds is the track's to allow for (measure_window),
// so a client that falls silent mid-track gains nothing here. Capped like every movement
// allowance; no widening with a cap of 0.
void widen_by_silence(WindowMeasure& w, const Track& track, const Arrivals& arrivals,
                      const MovementLimits& limits) {
    if (track.samples.empty() || !(limits.max_lag_allowance_s > 0)) return;
    const int64_t first_us = track.samples.time(0);
    const int64_t look_back_us = static_cast<int64_t>(limits.max_lag_allowance_s * 1e6) + 1'000'000;
    int64_t longest_us = 0;
    for (const Gap& g : arrivals.gaps.view())
        if (g.t_us >= w.start.t_us - look_back_us && g.t_us <= w.start.t_us &&
            g.t_us - g.gap_us < first_us)
            longest_us = std::max(longest_us, g.gap_us);
    const double silence =
        std::min(static_cast<double>(longest_us) / 1e6, limits.max_lag_allowance_s);
    if (!(silence > w.allowance_s)) return;
    w.allowance_s = silence;
    w.speed = w.horizontal_m / (w.elapsed_s + w.allowance_s);
}

}  // namespace

void MovementArea::check_windows(uint32_t player_id, Player& player, const Arrivals& arrivals,
                                 int64_t typical_us, Reporter& out) const {
    const Track& track = player.track;
    const size_t end = track.samples.size() - 1;
    auto window = measure_window(track, end, limits_, typical_us);
    if (!window) {
        player.sustained.reset();
        return;
    }
    widen_by_silence(*window, track, arrivals, limits_);
    const double confidence = std::min(
        1.0, static_cast<double>(window->samples) / static_cast<double>(limits_.min_samples));
    auto window_evidence = [](const WindowMeasure& w) {
        return Evidence()
            .add("speed_mps", w.speed)
            .add("window_s", w.elapsed_s)
            .add("lag_allowance_s", w.allowance_s)
            .add("from", position_evidence(w.start))
            .add("to", position_evidence(w.end));
    };

    const double speed_limit = limits_.max_speed * limits_.tolerance;
    if (double score = excess_score(window->speed, speed_limit); score > 0) {
        out.report({.player = player_id,
                    .code = "movement.speed",
                    .score = score,
                    .confidence = confidence,
                    .evidence = Evidence()
                                    .add("speed_mps", window->speed)
                                    .add("limit_mps", speed_limit)
                                    .add("max_speed_mps", limits_.max_speed)
                                    .add("tolerance", limits_.tolerance)
                                    .add("distance_m", window->horizontal_m)
                                    .add("window_s", window->elapsed_s)
                                    .add("lag_allowance_s", window->allowance_s)
                                    .add("updates", window->samples)
                                    .add("from", position_evidence(window->start))
                                    .add("to", position_evidence(window->end))});
    }

    // Over the limit window after window, for longer than sustained_s.
    SustainedRun extended = extend_run(player.sustained.view(), *window, limits_);
    const bool over = extended.active;
    player.sustained.assign(std::move(extended), !over);
    if (auto sustained = check_sustained(player.sustained.view(), limits_)) {
        const SustainedRun& run = player.sustained.view();
        out.report({.player = player_id,
                    .code = "movement.sustained_speed",
                    .score = sustained->score,
                    .confidence = 0.95,
                    .evidence = Evidence()
                                    .add("duration_s", sustained->duration_s)
                                    .add("limit_s", sustained->limit_s)
                                    .add("mean_speed_mps", sustained->mean_mps)
                                    .add("lowest_speed_mps", sustained->lowest_mps)
                                    .add("highest_speed_mps", run.highest_mps)
                                    .add("limit_mps", sustained->speed_limit_mps)
                                    .add("windows", run.windows)
                                    .add("from", position_evidence(run.first_from))
                                    .add("first_over", position_evidence(run.first_to))
                                    .add("to", position_evidence(run.last_to))});
    }

    // The change of windowed speed from the window before this one.
    if (auto accel =
            measure_acceleration(track, *window, window->start_index, limits_, typical_us)) {
        const double accel_limit = limits_.max_acceleration * limits_.tolerance;
        if (double score = excess_score(accel->acceleration, accel_limit); score > 0) {
            out.report({.player = player_id,
                        .code = "movement.acceleration",
                        .score = score,
                        .confidence = confidence,
                        .evidence = Evidence()
                                        .add("acceleration_mps2", accel->acceleration)
                                        .add("limit_mps2", accel_limit)
                                        .add("max_acceleration_mps2", limits_.max_acceleration)
                                        .add("tolerance", limits_.tolerance)
                                        .add("change_mps", accel->change_mps)
                                        .add("separation_s", accel->separation_s)
                                        .add("lag_allowance_s", accel->allowance_s)
                                        .add("before", window_evidence(accel->before))
                                        .add("after", window_evidence(accel->after))});
        }
    }

    // A window's displacement that even twice the top speed cannot cover.
    const double reach = limits_.max_speed * 2.0 * (window->elapsed_s + window->allowance_s);
    if (window->distance_m > reach) {
        out.report({.player = player_id,
                    .code = "movement.teleport",
                    .score = 1.0,
                    .confidence = 0.9,
                    .evidence = Evidence()
                                    .add("kind", "window")
                                    .add("distance_m", window->distance_m)
                                    .add("limit_m", reach)
                                    .add("window_s", window->elapsed_s)
                                    .add("lag_allowance_s", window->allowance_s)
                                    .add("from", position_evidence(window->start))
                                    .add("to", position_evidence(window->end))});
    }
}

void MovementArea::on_latency(const fb::Event& event, Player& player) const {
    const int64_t t_us = event.relay_time_us();
    player.track.rtts.get().push_back({t_us, event.body_as_LatencySample()->rtt_us()});
    forget_old(player, t_us);
}

int64_t MovementArea::spacing_horizon_us() const {
    // A window, the longest lag allowance and the second its look-back adds, and a second
    // of slack.
    return micros(limits_.window_s + limits_.max_lag_allowance_s + 1.0) + kSecondUs;
}

void MovementArea::forget_old(Player& player, int64_t now_us) const {
    // Keep two windows (the acceleration check compares consecutive ones) and what a
    // window's lag allowance looks back over.
    const int64_t keep_us = micros(limits_.window_s) + spacing_horizon_us();
    auto& samples = player.track.samples;
    // Keep one sample older than the horizon: it may be the start of a window.
    while (samples.size() > 2 && samples.time(1) < now_us - keep_us) {
        player.spacing.popping_front(player.track);
        if (player.long_gap_cap == limits_.max_lag_allowance_s && is_long_gap(player.track, 1))
            --player.long_gaps;
        samples.pop_front();
    }
    if (Ring<RttSample>* rtts = player.track.rtts.find())
        while (!rtts->empty() && rtts->front().t_us < now_us - keep_us)
            rtts->pop_front();
}

void MovementArea::on_input_lost(Player& player) const {
    Player fresh;
    fresh.track.rtts = std::move(player.track.rtts);
    player = std::move(fresh);
}

namespace {
void put_sample(StateWriter& out, const Sample& s) {
    out.put<int64_t>(s.t_us);
    out.put<double>(s.position.x);
    out.put<double>(s.position.y);
    out.put<double>(s.position.z);
}

Sample get_sample(StateReader& in) {
    Sample s;
    s.t_us = in.get_relay_time("sample time");
    s.position = {in.get_finite("position"), in.get_finite("position"), in.get_finite("position")};
    return s;
}

// A track's samples as one array (version 5). Compact when every gap fits 32 bits and every
// coordinate is a float (it is: positions arrive as floats): the first receive time, then
// per sample the gap since the one before and x, y, z as floats, 16 bytes. Otherwise each
// sample whole, 32 bytes. Either way the samples read back are the ones written.
//
// The positions the track let go (SampleRing::forget_positions_before; only a compact
// track does) are written as the oldest position it kept, and their count in the first
// sample's gap, with the first receive time that much earlier: a reader that knows of it
// (this one) lets the same positions go, and one that does not (this plugin before it
// let positions go, after a swap back) reads the same times and finite positions, which no
// window of the same limits reads.
constexpr size_t kCompactSample = 4 + 3 * 4;
constexpr size_t kWholeSample = 8 + 3 * 8;

bool is_float(double v) {
    return static_cast<double>(static_cast<float>(v)) == v;
}

template <class T>
void put_raw(uint8_t*& at, T value) {
    std::memcpy(at, &value, sizeof value);
    at += sizeof value;
}

template <class T>
T load_raw(const uint8_t* at) {
    T value;
    std::memcpy(&value, at, sizeof value);
    return value;
}

template <class T>
T get_raw(const uint8_t*& at) {
    T value;
    std::memcpy(&value, at, sizeof value);
    at += sizeof value;
    return value;
}

// put_samples for a compact ring (times from one origin, positions floats), the common
// case, which is written in one pass over the ring's arrays; false if a gap does not fit
// 32 bits (times from one origin may span 2^32 us), and nothing is written then.
bool put_compact_samples(StateWriter& out, const SampleRing& samples) {
    const size_t count = samples.size();
    if (!samples.compact() || count == 0) return false;
    int64_t previous_us = samples.time(0);
    bool gaps_fit = true;
    for (size_t i = 1; i < count; ++i) {
        const int64_t t_us = samples.time(i);
        gaps_fit = gaps_fit && t_us - previous_us >= INT32_MIN && t_us - previous_us <= INT32_MAX;
        previous_us = t_us;
    }
    if (!gaps_fit) return false;
    int64_t forgotten = static_cast<int64_t>(samples.positions_forgotten());
    if (samples.time(0) - forgotten < -StateReader::kMaxStoredTimeUs) forgotten = 0;
    out.put<uint64_t>(count);
    out.put<uint8_t>(1);
    uint8_t* at = out.put_bytes_in_place(8 + count * kCompactSample).data();
    previous_us = samples.time(0) - forgotten;
    put_raw<int64_t>(at, previous_us);
    samples.visit_compact([&](int64_t t_us, const float* xyz) {
        put_raw<int32_t>(at, static_cast<int32_t>(t_us - previous_us));
        previous_us = t_us;
        std::memcpy(at, xyz, 12);
        at += 12;
    });
    return true;
}

void put_samples(StateWriter& out, const SampleRing& samples) {
    if (put_compact_samples(out, samples)) return;
    const size_t count = samples.size();
    bool compact = true;
    int64_t previous_us = count == 0 ? 0 : samples.time(0);
    for (size_t i = 0; i < count && compact; ++i) {
        const int64_t t_us = samples.time(i);
        const int64_t gap = t_us - previous_us;
        previous_us = t_us;
        const Vec3 p = samples.position(i);
        compact =
            gap >= INT32_MIN && gap <= INT32_MAX && is_float(p.x) && is_float(p.y) && is_float(p.z);
    }
    // The count of positions let go, in the first gap (above); 0 if it cannot be said.
    int64_t forgotten = compact ? static_cast<int64_t>(samples.positions_forgotten()) : 0;
    if (count > 0 && samples.time(0) - forgotten < -StateReader::kMaxStoredTimeUs) forgotten = 0;
    out.put<uint64_t>(count);
    out.put<uint8_t>(compact ? 1 : 0);
    const std::span<uint8_t> bytes =
        out.put_bytes_in_place(compact ? 8 + count * kCompactSample : count * kWholeSample);
    uint8_t* at = bytes.data();
    if (compact) {
        previous_us = count == 0 ? 0 : samples.time(0) - forgotten;
        put_raw<int64_t>(at, previous_us);
        for (size_t i = 0; i < count; ++i) {
            const int64_t t_us = samples.time(i);
            put_raw<int32_t>(at, static_cast<int32_t>(t_us - previous_us));
            previous_us = t_us;
            const Vec3 p = samples.position(i);
            put_raw<float>(at, static_cast<float>(p.x));
            put_raw<float>(at, static_cast<float>(p.y));
            put_raw<float>(at, static_cast<float>(p.z));
        }
    } else {
        for (size_t i = 0; i < count; ++i) {
            const Vec3 p = samples.position(i);
            put_raw<int64_t>(at, samples.time(i));
            put_raw<double>(at, p.x);
            put_raw<double>(at, p.y);
            put_raw<double>(at, p.z);
        }
    }
}

SampleRing get_samples(StateReader& in) {
    const uint64_t count = in.get_count(kCompactSample);
    const auto flag = in.get<uint8_t>();
    if (flag > 1) throw StateError("state blob has a sample encoding of " + std::to_string(flag));
    const bool compact = flag == 1;
    const std::span<const uint8_t> bytes = in.view_bytes();
    const uint64_t expected = compact ? 8 + count * kCompactSample : count * kWholeSample;
    if (bytes.size() != expected)
        throw StateError("state blob has " + std::to_string(bytes.size()) + " bytes for " +
                         std::to_string(count) + " samples, expected " + std::to_string(expected));
    SampleRing samples;
    // What a sample must be for the checks to measure it: a bounded relay time (the
    // compact form adds 32-bit steps, so each sum is checked) and a finite position.
    auto check_position = [](double x, double y, double z) {
        if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
            throw StateError("state blob has a sample with a non-finite position");
    };
    if (!compact) {
        const uint8_t* at = bytes.data();
        for (uint64_t i = 0; i < count; ++i) {
            Sample s;
            s.t_us = StateReader::checked_relay_time(get_raw<int64_t>(at), "sample time");
            s.position.x = get_raw<double>(at);
            s.position.y = get_raw<double>(at);
            s.position.z = get_raw<double>(at);
            check_position(s.position.x, s.position.y, s.position.z);
            samples.push_back(s);
        }
        return samples;
    }
    // Checked whole first (the positions let go too: a blob is refused for any damage),
    // then stored in one go.
    const uint8_t* first = bytes.data() + 8;
    int64_t t_us =
        StateReader::checked_relay_time(load_raw<int64_t>(bytes.data()), "first sample time");
    for (uint64_t i = 0; i < count; ++i) {
        const uint8_t* sample = first + i * kCompactSample;
        t_us += load_raw<int32_t>(sample);  // bounded before, and checked after each step
        StateReader::checked_relay_time(t_us, "sample time");
        check_position(load_raw<float>(sample + 4), load_raw<float>(sample + 8),
                       load_raw<float>(sample + 12));
    }
    // The count of positions let go is the first gap (put_samples); a count that is not
    // one (a blob of the plugin before it let positions go has 0 here) keeps them all.
    const int64_t forgotten = count == 0 ? 0 : load_raw<int32_t>(first);
    int64_t time = load_raw<int64_t>(bytes.data());
    samples.restore(
        count, forgotten > 0 ? static_cast<size_t>(forgotten) : 0,
        [&](size_t i) { return time += load_raw<int32_t>(first + i * kCompactSample); },
        [&](size_t i, float* xyz) { std::memcpy(xyz, first + i * kCompactSample + 4, 12); });
    return samples;
}

// A flag byte that must be 0 or 1: anything else is not a blob this plugin wrote.
bool get_flag(StateReader& in) {
    const auto flag = in.get<uint8_t>();
    if (flag > 1) throw StateError("state blob has a flag byte of " + std::to_string(flag));
    return flag == 1;
}
}  // namespace

void MovementArea::save_track(StateWriter& out, const Player& player) const {
    put_samples(out, player.track.samples);
    const Ring<RttSample>& rtts = player.track.rtts.view();
    out.put<uint64_t>(rtts.size());
    for (const RttSample& r : rtts) {
        out.put<int64_t>(r.t_us);
        out.put<uint32_t>(r.rtt_us);
    }
}

void MovementArea::restore_track(StateReader& in, Player& player) const {
    Track& track = player.track;
    if (in.version() >= 5) {
        track.samples = get_samples(in);
    } else {
        for (uint64_t n = in.get_count(32); n > 0; --n)
            track.samples.push_back(get_sample(in));
    }
    for (uint64_t n = in.get_count(12); n > 0; --n) {
        RttSample r;
        r.t_us = in.get_relay_time("round-trip time");
        r.rtt_us = in.get<uint32_t>();
        track.rtts.get().push_back(r);
    }
    // A blob may hold receive times that go back (the plugin keeps what it was sent): the
    // look-backs binary-search only tracks that are in order.
    track.in_order = std::is_sorted(track.samples.times_begin(), track.samples.times_end());
}

void MovementArea::save_runs(StateWriter& out, const Player& player) const {
    const SustainedRun& run = player.sustained.view();
    out.put<uint8_t>(run.active ? 1 : 0);
    put_sample(out, run.first_from);
    put_sample(out, run.first_to);
    put_sample(out, run.last_to);
    out.put<double>(run.lowest_mps);
    out.put<double>(run.highest_mps);
    out.put<double>(run.sum_mps);
    out.put<int64_t>(run.windows);
    const AirborneStretch& air = player.airborne.view();
    out.put<uint8_t>(air.active ? 1 : 0);
    put_sample(out, air.takeoff);
    put_sample(out, air.last);
    out.put<int64_t>(air.updates);
    out.put<int64_t>(air.longest_wait_us);
    out.put<int64_t>(player.below_updates);
    put_sample(out, player.below_since.view());
}

void MovementArea::restore_runs(StateReader& in, Player& player) const {
    // Read whole, held only while under way: an inactive one is read by no check.
    SustainedRun run;
    run.active = get_flag(in);
    run.first_from = get_sample(in);
    run.first_to = get_sample(in);
    run.last_to = get_sample(in);
    run.lowest_mps = in.get_finite("speed");
    run.highest_mps = in.get_finite("speed");
    run.sum_mps = in.get_finite("speed");
    run.windows = in.get_counter("sustained window");
    const bool over = run.active;
    player.sustained.assign(std::move(run), !over);
    AirborneStretch air;
    air.active = get_flag(in);
    air.takeoff = get_sample(in);
    air.last = get_sample(in);
    air.updates = in.get_counter("airborne update");
    air.longest_wait_us = in.get_relay_time("airborne wait");
    const bool flying = air.active;
    player.airborne.assign(std::move(air), !flying);
    player.below_updates = in.get_counter("below-terrain update");
    const Sample since = get_sample(in);
    player.below_since.assign(since, player.below_updates == 0);
}

}  // namespace arbiter::reference
