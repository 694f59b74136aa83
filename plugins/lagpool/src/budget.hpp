// One time budget, after Luanti's LagPool (src/server/player_sao.h).
//
// Luanti's names mislead: LagPool::m_pool is the time a player has already *spent*, not
// the time left, and the budget available is m_max - m_pool. This class keeps exactly
// that bookkeeping under plain names: spent() and capacity(), with
// available() = capacity() - spent(). Everything that follows from it is Luanti's:
//
// - a budget starts empty (Luanti starts m_pool at m_max), and empty() makes it so again;
// - time pays back spent time, one second per second, down to a full budget (add());
// - a change of capacity keeps the time spent, capped at the new capacity (setMax()), so
//   a rise makes budget available at once and a fall takes away as much as it fell,
//   never below empty;
// - a grab is all or nothing: one that would overdraw fails and consumes nothing, and a
//   cost of zero or less always succeeds (grab()).
#pragma once

namespace arbiter::lagpool {

class Budget {
  public:
    // An empty budget of this capacity, in seconds.
    explicit Budget(double capacity_s);

    // A budget as it was saved (lagpool_state.cpp). Throws std::invalid_argument unless
    // 0 <= spent_s <= capacity_s, both finite.
    static Budget restored(double capacity_s, double spent_s);

    double capacity() const { return capacity_s_; }
    double spent() const { return spent_s_; }
    double available() const { return capacity_s_ - spent_s_; }

    // Luanti's setMax(): the time spent is kept, capped at the new capacity.
    void set_capacity(double capacity_s);

    // Luanti's add(): elapsed relay time pays back spent time, down to zero.
    void recharge(double elapsed_s);

    // Luanti's empty(): nothing available (after a server teleport, at session start).
    void empty() { spent_s_ = capacity_s_; }

    // Luanti's grab(): true and the cost is spent, or false and nothing is spent.
    bool grab(double cost_s);

    // Brings the budget forward in time, in the order of Luanti's PlayerSAO::step:
    // first the capacity, then the recharge.
    void advance(double capacity_s, double elapsed_s) {
        set_capacity(capacity_s);
        recharge(elapsed_s);
    }

  private:
    double capacity_s_;
    double spent_s_;
};

}  // namespace arbiter::lagpool
