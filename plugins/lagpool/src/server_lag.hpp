// The relay's lag estimate, and the budget capacity it allows.
//
// Luanti (src/server.cpp, Server::AsyncRunStep) keeps the longest recent server step as
// its "max lag estimate": a longer step raises it at once, and it decays slowly
// (x 0.9998 a step, about half every five minutes). PlayerSAO::step then sets every
// budget's capacity to max(5 s, 2 x that estimate), so a lagging server, which delivers
// a player's movement late and in bursts, is not mistaken for a cheating player.
//
// Here the lag comes from the relay's TickBoundary events (how late it ran a tick), and
// the decay is by relay time rather than per step (half every lag_halving_s), so that it
// does not depend on the tick rate or on how events are batched.
#pragma once

#include <cstdint>

namespace arbiter::lagpool {

class ServerLag {
  public:
    ServerLag() = default;
    // A saved estimate (lagpool_state.cpp): value_s as it stood at relay time at_us.
    ServerLag(double value_s, int64_t at_us) : value_s_(value_s), at_us_(at_us) {}

    // The relay reported at t_us a tick it ran lag_s late: the estimate jumps up at once.
    void observe(int64_t t_us, double lag_s, double halving_s);

    // The estimate at t_us: the worst recent lag, halved for every halving_s since.
    double estimate_s(int64_t t_us, double halving_s) const;

    double value_s() const { return value_s_; }
    int64_t at_us() const { return at_us_; }

  private:
    double value_s_ = 0.0;
    int64_t at_us_ = 0;
};

// max(min_capacity_s, lag_factor x lag_estimate_s): Luanti's LAG_POOL_MIN and its 2x.
double budget_capacity(double lag_estimate_s, double min_capacity_s, double lag_factor);

}  // namespace arbiter::lagpool
