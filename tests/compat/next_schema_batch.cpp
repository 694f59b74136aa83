#include "next_schema_batch.hpp"

#include <arbiter/arbiter_plugin.h>

#include "events-next_generated.h"

namespace arbiter::test {

std::vector<uint8_t> next_schema_batch(const std::string& relay, uint64_t match, int64_t t_us) {
    namespace fbn = arbiter::fb_next;
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<fbn::Event>> events;
    for (uint32_t player = 1; player <= 3; ++player) {
        auto join = fbn::CreatePlayerJoin(
            builder, builder.CreateString("account-" + std::to_string(player)));
        events.push_back(
            fbn::CreateEvent(builder, t_us, 0, player, fbn::EventBody::PlayerJoin, join.Union()));
    }
    auto future =
        fbn::CreateFutureKind(builder, builder.CreateString("a kind from the next minor"), 2.5);
    events.push_back(
        fbn::CreateEvent(builder, t_us + 5, 0, 1, fbn::EventBody::FutureKind, future.Union()));
    fbn::Vec3 where(1.0f, 0.0f, 0.0f);
    fbn::PositionUpdateBuilder position(builder);
    position.add_position(&where);
    auto moved = position.Finish();
    events.push_back(
        fbn::CreateEvent(builder, t_us + 10, 20, 1, fbn::EventBody::PositionUpdate, moved.Union()));
    auto batch =
        fbn::CreateEventBatch(builder, ARB_SCHEMA_VERSION_MAJOR, ARB_SCHEMA_VERSION_MINOR + 1,
                              builder.CreateString(relay), match, 0, builder.CreateVector(events));
    builder.Finish(batch, ARB_SCHEMA_FILE_IDENTIFIER);
    return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

}  // namespace arbiter::test
