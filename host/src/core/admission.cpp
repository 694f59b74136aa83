#include "core/admission.hpp"

#include <fmt/format.h>

#include "arbiter/host/input_lost.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

Admission admit_batch(std::span<const uint8_t> bytes, uint64_t max_batch_bytes,
                      SequenceLedger& ledger, std::string_view bound_relay) {
    Admission admission;
    IngestResult ingested = ingest_batch(bytes, max_batch_bytes);
    if (!ingested.ok) {
        admission.problem = std::move(ingested.problem);
        return admission;
    }
    if (!bound_relay.empty() && ingested.batch.relay_id != bound_relay) {
        admission.problem = fmt::format(
            "a batch of relay '{}' over the connection of relay '{}': a relay sends its own "
            "matches alone",
            escape_for_message(ingested.batch.relay_id, 64), escape_for_message(bound_relay, 64));
        return admission;
    }
    admission.verdict = ledger.admit(ingested.batch);
    if (!admission.verdict.deliver) {
        admission.problem = admission.verdict.problem;
        return admission;
    }
    // Plugins that can be told (schema 1.1) reset what would measure across the gap.
    if (admission.verdict.gap)
        admission.lost = input_lost_batch(ingested.batch, *admission.verdict.gap);
    if (ingested.batch.ends_match)
        ledger.match_ended(ingested.batch.relay_id, ingested.batch.match_id, true);
    admission.batch = std::move(ingested.batch);
    return admission;
}

}  // namespace arbiter::host
