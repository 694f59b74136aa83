// Entropy: the Shannon entropy, in bits, of the intervals between distinct inputs binned
// by one relay tick, over the same windows as the CV. A fixed-delay script puts nearly
// every interval in one or two bins (near 0 bits); real StarCraft II players stay above
// 1.6 bits. The bin is the relay's tick because the relay cannot time an input finer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace arbiter::kaladin {

struct EntropyMeasure {
    double bits = 0;
    size_t bins = 0;  // distinct bins used
};

// tick_us: the relay's tick in microseconds (> 0).
EntropyMeasure binned_entropy(const std::vector<int64_t>& intervals_us, double tick_us);

// 0 at the limit, 1 at 0 bits.
double entropy_score(double bits, double limit);

}  // namespace arbiter::kaladin
