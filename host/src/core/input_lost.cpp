#include "arbiter/host/input_lost.hpp"

#include <arbiter/arbiter_plugin.h>
#include <arbiter/events_generated.h>

namespace arbiter::host {

static_assert(ARB_SCHEMA_VERSION_MINOR >= kInputLostSchemaMinor,
              "InputLost needs schema 1.1; this host's schema is older");

VerifiedBatch input_lost_batch(const VerifiedBatch& after, const LostStretch& gap) {
    uint64_t tick = 0;
    if (const auto* events = after.root().events(); events && events->size() > 0)
        tick = events->Get(0)->tick();

    flatbuffers::FlatBufferBuilder builder(256);
    fb::InputLostBuilder lost(builder);
    lost.add_first_sequence(gap.from_sequence);
    lost.add_last_sequence(gap.to_sequence);
    if (gap.after_relay_us) lost.add_last_heard_relay_us(*gap.after_relay_us);
    lost.add_next_heard_relay_us(gap.before_relay_us);
    const auto body = lost.Finish();
    const auto event = fb::CreateEvent(builder, gap.before_relay_us, tick, 0,
                                       fb::EventBody::InputLost, body.Union());
    const auto events = builder.CreateVector(&event, 1);
    const auto relay = builder.CreateString(after.relay_id);
    const auto root = fb::CreateEventBatch(builder, ARB_SCHEMA_VERSION_MAJOR, kInputLostSchemaMinor,
                                           relay, after.match_id, gap.to_sequence, events);
    builder.Finish(root, ARB_SCHEMA_FILE_IDENTIFIER);

    VerifiedBatch batch;
    batch.bytes.assign(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
    batch.relay_id = after.relay_id;
    batch.match_id = after.match_id;
    batch.sequence = gap.to_sequence;
    batch.event_count = 1;
    batch.first_relay_time_us = gap.before_relay_us;
    batch.last_relay_time_us = gap.before_relay_us;
    return batch;
}

}  // namespace arbiter::host
