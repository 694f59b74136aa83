// When the relay heard from a player: the silences that lag leaves, so that checks of
// rates and timing can allow for them (docs/detection.md, "Lag is not cheating").
#pragma once

#include <algorithm>
#include <cstdint>

#include <arbiter/events_generated.h>
#include <arbiter/sdk/ring.hpp>

#include "lazy.hpp"

namespace arbiter::reference {

struct Gap {
    int64_t t_us = 0;    // relay time the silence ended (the first event after it)
    int64_t gap_us = 0;  // how long the relay heard nothing from the player before it
};

struct Arrivals {
    int64_t last_us = -1;  // the last relay time the player was heard; -1 before the first
    // Silences longer than kMinGapUs, oldest first: shorter ones are the usual spacing.
    // Every player has this record and most never fall silent: a pointer until the first
    // silence (a Ring alone is 24 bytes while empty).
    Lazy<Ring<Gap>> gaps;

    static constexpr int64_t kMinGapUs = 100'000;

    void heard(int64_t t_us) {
        if (last_us >= 0 && t_us - last_us > kMinGapUs)
            gaps.get().push_back({t_us, t_us - last_us});
        last_us = std::max(last_us, t_us);
    }

    void forget_before(int64_t t_us) {
        Ring<Gap>* kept = gaps.find();
        if (!kept) return;
        while (!kept->empty() && kept->front().t_us < t_us)
            kept->pop_front();
    }
};

// Whether the relay heard from the player's client when it received this event: what the
// client sent (its positions, orders and claims, and the handshake a join reports), not
// what the relay or the game server made (a stimulus, a stat, a respawn's teleport). A
// server event during a lag spike would otherwise make the spike look shorter than it was,
// and the claims it held back look late; a join in the middle of a spike starts the
// silence that the claims it held back arrive after.
inline bool heard_from_client(const fb::Event& event) {
    switch (event.body_type()) {
        case fb::EventBody::PositionUpdate:
            return !event.body_as_PositionUpdate()->server_teleport();
        case fb::EventBody::Order:
        case fb::EventBody::HitClaim:
        case fb::EventBody::KillClaim:
        case fb::EventBody::PlayerJoin:
            return true;
        default:
            return false;
    }
}

// The lag allowance for events received in [from_us, to_us]: the longest silence that
// ended in it, or in the stretch as long as the cap and a second before it, capped. Events
// held back by a silence arrive right after it, with the claims and actions of the whole
// silence in them; a window may start in the middle of their burst, after the silence.
inline double silence_allowance_s(const Arrivals& arrivals, int64_t from_us, int64_t to_us,
                                  double cap_s) {
    const int64_t look_back_us = static_cast<int64_t>(cap_s * 1e6) + 1'000'000;
    int64_t longest = 0;
    for (const Gap& g : arrivals.gaps.view())
        if (g.t_us >= from_us - look_back_us && g.t_us <= to_us)
            longest = std::max(longest, g.gap_us);
    return std::min(static_cast<double>(longest) / 1e6, cap_s);
}

}  // namespace arbiter::reference
