// Batches written with a stand-in for the next event schema minor (one more event kind,
// FutureKind), for the test that older readers skip what they do not know.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace arbiter::test {

// One EventBatch of the next schema minor for `relay`/`match`: players 1 to 3 join, a
// FutureKind event for player 1, then player 1 moves once (what the echo plugin answers).
std::vector<uint8_t> next_schema_batch(const std::string& relay, uint64_t match, int64_t t_us);

}  // namespace arbiter::test
