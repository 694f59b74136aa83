// Reaction time, only where the relay timed both ends: it sent a Stimulus to the player and
// received an Order that answers it (Order.response_to). The time between the two includes
// the round trip; it is corrected by the player's *lowest* measured round-trip time, so
// that an error in the estimate always makes the player look slower, never faster
// (docs/detection.md, "Errors of estimate favour the player"). A signal when at least 20
// corrected times cluster under 100 ms (their median is under it); a trip-wire when their
// median is under 40 ms. Elite sprinters average about 160 ms.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <arbiter/sdk/ring.hpp>

namespace arbiter::kaladin {

class ReactionTracker {
  public:
    static constexpr size_t kMaxPending = 256;  // stimuli awaiting an answer, per player

    void stimulus(uint64_t id, int64_t t_us);
    // An order answering `id`; returns true when it completed a pair (the first answer
    // to a stimulus this player was sent).
    bool response(uint64_t id, int64_t t_us, size_t keep_pairs);
    void rtt(uint32_t rtt_us);

    // The corrected times of the pairs kept, in ms.
    std::vector<double> corrected_ms() const;
    std::optional<uint32_t> lowest_rtt_us() const { return lowest_rtt_us_; }
    size_t pairs() const { return delays_us_.size(); }

    // For state save and restore.
    const std::map<uint64_t, int64_t>& pending() const { return pending_; }
    const Ring<int64_t>& delays_us() const { return delays_us_; }
    void restore(std::map<uint64_t, int64_t> pending, Ring<int64_t> delays,
                 std::optional<uint32_t> lowest) {
        pending_ = std::move(pending);
        delays_us_ = std::move(delays);
        lowest_rtt_us_ = lowest;
    }

  private:
    std::map<uint64_t, int64_t> pending_;  // stimulus id -> relay time sent
    Ring<int64_t> delays_us_;              // stimulus to answer, raw
    std::optional<uint32_t> lowest_rtt_us_;
};

double median(std::vector<double> values);

// Reaction score: 0 at the limit (100 ms), 1 at the trip-wire (40 ms) or below.
double reaction_score(double median_ms, double limit_ms, double tripwire_ms);

}  // namespace arbiter::kaladin
