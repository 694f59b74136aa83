#include "quantum.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace arbiter::kaladin {

std::optional<QuantumFit> fit_quantum(const Ring<double>& changes, double tolerance,
                                      double min_step) {
    if (changes.empty()) return std::nullopt;
    std::vector<double> sizes;
    sizes.reserve(changes.size());
    for (double c : changes)
        sizes.push_back(std::fabs(c));
    std::sort(sizes.begin(), sizes.end());
    if (!(sizes.front() > 0) || sizes.front() < min_step) return std::nullopt;
    double step = sizes.front(), sum = 0, multiples = 0;
    for (double size : sizes) {
        const double multiple = std::max(1.0, std::round(size / step));
        if (std::fabs(size / step - multiple) > tolerance) return std::nullopt;
        sum += size;
        multiples += multiple;
        step = sum / multiples;
    }
    if (step < min_step) return std::nullopt;
    QuantumFit fit;
    fit.step_rad = step;
    fit.changes = changes.size();
    for (double c : changes) {
        const double multiple = std::fabs(c) / step;
        const double residual = std::fabs(multiple - std::round(multiple));
        if (residual > tolerance) return std::nullopt;
        fit.worst_residual = std::max(fit.worst_residual, residual);
        fit.largest_multiple = std::max(fit.largest_multiple, std::round(multiple));
    }
    return fit;
}

double min_step_for(double yaw) {
    const double magnitude = std::max(std::fabs(yaw), 2.0 * std::numbers::pi);
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude = f x 2^exponent, f in [0.5, 1)
    return 20.0 * std::ldexp(1.0, exponent - 24);
}

bool QuantumTracker::add(double yaw, size_t keep) {
    const std::optional<double> last = last_yaw;
    last_yaw = yaw;
    if (!last) return false;
    const double change = std::remainder(yaw - *last, 2.0 * std::numbers::pi);
    if (change == 0) return false;
    changes.push_back(change);
    while (changes.size() > keep)
        changes.pop_front();
    return true;
}

}  // namespace arbiter::kaladin
