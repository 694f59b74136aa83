// The lag the relay saw of a player, as the hit and item checks allow for it: a late claim,
// or a burst of them, within that much is lag, not cheating (docs/detection.md, "Lag is
// not cheating").
#pragma once

#include <cstdint>

#include <arbiter/sdk/ring.hpp>

#include "arrivals.hpp"
#include "movement.hpp"

namespace arbiter::reference {

// What the relay measured of one player's link: the silences between what it heard from
// the client, and the round trips (kept in the player's movement track).
struct LagSeen {
    const Arrivals& arrivals;
    const Ring<RttSample>& rtts;
};

struct LagAllowance {
    double silence_s = 0;
    double rtt_s = 0;
    double used_s = 0;
};

// The lag around [from_us, to_us], capped: the longest silence (events held back arrive in
// a burst after it), or the longest round trip the relay measured (the first one after a
// spike spans it, and it is the player's own link even where no silence was seen, as after
// a join in the middle of a spike).
LagAllowance lag_allowance(const LagSeen& seen, int64_t from_us, int64_t to_us, double cap_s,
                           double rtt_cap_s);

}  // namespace arbiter::reference
