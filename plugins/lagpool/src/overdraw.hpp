// The failed grabs of one budget over a sliding window of relay time, and the score
// they add up to.
//
// docs/detection.md, "plugins/lagpool": the score grows with how often and by how much a
// player overdraws, never with one failed grab. How much: the costs of the failed grabs add
// up over the window, which is the time the player's actions claimed beyond what the budget
// allowed (a failed grab consumes nothing, so over a window that is what the player did
// minus what the game allows). The deficit of each grab (cost - available) is evidence, not
// the measure: it depends on where in the budget's cycle a grab fails, and a bot with a
// fixed rhythm fails each time with the budget just short of the cost, at a deficit of
// microseconds. How often: failed grabs are counted in episodes, a failed grab no more than
// burst_s after the first of an episode belonging to it, so that the burst of catch-up
// packets after a lag spike (all within a few milliseconds) counts once, while a cheat that
// keeps overdrawing counts again and again. Below min_episodes the score is 0.
#pragma once

#include <cstdint>

#include <arbiter/sdk/ring.hpp>

namespace arbiter::lagpool {

// One failed grab outside a grace period.
struct Overdraw {
    int64_t t_us = 0;        // relay time
    double cost_s = 0;       // what the action would have cost
    double available_s = 0;  // what the budget held
    double capacity_s = 0;   // the capacity at the time
    double deficit_s() const { return cost_s - available_s; }
};

struct OverdrawSettings {
    double window_s = 60.0;           // relay time over which overdraws add up
    double burst_s = 0.1;             // failed grabs this close to an episode's first join it
    int64_t min_episodes = 3;         // fewer episodes in a window score 0 (at least 2)
    int64_t confident_episodes = 10;  // episodes for full confidence
    double overdraw_scale_s = 1.0;    // overdrawn seconds at which the score reaches 1 - 1/e
};

struct OverdrawSummary {
    int64_t failed_grabs = 0;
    int64_t episodes = 0;
    double overdrawn_s = 0;  // the costs of the failed grabs, added up
    double largest_deficit_s = 0;
    int64_t first_us = 0;  // relay time of the oldest failed grab in the window
    int64_t last_us = 0;   // and of the newest
};

struct OverdrawScore {
    double score = 0;
    double confidence = 0;
};

class OverdrawWindow {
  public:
    // Adds a failed grab and forgets those that fell out of the window before it.
    void add(const Overdraw& overdraw, double window_s);

    OverdrawSummary summary(double burst_s) const;
    const Ring<Overdraw>& items() const { return items_; }

    // For restoring a saved window (lagpool_state.cpp); items in relay-time order.
    void restore(Ring<Overdraw> items) { items_ = std::move(items); }

  private:
    Ring<Overdraw> items_;
};

// The score of a window: 1 - exp(-overdrawn / scale) once there are min_episodes
// episodes, else 0; the confidence grows with the episodes up to confident_episodes.
OverdrawScore score_overdraws(const OverdrawSummary& summary, const OverdrawSettings& settings);

}  // namespace arbiter::lagpool
