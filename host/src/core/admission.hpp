// Admission: what a batch passes before any plugin sees it, the same for a running host
// and for a baseline run. It is read and verified (ingest), belongs to the relay whose
// connection brought it, is neither a duplicate nor a step back in its match's sequence
// (the ledger), and a gap before it becomes an InputLost batch to go ahead of it. A batch
// that ends its match is recorded as ended in the ledger at once, so that the next batch
// (a new match under the same id) is judged against that end.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "arbiter/host/ingest.hpp"
#include "arbiter/host/sequence_ledger.hpp"

namespace arbiter::host {

struct Admission {
    std::optional<std::string> problem;  // why it was refused; nothing else is set then
    VerifiedBatch batch;
    SequenceLedger::Verdict verdict;    // the ledger's: a gap, an id used again
    std::optional<VerifiedBatch> lost;  // the InputLost batch for the gap before it
};

// `bound_relay`, when not empty: the relay the batch's source authenticated as.
Admission admit_batch(std::span<const uint8_t> bytes, uint64_t max_batch_bytes,
                      SequenceLedger& ledger, std::string_view bound_relay = {});

}  // namespace arbiter::host
