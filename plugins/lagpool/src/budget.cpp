#include "budget.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace arbiter::lagpool {

Budget::Budget(double capacity_s) : capacity_s_(capacity_s), spent_s_(capacity_s) {}

Budget Budget::restored(double capacity_s, double spent_s) {
    if (!std::isfinite(capacity_s) || !std::isfinite(spent_s) || capacity_s < 0 || spent_s < 0 ||
        spent_s > capacity_s)
        throw std::invalid_argument("a budget has 0 <= spent <= capacity, both finite");
    Budget budget(capacity_s);
    budget.spent_s_ = spent_s;
    return budget;
}

void Budget::set_capacity(double capacity_s) {
    capacity_s_ = capacity_s;
    spent_s_ = std::min(spent_s_, capacity_s_);
}

void Budget::recharge(double elapsed_s) {
    if (elapsed_s > 0) spent_s_ = std::max(0.0, spent_s_ - elapsed_s);
}

bool Budget::grab(double cost_s) {
    if (cost_s <= 0) return true;
    if (spent_s_ + cost_s > capacity_s_) return false;
    spent_s_ += cost_s;
    return true;
}

}  // namespace arbiter::lagpool
