// A recorded batch sent as another relay's: what `arbiter send --relay` needs, because a
// connection feeds its own relay's matches alone (docs/serve-protocol.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace arbiter::host {

// The batch with `relay_id` as its relay id. The new id is appended to the buffer and the
// batch's relay_id field pointed at it; every byte before stays as it was, so events (and
// any field of a newer schema minor this build does not know) reach the server as
// recorded. `batch` must have passed ingest_batch. nullopt when it has no relay_id field
// to point elsewhere.
std::optional<std::vector<uint8_t>> with_relay_id(std::span<const uint8_t> batch,
                                                  std::string_view relay_id);

}  // namespace arbiter::host
