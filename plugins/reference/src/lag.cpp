#include "lag.hpp"

#include <algorithm>

namespace arbiter::reference {

LagAllowance lag_allowance(const LagSeen& seen, int64_t from_us, int64_t to_us, double cap_s,
                           double rtt_cap_s) {
    LagAllowance lag;
    lag.silence_s = silence_allowance_s(seen.arrivals, from_us, to_us, cap_s);
    const int64_t look_back_us = static_cast<int64_t>(rtt_cap_s * 1e6) + 1'000'000;
    uint32_t longest_rtt_us = 0;
    for (const RttSample& r : seen.rtts)
        if (r.t_us >= from_us - look_back_us && r.t_us <= to_us)
            longest_rtt_us = std::max(longest_rtt_us, r.rtt_us);
    lag.rtt_s = std::min(static_cast<double>(longest_rtt_us) / 1e6, std::min(cap_s, rtt_cap_s));
    lag.used_s = std::max(lag.silence_s, lag.rtt_s);
    return lag;
}

}  // namespace arbiter::reference
