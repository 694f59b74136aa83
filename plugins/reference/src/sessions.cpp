#include "sessions.hpp"

#include <algorithm>

#include "movement.hpp"

namespace arbiter::reference {

std::optional<ReconnectMeasure> check_reconnects(const std::deque<int64_t>& reconnects_us,
                                                 const SessionLimits& limits) {
    if (reconnects_us.empty()) return std::nullopt;
    const int64_t window_us = static_cast<int64_t>(limits.reconnect_window_s * 1e6);
    ReconnectMeasure m;
    m.last_us = m.first_us = reconnects_us.back();
    for (auto it = reconnects_us.rbegin();
         it != reconnects_us.rend() && *it > m.last_us - window_us; ++it) {
        ++m.reconnects;
        m.first_us = *it;
    }
    if (m.reconnects <= limits.max_reconnects) return std::nullopt;
    m.score =
        excess_score(static_cast<double>(m.reconnects), static_cast<double>(limits.max_reconnects));
    return m;
}

bool unexpected(const std::string& value, const std::vector<std::string>& allowed) {
    return !allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end();
}

bool two_places(const LiveSession& a, const LiveSession& b) {
    return a.relay_id != b.relay_id || a.match_id != b.match_id || a.player != b.player;
}

}  // namespace arbiter::reference
