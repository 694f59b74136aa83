#include "arbiter/host/ingest.hpp"

#include <arbiter/arbiter_plugin.h>

namespace arbiter::host {

IngestResult ingest_batch(std::span<const uint8_t> bytes, uint64_t max_batch_bytes) {
    IngestResult result;
    auto refuse = [&](std::string problem) {
        result.problem = std::move(problem);
        return result;
    };
    uint64_t cap = std::min<uint64_t>(max_batch_bytes, ARB_MAX_BATCH_BYTES);
    if (bytes.size() > cap)
        return refuse("batch of " + std::to_string(bytes.size()) + " bytes exceeds the cap of " +
                      std::to_string(cap));
    if (bytes.size() < 8)
        return refuse("batch of " + std::to_string(bytes.size()) + " bytes is too short");
    if (!flatbuffers::BufferHasIdentifier(bytes.data(), ARB_SCHEMA_FILE_IDENTIFIER))
        return refuse("not an event batch: file identifier is not \"" ARB_SCHEMA_FILE_IDENTIFIER
                      "\"");
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    if (!verifier.VerifyBuffer<fb::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER))
        return refuse(
            "event batch fails FlatBuffers verification (damaged or not written with the schema)");

    const auto* root = flatbuffers::GetRoot<fb::EventBatch>(bytes.data());
    if (root->schema_major() == 0) return refuse("event batch carries no schema version");
    if (root->schema_major() != ARB_SCHEMA_VERSION_MAJOR)
        return refuse("event batch has schema " + std::to_string(root->schema_major()) + "." +
                      std::to_string(root->schema_minor()) + ", this host reads schema " +
                      std::to_string(ARB_SCHEMA_VERSION_MAJOR) + ".x");
    if (!root->relay_id() || root->relay_id()->size() == 0)
        return refuse("event batch has no relay_id");

    VerifiedBatch& batch = result.batch;
    batch.relay_id = root->relay_id()->str();
    batch.match_id = root->match_id();
    batch.sequence = root->sequence();
    if (const auto* events = root->events()) {
        batch.event_count = events->size();
        int64_t previous = INT64_MIN;
        for (flatbuffers::uoffset_t i = 0; i < events->size(); ++i) {
            const fb::Event* event = events->Get(i);
            if (event->body_type() == fb::EventBody::NONE)
                return refuse("event " + std::to_string(i) + " has no body");
            if (event->relay_time_us() < previous)
                return refuse("event " + std::to_string(i) + " has relay time " +
                              std::to_string(event->relay_time_us()) +
                              " us, before the event before it (" + std::to_string(previous) +
                              " us): events must be in relay-time order");
            previous = event->relay_time_us();
            if (event->body_type() == fb::EventBody::MatchEnd) batch.ends_match = true;
        }
        if (batch.event_count) {
            batch.first_relay_time_us = events->Get(0)->relay_time_us();
            batch.last_relay_time_us = previous;
        }
    }
    batch.bytes.assign(bytes.begin(), bytes.end());
    result.ok = true;
    return result;
}

}  // namespace arbiter::host
