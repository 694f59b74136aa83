// An event file into a host, record by record: the one loop behind `arbiter replay`,
// `arbiter evaluate` and PluginHarness::replay, so that each judges a file alike (a
// damaged stretch is told to the host, which then treats the matches open across it as
// having lost input; a refused batch is counted and the rest goes on).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "arbiter/host/host.hpp"

namespace arbiter::host {

struct FileProblem {
    enum class Kind {
        unreadable,  // the file could not be opened or has no event-log header
        damaged,     // bytes that are not a record, skipped to the next one
        refused,     // a record whose batch the host refused
    };
    Kind kind = Kind::unreadable;
    uint64_t offset = 0;   // where the record or the damage begins
    uint64_t skipped = 0;  // damaged: bytes passed over
    std::string text;      // what was wrong (the host's reason, for a refused batch)
};

struct FileTally {
    bool unreadable = false;
    uint64_t records = 0;  // batches pushed, refused ones included
    uint64_t damaged = 0;  // damaged stretches
    uint64_t refused = 0;
};

// Reads records of at most the host's max_batch_bytes. `problem` hears each problem as it
// is met; `at` each record's offset before it is pushed (for a progress line).
FileTally replay_file(const std::filesystem::path& path, Host& host,
                      const std::function<void(const FileProblem&)>& problem = {},
                      const std::function<void(uint64_t offset)>& at = {});

}  // namespace arbiter::host
