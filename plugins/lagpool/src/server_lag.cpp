#include "server_lag.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::lagpool {

void ServerLag::observe(int64_t t_us, double lag_s, double halving_s) {
    // Events of a match come in relay-time order; should one not, it neither decays the
    // estimate nor moves its clock back.
    const int64_t at_us = std::max(t_us, at_us_);
    value_s_ = std::max(estimate_s(at_us, halving_s), std::max(lag_s, 0.0));
    at_us_ = at_us;
}

double ServerLag::estimate_s(int64_t t_us, double halving_s) const {
    if (value_s_ <= 0.0 || t_us <= at_us_) return value_s_;
    const double elapsed_s = static_cast<double>(t_us - at_us_) / 1e6;
    return value_s_ * std::exp2(-elapsed_s / halving_s);
}

double budget_capacity(double lag_estimate_s, double min_capacity_s, double lag_factor) {
    return std::max(min_capacity_s, lag_factor * lag_estimate_s);
}

}  // namespace arbiter::lagpool
