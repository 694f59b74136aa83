// The movement area of the analyzer: each player's track and the runs and stretches of
// movement the checks follow across updates, the position and latency events that feed
// them, the [movement] settings, and the area's sections of the saved state. The checks
// themselves are the pure functions of movement.hpp, which stays free of the SDK (the
// benchmarks compile it alone).
#pragma once

#include <cstdint>
#include <limits>

#include <arbiter/sdk.hpp>

#include "arrivals.hpp"
#include "lazy.hpp"
#include "movement.hpp"
#include "reports.hpp"

namespace arbiter::reference {

class MovementArea {
  public:
    struct Player {
        Track track;
        // typical_interval_us of the track, kept up to date (every change to the track is
        // reported to it).
        SpacingMedian spacing;
        // The current run of windows over the speed limit, the current stretch off the
        // ground, and the updates in a row under the terrain (the first of them): each held
        // only while it is under way (an inactive run or stretch is an empty one).
        Lazy<SustainedRun> sustained;
        Lazy<AirborneStretch> airborne;
        int64_t below_updates = 0;
        Lazy<Sample> below_since;
        // Gaps of the track longer than the lag allowance's cap, which a window may span
        // (forget_positions), as counted for the cap long_gap_cap (NaN: count again).
        uint32_t long_gaps = 0;
        double long_gap_cap = std::numeric_limits<double>::quiet_NaN();

        // Asks the memory system for the blocks an update reads (ReferenceAnalyzer::on_batch).
        void prefetch() const {
            track.samples.prefetch();
            spacing.prefetch();
        }
    };

    // Reads the [movement] table.
    explicit MovementArea(const ConfigTable& config);

    // arrivals: when the relay heard from the player, for the silences a window allows for.
    void on_position(const fb::Event& event, const Arrivals& arrivals, Player& player,
                     Reporter& out) const;
    void on_latency(const fb::Event& event, Player& player) const;
    // Drops the track's samples and round trips older than the checks look back, as of
    // relay time now_us.
    void forget_old(Player& player, int64_t now_us) const;
    // Input was lost: a speed from the last position before the gap to the first after it is
    // no speed (the lost batches may hold a respawn), so the track, runs and stretches start
    // again. The measured round trips stay: each was a measure on its own.
    void on_input_lost(Player& player) const;

    // The player's track: its samples and round trips (version 1 on; the samples as one
    // array from version 5).
    void save_track(StateWriter& out, const Player& player) const;
    void restore_track(StateReader& in, Player& player) const;
    // The runs and stretches (version 4 on).
    void save_runs(StateWriter& out, const Player& player) const;
    void restore_runs(StateReader& in, Player& player) const;

  private:
    void check_ground(uint32_t player_id, Player& player, const Sample& sample,
                      const fb::PositionUpdate& update, int64_t previous_us, int64_t typical_us,
                      Reporter& out) const;
    void check_windows(uint32_t player_id, Player& player, const Arrivals& arrivals,
                       int64_t typical_us, Reporter& out) const;
    // How far back a player's usual spacing of updates is measured (the track keeps a
    // window more, for the acceleration check).
    int64_t spacing_horizon_us() const;
    // Lets go of the positions of the track that no window can start or end at any more.
    void forget_positions(Player& player) const;
    // Whether the gap before sample i may be a silence a window spans (span_long_silences).
    bool is_long_gap(const Track& track, size_t i) const;

    MovementLimits limits_;
};

}  // namespace arbiter::reference
