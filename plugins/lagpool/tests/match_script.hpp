// Builds recorded matches for the tests: players who run, jump, dig, lag and cheat,
// on a relay that ticks at 20 Hz and sometimes stalls. Deterministic (seeded), so that
// every run of a test sees the same events.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

namespace lagpool_test {

namespace build = arbiter::build;

inline constexpr int64_t kTickUs = 50'000;  // 20 Hz
inline constexpr int64_t kSecond = 1'000'000;

using Body =
    std::variant<build::MatchStart, build::MatchEnd, build::PlayerJoin, build::PlayerLeave,
                 build::Latency, build::Order, build::Position, build::Stat, build::TickBoundary>;

struct TimedEvent {
    int64_t t_us = 0;
    uint32_t player = 0;
    Body body;
};

// The events of one match, kept in relay-time order (ties in the order of adding).
class Timeline {
  public:
    void add(int64_t t_us, uint32_t player, Body body);

    // The relay stalls from start_us for length_us: it receives nothing meanwhile, so
    // everything that arrived in that time reaches it at the end, in a burst 10 us
    // apart, after the TickBoundary with which it closes the late tick (tick lag =
    // length_us). The tick boundaries that fell inside the stall never happened.
    void stall(int64_t start_us, int64_t length_us);

    // Sets every tick lag to zero: the same match as if the relay had not reported its lag.
    void forget_tick_lag();

    // The match as event batches of at most events_per_batch events.
    std::vector<std::vector<uint8_t>> batches(size_t events_per_batch = 64,
                                              const std::string& relay = "test-relay",
                                              uint64_t match_id = 1) const;

    const std::vector<TimedEvent>& events() const { return events_; }

  private:
    void sort();
    std::vector<TimedEvent> events_;
};

// A player who runs around, as the relay receives them.
struct Runner {
    uint32_t player = 1;
    int64_t from_us = 0;
    int64_t to_us = 60 * kSecond;
    std::function<double(double t_s)> speed = [](double) { return 10.0; };  // m/s
    double x = 0, y = 0, heading = 0;
    int turn_every_ticks = 80;
    bool jumps = false;  // a jump (1.3 m up and down) every 2 s
    uint32_t seed = 1;
    int64_t jitter_us = 20'000;  // the relay's receive time wanders within the tick
    double packet_loss = 0.0;    // probability that an update never arrives
    // Per-player lag spikes [start, end): the updates are held back and arrive in a
    // burst at the end, 300 us apart.
    std::vector<std::pair<int64_t, int64_t>> spikes{};
    // Relay times at which the server teleports the player 300 m away.
    std::vector<int64_t> server_teleports{};
};
void add_runner(Timeline& timeline, const Runner& runner);

// Orders of one kind, every interval_us (+ up to jitter_us), from from_us to to_us;
// `burst` orders at each time.
struct Actor {
    uint32_t player = 1;
    std::string kind = "dig";
    int64_t from_us = 0;
    int64_t to_us = 60 * kSecond;
    int64_t interval_us = 200'000;
    int64_t jitter_us = 0;
    int burst = 1;
    uint32_t seed = 7;
    // When set, each order is followed by a StatChange of this stat whose delta is
    // stated_s: the time the server says the action takes (a Luanti dig's time).
    std::string stat{};
    double stated_s = 0.0;
};
void add_actor(Timeline& timeline, const Actor& actor);

// Match start, joins, tick boundaries every tick with a small lag (up to max_noise_us),
// and the match end.
void add_match_frame(Timeline& timeline, const std::vector<uint32_t>& players, int64_t length_us,
                     uint32_t max_noise_us = 2'000, uint32_t seed = 3);

}  // namespace lagpool_test
