// Session checks as pure functions: reconnect spam, one account in two places at once,
// and a client version or handshake the operator does not expect (docs/detection.md,
// "Sessions").
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "hits.hpp"

namespace arbiter::reference {

struct SessionLimits {
    int64_t max_reconnects = 5;  // in the window; more is spam
    double reconnect_window_s = 60.0;
    std::vector<std::string> client_versions;  // allowed; empty: not checked
    std::vector<std::string> handshakes;       // allowed; empty: not checked
};

struct ReconnectMeasure {
    int64_t reconnects = 0;
    int64_t first_us = 0;
    int64_t last_us = 0;
    double score = 0;
};

// Reconnects (relay times, oldest first) in the window ending at the last one.
std::optional<ReconnectMeasure> check_reconnects(const std::deque<int64_t>& reconnects_us,
                                                 const SessionLimits& limits);

// A value not in a non-empty list of allowed values.
bool unexpected(const std::string& value, const std::vector<std::string>& allowed);

// Where an account is connected.
struct LiveSession {
    std::string relay_id;
    uint64_t match_id = 0;
    uint32_t player = 0;
    uint64_t address_hash = 0;
    int64_t since_us = 0;  // relay time of the join
};

// The same account as two players at once: in two matches, or twice in one.
bool two_places(const LiveSession& a, const LiveSession& b);

}  // namespace arbiter::reference
