// Each match's batch sequence, so that lost input is known rather than guessed. A relay
// numbers the batches of a match from 0 (EventBatch.sequence); the ledger sees every
// batch that passed ingest, from a file, a socket or the embedding API alike, and says
// whether it is the next one, comes after a gap (the gap is then a lost stretch, kept
// for the match's assessments), or must not be delivered: a sequence already seen (a
// duplicate, or one that arrived after later ones) or relay time going backwards. A match
// id may be used again once its match has ended (batch 0 with other contents).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/ingest.hpp"

namespace arbiter::host {

class SequenceLedger {
  public:
    struct Verdict {
        bool deliver = true;
        std::optional<LostStretch> gap;  // when it came after a gap
        std::string problem;             // when not delivered: why, fit to show
        // Batch 0 of a match that had ended, with other events than its first batch: a new
        // match under the same id, tracked afresh from here.
        bool reused_id = false;
    };
    // Judges a batch and, when it is to be delivered, records it.
    Verdict admit(const VerifiedBatch& batch);

    // Every lost stretch of the match, oldest first.
    const std::vector<LostStretch>& lost(const std::string& relay_id, uint64_t match_id) const;

    // A stretch of a file was damaged (`cause` says where). Each open match may have lost
    // batches in it: the match's next batch tells (a gap gets this cause; no gap, nothing
    // was lost), and a match that ends without its next batch or its MatchEnd gets a
    // stretch through its end.
    void damage(const std::string& cause);

    // Ended matches are remembered, so that a duplicate of their last batch is still
    // refused, up to this many; the oldest are forgotten first. `complete` when the match
    // ended with its own MatchEnd, not because the input ran out.
    static constexpr size_t kEndedMatchesKept = 4096;
    void match_ended(const std::string& relay_id, uint64_t match_id, bool complete = true);

    // Lost stretches kept per match; past this, the last one grows to cover the rest.
    static constexpr size_t kStretchesKept = 64;

    // Where a match stands: what the store keeps of the ledger, so that a batch delivered
    // before a restart is refused after it too (issue 39: a match sent again to a restarted
    // server was counted twice). Lost stretches are not kept.
    struct Progress {
        std::string relay_id;
        uint64_t match_id = 0;
        uint64_t next_sequence = 0;
        int64_t last_relay_us = 0;
        uint64_t first_batch_hash = 0;
        bool ended = false;
    };
    // Of a match the ledger has seen; nullopt otherwise.
    std::optional<Progress> progress(const std::string& relay_id, uint64_t match_id) const;
    // Takes up what an earlier process recorded, before any batch is admitted: ended
    // matches in the order they ended (the oldest first), then open ones.
    void restore(const std::vector<Progress>& matches);

  private:
    using MatchKey = std::pair<std::string, uint64_t>;
    struct Match {
        uint64_t next_sequence = 0;
        int64_t last_relay_us = 0;
        bool seen = false;
        bool ended = false;
        uint64_t first_batch_hash = 0;  // of batch 0, to tell a re-read from a reused id
                                        // (stable across processes: the store keeps it)
        std::string damage_since;       // damage seen since its last batch
        std::vector<LostStretch> lost;
    };
    static uint64_t batch_hash(const VerifiedBatch& batch);
    // Adds a lost stretch, or past kStretchesKept widens the last one to cover it.
    static void keep(Match& match, const LostStretch& stretch);
    std::map<MatchKey, Match> matches_;
    std::deque<MatchKey> ended_;  // in the order they ended
};

}  // namespace arbiter::host
