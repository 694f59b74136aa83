#include "arbiter/host/sequence_ledger.hpp"

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

std::string LostStretch::describe() const {
    const std::string batches_text =
        from_sequence == to_sequence ? fmt::format("batch {}", from_sequence)
                                     : fmt::format("batches {}..{}", from_sequence, to_sequence);
    if (!after_relay_us)
        return fmt::format("{} (relay time up to {:.3f} s)", batches_text,
                           static_cast<double>(before_relay_us) / 1e6);
    return fmt::format("{} (relay time {:.3f} s to {:.3f} s)", batches_text,
                       static_cast<double>(*after_relay_us) / 1e6,
                       static_cast<double>(before_relay_us) / 1e6);
}

SequenceLedger::Verdict SequenceLedger::admit(const VerifiedBatch& batch) {
    Verdict verdict;
    Match& match = matches_[{batch.relay_id, batch.match_id}];
    const std::string label =
        fmt::format("{}/{}", escape_for_message(batch.relay_id, 80), batch.match_id);
    if (batch.sequence == UINT64_MAX) {
        // The next one would wrap to 0, and every batch after it would look new.
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch sequence {} is the largest there is; a relay numbers the batches "
            "of a match from 0",
            label, batch.sequence);
        return verdict;
    }
    if (match.seen && batch.sequence < match.next_sequence) {
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch {} was already delivered or came after batch {}; a duplicate or "
            "late batch is not delivered again",
            label, batch.sequence, match.next_sequence - 1);
        return verdict;
    }
    if (match.seen && batch.event_count > 0 && batch.first_relay_time_us < match.last_relay_us) {
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch {} begins at relay time {} us, before the end of the batch before "
            "it ({} us); relay time may not go backwards within a match",
            label, batch.sequence, batch.first_relay_time_us, match.last_relay_us);
        return verdict;
    }
    if (batch.sequence > match.next_sequence || (!match.seen && batch.sequence > 0)) {
        LostStretch gap;
        gap.from_sequence = match.seen ? match.next_sequence : 0;
        gap.to_sequence = batch.sequence - 1;
        if (match.seen) gap.after_relay_us = match.last_relay_us;
        gap.before_relay_us =
            batch.event_count > 0 ? batch.first_relay_time_us : match.last_relay_us;
        if (match.lost.size() < kStretchesKept) {
            match.lost.push_back(gap);
        } else {
            match.lost.back().to_sequence = gap.to_sequence;
            match.lost.back().before_relay_us = gap.before_relay_us;
        }
        verdict.gap = gap;
    }
    match.seen = true;
    match.next_sequence = batch.sequence + 1;
    if (batch.event_count > 0) match.last_relay_us = batch.last_relay_time_us;
    return verdict;
}

const std::vector<LostStretch>& SequenceLedger::lost(const std::string& relay_id,
                                                     uint64_t match_id) const {
    static const std::vector<LostStretch> none;
    const auto it = matches_.find({relay_id, match_id});
    return it == matches_.end() ? none : it->second.lost;
}

void SequenceLedger::match_ended(const std::string& relay_id, uint64_t match_id) {
    if (!matches_.count({relay_id, match_id})) return;
    ended_.emplace_back(relay_id, match_id);
    while (ended_.size() > kEndedMatchesKept) {
        matches_.erase(ended_.front());
        ended_.pop_front();
    }
}

}  // namespace arbiter::host
