#include "aim_area.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "movement.hpp"
#include "relay_times.hpp"

namespace arbiter::reference {

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

double wrapped(double radians) {
    return std::remainder(radians, kTwoPi);
}

double degrees(double radians) {
    return radians * 180.0 / std::numbers::pi;
}

// The newest sample at or before `t_us`'s window start: the index the window begins at.
std::optional<size_t> window_start(const std::deque<AimSample>& samples, double window_s) {
    if (samples.size() < 2) return std::nullopt;
    const int64_t start = samples.back().t_us - micros(window_s);
    for (size_t i = samples.size() - 1; i-- > 0;)
        if (samples[i].t_us <= start) return i;
    return std::nullopt;
}

}  // namespace

double look_step_rad(const AimSample& from, const AimSample& to) {
    const double cp1 = std::cos(from.b), cp2 = std::cos(to.b);
    const double x1 = cp1 * std::cos(from.a), y1 = cp1 * std::sin(from.a), z1 = std::sin(from.b);
    const double x2 = cp2 * std::cos(to.a), y2 = cp2 * std::sin(to.a), z2 = std::sin(to.b);
    const double cx = y1 * z2 - z1 * y2, cy = z1 * x2 - x1 * z2, cz = x1 * y2 - y1 * x2;
    return std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), x1 * x2 + y1 * y2 + z1 * z2);
}

std::optional<TurnMeasure> measure_turn(const std::deque<AimSample>& samples, double window_s) {
    const auto start = window_start(samples, window_s);
    if (!start) return std::nullopt;
    TurnMeasure m;
    for (size_t i = *start + 1; i < samples.size(); ++i)
        m.turned_rad += look_step_rad(samples[i - 1], samples[i]);
    m.window_s = static_cast<double>(samples.back().t_us - samples[*start].t_us) / 1e6;
    m.samples = samples.size() - *start;
    if (!(m.window_s > 0)) return std::nullopt;
    m.speed_rad_s = m.turned_rad / m.window_s;
    return m;
}

std::optional<SnapMeasure> measure_snap(const AimSample& a, const AimSample& b, const AimSample& c,
                                        bool look, const AimLimits& limits) {
    // The neighbours as vectors from the middle sample: a look's in radians on the view's
    // tangent plane (yaw steps shrink towards the poles), an aim point's in its units.
    double ax = a.a - b.a, ay = a.b - b.b, cx = c.a - b.a, cy = c.b - b.b;
    if (look) {
        ax = wrapped(ax) * std::cos(b.b);
        cx = wrapped(cx) * std::cos(b.b);
    }
    SnapMeasure m;
    m.before = std::hypot(ax, ay);
    m.after = std::hypot(cx, cy);
    const double distance = look ? limits.snap_distance_rad : limits.snap_distance_units;
    if (!(m.before > distance) || !(m.after > distance)) return std::nullopt;
    m.angle_deg = degrees(std::atan2(std::fabs(ax * cy - ay * cx), ax * cx + ay * cy));
    if (!(m.angle_deg < limits.snap_angle_deg)) return std::nullopt;
    return m;
}

SpinMeasure measure_spin(const std::deque<AimSample>& samples, bool look, double window_s,
                         double min_radius) {
    SpinMeasure m;
    const auto start = window_start(samples, window_s);
    const size_t first = start.value_or(0);
    std::optional<double> last_angle;
    double turned = 0;
    for (size_t i = first; i < samples.size(); ++i) {
        const AimSample& s = samples[i];
        double angle = s.a;
        if (!look) {
            if (std::hypot(s.a, s.b) < min_radius) continue;
            angle = std::atan2(s.b, s.a);
        }
        if (last_angle) turned += wrapped(angle - *last_angle);
        last_angle = angle;
    }
    m.turns = std::fabs(turned) / kTwoPi;
    m.window_s = static_cast<double>(samples.back().t_us - samples[first].t_us) / 1e6;
    return m;
}

AimArea::AimArea(const ConfigTable& config) {
    ConfigTable aim = config.table("aim");
    AimLimits& l = limits_;
    l.enabled = aim.boolean("enabled", l.enabled);
    l.max_turn_speed_rad_s =
        aim.number("max_turn_speed_rad_s", l.max_turn_speed_rad_s, Range::between(1.0, 1e4));
    l.turn_window_s = aim.number("turn_window_s", l.turn_window_s, Range::between(0.01, 10.0));
    l.snap_angle_deg = aim.number("snap_angle_deg", l.snap_angle_deg, Range::between(0.1, 90.0));
    l.snap_distance_units =
        aim.number("snap_distance_units", l.snap_distance_units, Range::between(0.0, 1e6));
    l.snap_distance_rad =
        aim.number("snap_distance_rad", l.snap_distance_rad, Range::between(0.0, 3.2));
    l.snap_window_s = aim.number("snap_window_s", l.snap_window_s, Range::between(1.0, 3600.0));
    l.max_snaps = aim.integer("max_snaps", l.max_snaps, Range::between(1, 1000000));
    l.spin_window_s = aim.number("spin_window_s", l.spin_window_s, Range::between(0.1, 60.0));
    l.max_spin_turns = aim.number("max_spin_turns", l.max_spin_turns, Range::between(0.5, 1e4));
    l.max_gap_s = aim.number("max_gap_s", l.max_gap_s, Range::between(0.01, 60.0));
    l.spin_min_radius_units =
        aim.number("spin_min_radius_units", l.spin_min_radius_units, Range::between(0.0, 1e6));
}

