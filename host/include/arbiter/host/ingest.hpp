// Ingest: the one gate every batch passes before any plugin sees it. Size cap,
// FlatBuffers Verifier, schema version, and the rules of the event contract the Verifier
// cannot know: a relay id, every string UTF-8, every number finite, relay times within
// kMaxRelayTimeUs and in order. What passes here a plugin may rely on.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <arbiter/events_generated.h>

namespace arbiter::host {

// Relay times (and the relay's wall clock in MatchStart and MatchEnd) lie within
// +-2^53 us (+-285 years): exact in a double, and the difference of any two of them
// cannot overflow an int64, so a plugin subtracting times needs no overflow checks.
inline constexpr int64_t kMaxRelayTimeUs = int64_t{1} << 53;

// A batch that passed ingest. Owns its bytes, so it can be queued.
struct VerifiedBatch {
    std::vector<uint8_t> bytes;
    std::string relay_id;
    uint64_t match_id = 0;
    uint64_t sequence = 0;
    size_t event_count = 0;
    int64_t first_relay_time_us = 0;
    int64_t last_relay_time_us = 0;
    bool ends_match = false;  // holds a MatchEnd event

    const fb::EventBatch& root() const {
        return *flatbuffers::GetRoot<fb::EventBatch>(bytes.data());
    }
};

struct IngestResult {
    bool ok = false;
    VerifiedBatch batch;  // when ok
    std::string problem;  // when not: what was wrong
};

// Checks bytes from outside (a file, a socket, the embedding API).
IngestResult ingest_batch(std::span<const uint8_t> bytes, uint64_t max_batch_bytes);

}  // namespace arbiter::host
