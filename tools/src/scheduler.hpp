// The relay's view of time in a simulated match: ticks, and events waiting for the tick
// in which the relay receives them. A packet sent now may arrive in a later tick (its
// latency, a lag spike's burst, an answer to a stimulus); it waits here, so that every
// tick's events go out in relay-time order however they were produced.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

namespace arbiter::tools::sim {

using Body = std::variant<build::PlayerJoin, build::PlayerLeave, build::Latency, build::Order,
                          build::Position, build::Hit, build::Kill, build::Inventory, build::Stat,
                          build::Stimulus>;

struct SimEvent {
    int64_t t_us = 0;
    uint32_t player = 0;
    Body body;
};

inline int64_t to_us(double seconds) {
    return std::llround(seconds * 1e6);
}

// Tick k opens at round(k / hz) seconds, in microseconds.
class TickClock {
  public:
    explicit TickClock(double hz) : hz_(hz) {}
    double hz() const { return hz_; }
    int64_t start_us(uint64_t tick) const {
        return std::llround(static_cast<double>(tick) * 1e6 / hz_);
    }
    uint64_t tick_of(int64_t t_us) const {
        if (t_us <= 0) return 0;
        auto tick = static_cast<uint64_t>(std::floor(static_cast<double>(t_us) * hz_ / 1e6));
        while (start_us(tick + 1) <= t_us)
            ++tick;
        while (tick > 0 && start_us(tick) > t_us)
            --tick;
        return tick;
    }

  private:
    double hz_;
};

class Scheduler {
  public:
    Scheduler(TickClock clock, int64_t end_us) : clock_(clock), end_us_(end_us) {}

    // An event the relay receives (or makes) at t_us. Events at or after the end of the
    // match are dropped (the relay has closed it) and counted.
    void at(int64_t t_us, uint32_t player, Body body) {
        if (t_us >= end_us_) {
            ++dropped_;
            return;
        }
        const uint64_t tick = clock_.tick_of(t_us);
        if (tick < current_)
            throw std::logic_error("an event scheduled at " + std::to_string(t_us) +
                                   " us, in tick " + std::to_string(tick) + ", after tick " +
                                   std::to_string(current_) + " was written");
        buckets_[tick].push_back({t_us, player, std::move(body)});
    }

    // The events of a tick, taken out (later ticks stay), and the order to write them in:
    // relay time, ties in the order they were scheduled. (Sorting indices rather than the
    // events themselves saves moving every event's body around.)
    std::vector<SimEvent> take(uint64_t tick, std::vector<uint32_t>& order) {
        current_ = tick + 1;
        std::vector<SimEvent> events;
        order.clear();
        auto it = buckets_.find(tick);
        if (it == buckets_.end()) return events;
        events = std::move(it->second);
        buckets_.erase(it);
        order.resize(events.size());
        for (uint32_t i = 0; i < order.size(); ++i)
            order[i] = i;
        // Within a bucket events were added in scheduling order: a stable sort by time
        // keeps ties in it.
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return events[a].t_us < events[b].t_us; });
        return events;
    }

    // Takes back the position updates of a player still waiting to arrive: a relay that
    // moves a player (a respawn) discards the client's positions sent before the move, as
    // game servers do until the client confirms it, so a burst held back by a lag spike
    // never drags the player back to where it was. Those that arrive at after_us or later
    // are taken; returns how many.
    size_t discard_positions(uint32_t player, int64_t after_us) {
        size_t discarded = 0;
        for (auto& [tick, events] : buckets_) {
            const auto stale = std::remove_if(events.begin(), events.end(), [&](const SimEvent& e) {
                return e.player == player && e.t_us >= after_us &&
                       std::holds_alternative<build::Position>(e.body);
            });
            discarded += static_cast<size_t>(events.end() - stale);
            events.erase(stale, events.end());
        }
        return discarded;
    }

    const TickClock& clock() const { return clock_; }
    uint64_t dropped() const { return dropped_; }

  private:
    TickClock clock_;
    int64_t end_us_;
    uint64_t current_ = 0;
    uint64_t dropped_ = 0;
    std::map<uint64_t, std::vector<SimEvent>> buckets_;
};

}  // namespace arbiter::tools::sim
