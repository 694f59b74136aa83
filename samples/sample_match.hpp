// The bundled sample match, as a list of events that can be cut into batches of any
// size. make_sample_match writes it (one batch per relay tick) as
// samples/sample-match.arbev; tests regroup it to show that batch size changes nothing.
// Deterministic: a fixed seed and no clock.
//
// One match of 60 s on a 20 Hz relay, six players:
//   1 alice    honest, walks at 5 m/s and turns now and then
//   2 bob      honest, runs at 18.5 m/s, close to the 20 m/s limit
//   3 carol    honest, runs at 17 m/s; a lag spike at 20 s (0.8 s of silence, then a
//              burst of 16 late updates within 5 ms) and 10 % packet loss from 30 to 40 s
//   4 dave     honest, respawned 500 m away by the server at 30 s
//   5 mallory  speed hack: 32 m/s from 15 s to 35 s
//   6 trent    teleports 250 m in one update at 25 s, and 60 m in one update at 40 s
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

namespace arbiter::samples {

struct MatchEvent {
    int64_t t_us = 0;
    uint64_t tick = 0;
    uint32_t player = 0;
    std::variant<build::MatchStart, build::PlayerJoin, build::Position, build::Latency,
                 build::TickBoundary, build::MatchEnd>
        body;
};

using EventGroups = std::vector<std::vector<MatchEvent>>;

inline constexpr const char* kSampleRelay = "sample-relay";
inline constexpr uint64_t kSampleMatch = 1;

// The sample match's events, grouped as make_sample_match groups them into batches
// (the joins, then one group per tick).
EventGroups sample_match_events();

// The same events, regrouped into batches of `size` events (the last may be shorter).
EventGroups regroup(const EventGroups& groups, size_t size);

// One EventBatch per group, with sequence numbers from 0.
std::vector<std::vector<uint8_t>> encode(const EventGroups& groups,
                                         const std::string& relay_id = kSampleRelay,
                                         uint64_t match_id = kSampleMatch);

}  // namespace arbiter::samples