void AimArea::on_event(const fb::Event& event, Player& player, Reporter& out) const {
    if (!limits_.enabled) return;
    const int64_t t_us = event.relay_time_us();
    if (const auto look = look_of(event))
        add(player.look, {t_us, look->yaw(), look->pitch()}, true, false, event.player(), out);
    if (const auto aim = aim_of(event)) {
        player.aim_relative = aim->relative();
        add(player.aim, {t_us, aim->x(), aim->y()}, false, aim->relative(), event.player(), out);
    }
}

void AimArea::add(Track& track, const AimSample& sample, bool look, bool relative, uint32_t id,
                  Reporter& out) const {
    auto& samples = track.samples;
    if (!samples.empty()) {
        const AimSample& last = samples.back();
        if (sample.t_us < last.t_us) return;  // out of order: not a step
        // The same look on the position and the order of one moment is one sample.
        if (sample.t_us == last.t_us && sample.a == last.a && sample.b == last.b) return;
        if (sample.t_us - last.t_us > micros(limits_.max_gap_s)) samples.clear();
    }
    samples.push_back(sample);
    const double longest = std::max(limits_.turn_window_s, limits_.spin_window_s);
    while (samples.size() > 3 && samples[1].t_us <= sample.t_us - micros(longest))
        samples.pop_front();
    const char* kind = look ? "look" : "aim";

    if (look) {
        if (auto turn = measure_turn(samples, limits_.turn_window_s)) {
            if (double score = excess_score(turn->speed_rad_s, limits_.max_turn_speed_rad_s);
                score > 0)
                out.report({.player = id,
                            .code = "aim.turn_speed",
                            .score = score,
                            .confidence = 0.9,
                            .evidence = Evidence()
                                            .add("speed_rad_s", turn->speed_rad_s)
                                            .add("speed_deg_s", degrees(turn->speed_rad_s))
                                            .add("limit_rad_s", limits_.max_turn_speed_rad_s)
                                            .add("turned_rad", turn->turned_rad)
                                            .add("window_s", turn->window_s)
                                            .add("samples", turn->samples)
                                            .add("t_us", sample.t_us),
                            .tripwire = true});
        }
    }

    if (samples.size() >= 3) {
        const size_t n = samples.size();
        if (auto snap =
                measure_snap(samples[n - 3], samples[n - 2], samples[n - 1], look, limits_)) {
            track.snaps.push_back(samples[n - 2].t_us);
            while (track.snaps.front() <= sample.t_us - micros(limits_.snap_window_s))
                track.snaps.pop_front();
            const auto count = static_cast<int64_t>(track.snaps.size());
            if (count > limits_.max_snaps) {
                const double score =
                    std::max(0.01, excess_score(static_cast<double>(count),
                                                static_cast<double>(limits_.max_snaps)));
                out.report(
                    {.player = id,
                     .code = "aim.snaps",
                     .score = score,
                     .confidence = 0.8,
                     .evidence = Evidence()
                                     .add("track", kind)
                                     .add("snaps", count)
                                     .add("limit", limits_.max_snaps)
                                     .add("window_s", limits_.snap_window_s)
                                     .add("snap_angle_deg", limits_.snap_angle_deg)
                                     .add("snap_distance", look ? limits_.snap_distance_rad
                                                                : limits_.snap_distance_units)
                                     .add("units", look ? "rad" : "game units")
                                     .add("last_t_us", samples[n - 2].t_us)
                                     .add("last_angle_deg", snap->angle_deg)
                                     .add("last_before", snap->before)
                                     .add("last_after", snap->after),
                     .tripwire = true});
            }
        }
    }

    if (look || relative) {
        const SpinMeasure spin =
            measure_spin(samples, look, limits_.spin_window_s, limits_.spin_min_radius_units);
        if (spin.turns > limits_.max_spin_turns)
            out.report({.player = id,
                        .code = "aim.spin",
                        .score = std::max(0.01, excess_score(spin.turns, limits_.max_spin_turns)),
                        .confidence = 0.9,
                        .evidence = Evidence()
                                        .add("track", kind)
                                        .add("turns", spin.turns)
                                        .add("limit_turns", limits_.max_spin_turns)
                                        .add("window_s", spin.window_s)
                                        .add("t_us", sample.t_us),
                        .tripwire = true});
    }
}

void AimArea::on_input_lost(Player& player) const {
    player.look.samples.clear();
    player.aim.samples.clear();
}

namespace {
void save_track(StateWriter& out, const AimArea::Track& track) {
    out.put<uint64_t>(track.samples.size());
    for (const AimSample& s : track.samples) {
        out.put<int64_t>(s.t_us);
        out.put<double>(s.a);
        out.put<double>(s.b);
    }
    out.put<uint64_t>(track.snaps.size());
    for (int64_t t : track.snaps)
        out.put<int64_t>(t);
}

void restore_track(StateReader& in, AimArea::Track& track) {
    track = {};
    for (uint64_t n = in.get_count(24); n > 0; --n) {
        AimSample s;
        s.t_us = in.get_relay_time("aim sample");
        s.a = in.get_finite("aim sample");
        s.b = in.get_finite("aim sample");
        track.samples.push_back(s);
    }
    for (uint64_t n = in.get_count(8); n > 0; --n)
        track.snaps.push_back(in.get_relay_time("snap"));
}
}  // namespace

void AimArea::save_player(StateWriter& out, const Player& player) const {
    save_track(out, player.look);
    save_track(out, player.aim);
    out.put<uint8_t>(player.aim_relative ? 1 : 0);
}

void AimArea::restore_player(StateReader& in, Player& player) const {
    restore_track(in, player.look);
    restore_track(in, player.aim);
    player.aim_relative = in.get<uint8_t>() != 0;
}

}  // namespace arbiter::reference
