// The aim area of the analyzer: where each player looks (schema 1.2's Look: yaw and pitch,
// radians) and aims (AimPoint: a point in the game's units), and three deterministic
// trip-wires on it (docs/aim.md, "The checks"):
//
//  - aim.turn_speed (look only): the angle the view turned through over at least
//    turn_window_s of relay time, divided by that time, above max_turn_speed_rad_s: a
//    speed no hand and mouse reach.
//  - aim.snaps: circleguard's snap, counted over snap_window_s. Three consecutive samples
//    a, b, c are a snap when the angle at b between b->a and b->c is under snap_angle_deg
//    and both |ab| and |bc| exceed the snap distance (snap_distance_units for an aim point,
//    snap_distance_rad for a look). People snap too, now and then: the trip-wire is more
//    than max_snaps of them within the window.
//  - aim.spin: the view (yaw) or a relative aim point (its angle around the player) turning
//    the same way through more than max_spin_turns full turns within spin_window_s.
//
// Samples further apart than max_gap_s in relay time (lag, a death, a lost batch) start
// the samples again, so that nothing measures across a silence. The settings are the
// [aim] table of the reference's config.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include <arbiter/sdk.hpp>

#include "reports.hpp"

namespace arbiter::reference {

struct AimLimits {
    bool enabled = true;
    double max_turn_speed_rad_s = 60.0;  // about 3,400 degrees a second, held over the window
    double turn_window_s = 0.1;
    double snap_angle_deg = 10.0;      // circleguard's default
    double snap_distance_units = 8.0;  // circleguard's default, osu! playfield pixels
    double snap_distance_rad = 0.05;   // about 2.9 degrees a step
    double snap_window_s = 60.0;
    int64_t max_snaps = 40;  // real DDNet players: at most 16 in a minute (docs/aim.md)
    // Real DDNet players circle their aim around the tee up to 12.9 turns in 2 s (6.5 a
    // second; docs/aim.md): the limit is 12 a second, held for 2 s.
    double spin_window_s = 2.0;
    double max_spin_turns = 24.0;
    double max_gap_s = 0.5;
    // Under this distance from the player a relative aim point's angle is not measured for
    // a spin: near the player the angle swings with the smallest motion of the hand.
    double spin_min_radius_units = 16.0;
};

// One sample of a track: a look (a = yaw, b = pitch, radians) or an aim point (a = x,
// b = y, the game's units).
struct AimSample {
    int64_t t_us = 0;
    double a = 0, b = 0;
};

// The measures of the checks, pure functions of a track's samples (oldest first).
struct TurnMeasure {
    double speed_rad_s = 0, turned_rad = 0, window_s = 0;
    size_t samples = 0;
};
// The angle the view turned through from `from` to `to` (on the sphere), radians.
double look_step_rad(const AimSample& from, const AimSample& to);
// Over the newest samples spanning at least window_s; nullopt until they do.
std::optional<TurnMeasure> measure_turn(const std::deque<AimSample>& samples, double window_s);

struct SnapMeasure {
    double angle_deg = 0, before = 0, after = 0;  // distances, in the track's units
};
// Whether the last three samples are a snap at the middle one.
std::optional<SnapMeasure> measure_snap(const AimSample& a, const AimSample& b, const AimSample& c,
                                        bool look, const AimLimits& limits);

struct SpinMeasure {
    double turns = 0, window_s = 0;
};
// Net signed turns (yaw, or a relative point's angle) over the newest samples within
// window_s (and the one before them).
SpinMeasure measure_spin(const std::deque<AimSample>& samples, bool look, double window_s,
                         double min_radius);

class AimArea {
  public:
    struct Track {
        std::deque<AimSample> samples;  // within the longest window, and at least 3
        Ring<int64_t> snaps;            // the snaps' times within snap_window_s
        bool empty() const { return samples.empty() && snaps.empty(); }
    };
    struct Player {
        Track look, aim;
        bool aim_relative = false;  // of the last aim point
        bool empty() const { return look.empty() && aim.empty(); }
    };

    // Reads the [aim] table.
    explicit AimArea(const ConfigTable& config);
    const AimLimits& limits() const { return limits_; }

    // A PositionUpdate, Order or HitClaim: its look and aim, where it has them.
    void on_event(const fb::Event& event, Player& player, Reporter& out) const;
    // Input was lost: nothing measures across the gap; the snaps counted stay.
    void on_input_lost(Player& player) const;

    void save_player(StateWriter& out, const Player& player) const;
    void restore_player(StateReader& in, Player& player) const;

  private:
    void add(Track& track, const AimSample& sample, bool look, bool relative, uint32_t id,
             Reporter& out) const;

    AimLimits limits_;
};

}  // namespace arbiter::reference
