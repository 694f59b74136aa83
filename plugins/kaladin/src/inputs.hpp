// What kaladin counts: the inputs a person made, not the packets the network carried.
//
// docs/detection.md, "Counting inputs": inputs that share a relay tick are one input, and the
// repeats of a held command are no input at all (a held key makes a real StarCraft II
// player pass 2,000 raw events a minute; counted this way the highest is 452).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <arbiter/sdk/ring.hpp>

namespace arbiter::kaladin {

// One distinct input: the relay's receive time of its first order, and its tick.
struct Input {
    int64_t t_us = 0;
    uint64_t tick = 0;
};

class InputStream {
  public:
    // An order at relay time t_us in relay tick `tick`; `repeat` when the client repeats a
    // held command. Returns true when it is a new distinct input.
    bool add(int64_t t_us, uint64_t tick, bool repeat);

    // Forgets inputs that no window needs any more: keeps every input of the last
    // `keep_us` of relay time, and at least `keep_count` inputs.
    void prune(int64_t now_us, int64_t keep_us, size_t keep_count);

    const Ring<Input>& recent() const { return recent_; }
    uint64_t distinct() const { return distinct_; }
    uint64_t merged() const { return merged_; }
    std::optional<uint64_t> last_tick() const { return last_tick_; }

    // Input was lost (InputLost): no interval may span the gap, so the windows start
    // again; the counts stay.
    void restart() {
        recent_.clear();
        last_tick_.reset();
    }

    // For state restore.
    void restore(Ring<Input> recent, uint64_t distinct, uint64_t merged,
                 std::optional<uint64_t> last_tick) {
        recent_ = std::move(recent);
        distinct_ = distinct;
        merged_ = merged;
        last_tick_ = last_tick;
    }

  private:
    Ring<Input> recent_;
    uint64_t distinct_ = 0;  // distinct inputs ever counted
    uint64_t merged_ = 0;    // orders folded into another input (same tick, or a repeat)
    std::optional<uint64_t> last_tick_;
};

}  // namespace arbiter::kaladin
