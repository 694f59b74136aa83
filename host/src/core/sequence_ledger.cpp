#include "arbiter/host/sequence_ledger.hpp"

#include <sodium.h>

#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

std::string LostStretch::describe() const {
    const std::string because = cause.empty() ? "" : fmt::format("; {}", cause);
    if (through_end)
        return fmt::format("batch {} to the end of the match (after relay time {:.3f} s){}",
                           from_sequence, static_cast<double>(before_relay_us) / 1e6, because);
    const std::string batches_text =
        from_sequence == to_sequence ? fmt::format("batch {}", from_sequence)
                                     : fmt::format("batches {}..{}", from_sequence, to_sequence);
    if (!after_relay_us)
        return fmt::format("{} (relay time up to {:.3f} s){}", batches_text,
                           static_cast<double>(before_relay_us) / 1e6, because);
    return fmt::format("{} (relay time {:.3f} s to {:.3f} s){}", batches_text,
                       static_cast<double>(*after_relay_us) / 1e6,
                       static_cast<double>(before_relay_us) / 1e6, because);
}

uint64_t SequenceLedger::batch_hash(const VerifiedBatch& batch) {
    // BLAKE2b (its shortest output, 16 bytes), not std::hash: the store keeps it for the
    // next process, which may be another build.
    static const bool ready = sodium_init() >= 0;
    (void)ready;
    unsigned char digest[crypto_generichash_BYTES_MIN];
    crypto_generichash(digest, sizeof digest, batch.bytes.data(), batch.bytes.size(), nullptr, 0);
    uint64_t hash = 0;
    std::memcpy(&hash, digest, sizeof hash);
    return hash;
}

SequenceLedger::Verdict SequenceLedger::admit(const VerifiedBatch& batch) {
    Verdict verdict;
    // Only a refusal names the match: every batch passes here, and most pass silently.
    auto label = [&] {
        return fmt::format("{}/{}", escape_for_message(batch.relay_id, 80), batch.match_id);
    };
    // Before the match is looked up: a refused batch must not leave an entry behind.
    if (batch.sequence == UINT64_MAX) {
        // The next one would wrap to 0, and every batch after it would look new.
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch sequence {} is the largest there is; a relay numbers the batches "
            "of a match from 0",
            label(), batch.sequence);
        return verdict;
    }
    Match& match = matches_[{batch.relay_id, batch.match_id}];
    if (match.ended && batch.sequence == 0) {
        // Batch 0 again after the match's end: the same bytes are the same match read twice
        // (a file named twice), other bytes a new match under a reused id (simulated files,
        // a relay whose numbering restarted), which starts afresh.
        if (batch_hash(batch) == match.first_batch_hash) {
            verdict.deliver = false;
            verdict.problem = fmt::format(
                "match {}: batch 0 is a duplicate of the first batch of this match, which has "
                "already ended; a duplicate is not delivered again",
                label());
            return verdict;
        }
        match = Match{};
        verdict.reused_id = true;
    }
    if (match.seen && batch.sequence < match.next_sequence) {
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch {} was already delivered or came after batch {}; a duplicate or "
            "late batch is not delivered again",
            label(), batch.sequence, match.next_sequence - 1);
        return verdict;
    }
    if (match.seen && batch.event_count > 0 && batch.first_relay_time_us < match.last_relay_us) {
        verdict.deliver = false;
        verdict.problem = fmt::format(
            "match {}: batch {} begins at relay time {} us, before the end of the batch before "
            "it ({} us); relay time may not go backwards within a match",
            label(), batch.sequence, batch.first_relay_time_us, match.last_relay_us);
        return verdict;
    }
    if (batch.sequence > match.next_sequence || (!match.seen && batch.sequence > 0)) {
        LostStretch gap;
        gap.from_sequence = match.seen ? match.next_sequence : 0;
        gap.to_sequence = batch.sequence - 1;
        if (match.seen) gap.after_relay_us = match.last_relay_us;
        gap.before_relay_us =
            batch.event_count > 0 ? batch.first_relay_time_us : match.last_relay_us;
        gap.cause = match.damage_since;
        keep(match, gap);
        verdict.gap = gap;
    }
    match.damage_since.clear();  // this match's next batch came: the damage lost no more of it
    if (batch.sequence == 0) match.first_batch_hash = batch_hash(batch);
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

void SequenceLedger::keep(Match& match, const LostStretch& stretch) {
    if (match.lost.size() < kStretchesKept) {
        match.lost.push_back(stretch);
        return;
    }
    LostStretch& last = match.lost.back();
    last.to_sequence = stretch.to_sequence;
    last.before_relay_us = stretch.before_relay_us;
    last.through_end = stretch.through_end;
}

void SequenceLedger::damage(const std::string& cause) {
    for (auto& [key, match] : matches_)
        if (match.seen && !match.ended && match.damage_since.empty()) match.damage_since = cause;
}

void SequenceLedger::match_ended(const std::string& relay_id, uint64_t match_id, bool complete) {
    auto found = matches_.find({relay_id, match_id});
    if (found == matches_.end() || found->second.ended) return;
    Match& match = found->second;
    match.ended = true;
    if (!complete && !match.damage_since.empty()) {
        // Damage came after the match's last batch and its end never arrived: the rest of
        // the match may lie in the damaged bytes.
        LostStretch tail;
        tail.from_sequence = match.next_sequence;
        tail.to_sequence = match.next_sequence;
        tail.after_relay_us = match.last_relay_us;
        tail.before_relay_us = match.last_relay_us;
        tail.through_end = true;
        tail.cause = std::move(match.damage_since);
        keep(match, tail);
    }
    match.damage_since.clear();
    ended_.emplace_back(relay_id, match_id);
    while (ended_.size() > kEndedMatchesKept) {
        // An id used again since it ended is a match in progress: it stays.
        if (auto oldest = matches_.find(ended_.front());
            oldest != matches_.end() && oldest->second.ended)
            matches_.erase(oldest);
        ended_.pop_front();
    }
}

std::optional<SequenceLedger::Progress> SequenceLedger::progress(const std::string& relay_id,
                                                                  uint64_t match_id) const {
    const auto found = matches_.find({relay_id, match_id});
    if (found == matches_.end() || !found->second.seen) return std::nullopt;
    const Match& match = found->second;
    return Progress{relay_id,          match_id,     match.next_sequence, match.last_relay_us,
                    match.first_batch_hash, match.ended};
}

void SequenceLedger::restore(const std::vector<Progress>& matches) {
    for (const Progress& recorded : matches) {
        Match& match = matches_[{recorded.relay_id, recorded.match_id}];
        match = Match{};
        match.seen = true;
        match.next_sequence = recorded.next_sequence;
        match.last_relay_us = recorded.last_relay_us;
        match.first_batch_hash = recorded.first_batch_hash;
        if (recorded.ended) {
            // Through match_ended's bound, as if it had ended in this process.
            match.ended = false;
            match_ended(recorded.relay_id, recorded.match_id, true);
        }
    }
}

}  // namespace arbiter::host
