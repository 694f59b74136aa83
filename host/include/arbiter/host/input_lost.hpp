// The batch the host writes to tell plugins that a stretch of a match was lost (schema
// 1.1, InputLost in abi/schema/events.fbs). It is delivered just before the first batch
// after the gap, and only to plugins built against schema 1.1 or later.
#pragma once

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/ingest.hpp"

namespace arbiter::host {

// The schema minor a plugin must be built against to be sent an InputLost batch.
inline constexpr uint32_t kInputLostSchemaMinor = 1;

// One InputLost event for `gap`, in a batch of the match of `after` (the first batch
// after the gap), numbered as the last lost batch, at the relay time and tick of the
// first event of `after`.
VerifiedBatch input_lost_batch(const VerifiedBatch& after, const LostStretch& gap);

}  // namespace arbiter::host
