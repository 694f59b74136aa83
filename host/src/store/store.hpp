// The store: where what Arbiter reports stays, for people to review (seed 001's
// SecurityEvent table and its panel). Signals at the reporting threshold become security
// events with their evidence; assessments are kept per player per match (the final one
// when the match ends); reviewers record verdicts. `[store] path` turns it on
// (docs/review.md).
//
// Writing never stalls the event thread for the database: records go to a bounded queue
// and a writer thread commits them in batched transactions every commit_interval_ms.
// When the queue is full (the database fails, or is slower than the host) a record past
// it is lost and counted (Counters::lost, the log says how many): the relays and the
// assessments never wait for the store. When the database fails, the records taken are
// held and retried with a fresh connection each second (a file made writable again, space
// freed, a server back), and the log says so. A record the database refuses for what it
// holds (a constraint, a value it cannot keep: its batch is then tried record by record)
// is logged and left out, so that it cannot hold every later record back; anything else
// (locked, full, read only, unreachable) holds them all. flush() (the host's close,
// SIGTERM) returns once everything given is committed, or after 30 s of a database that
// fails; a process killed outright loses at most the last commit interval.
//
// The sink also keeps the host's sequence ledger (where each match stands) in the store,
// in the same transactions as the records, so that a match sent again after a restart is
// refused as the duplicate it is, not counted twice.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/sequence_ledger.hpp"
#include "arbiter/host/sinks.hpp"

namespace arbiter::host {

namespace store {
class Database;
}

// The player a reviewer judges, as the store keys them: the account of their join, or,
// without one, the player within their match ("player:relay/match/player"). The two kinds
// never meet: an account that begins with "player:" or "account:" is keyed with
// "account:" before it, so no relay can give an account that names another relay's
// unnamed player (issue 39).
std::string review_subject(const PlayerKey& player, const std::string& account);
// The key of an account's player (review_subject with an account).
std::string account_subject(std::string_view account);
// What a reviewer typed, as a key: "account:NAME" is the account NAME, "player:..." an
// unnamed player; anything else is an account. Keys come back as they are.
std::string canonical_subject(std::string_view typed);

// What [store] and [correlation] of `config` ask for, opened, for the host to take
// (Host's second argument): the store's sink and the correlator, each only when enabled.
// Throws std::runtime_error naming the store when it cannot be opened.
HostAttachments attach_store(const ServerConfig& config);

class StoreSink : public LedgerKeepingSink {
  public:
    // Opens (creating) the store, brings its schema forward and checks that it can write
    // there; throws std::runtime_error naming the file and the reason. A store that cannot
    // be written (read only, no privilege, unreachable) starts with a warning instead when
    // settings.start_unwritable, and is reopened until it can be.
    StoreSink(const StoreSettings& settings, std::string server_id, double report_threshold,
              double review_threshold);
    ~StoreSink() override;
    StoreSink(const StoreSink&) = delete;
    StoreSink& operator=(const StoreSink&) = delete;

    void on_signal(const SignalRecord& signal) override;
    void on_action(const Assessment& assessment) override;
    void on_match_end(const std::string& relay_id, uint64_t match_id, bool complete,
                      const std::vector<Assessment>& players) override;
    // Waits until every record given so far is committed. A database that stays down is
    // tried for kDrainLimit; then the log says how many records are left (they stay queued
    // while the process runs), and later flushes do not wait for it again until it writes.
    void flush() override;
    static constexpr std::chrono::seconds kDrainLimit{30};

    // Where the ledger of this server (server_id) stood in the store at start: the
    // kEndedKept latest ended matches and the kOpenKept latest open ones. Taken once.
    std::vector<SequenceLedger::Progress> take_recorded_progress() override;
    static constexpr size_t kEndedKept = SequenceLedger::kEndedMatchesKept;
    static constexpr size_t kOpenKept = 65'536;
    // A match's place in the ledger, written with the records given before it.
    void on_progress(const SequenceLedger::Progress& progress) override;
    uint64_t records_lost() const override { return counters().lost; }

    struct Counters {
        uint64_t queued = 0;     // records waiting now
        uint64_t committed = 0;  // records in the database
        uint64_t commits = 0;    // transactions
        uint64_t failures = 0;   // transactions (or reopenings) that failed and were retried
        uint64_t lost = 0;       // records past max_queued, and those left when it stopped
        uint64_t refused = 0;    // records a working database refused alone (logged)
        uint64_t reopens = 0;    // connections opened again after a failure
    };
    Counters counters() const;

  private:
    struct Record;
    void push(Record record);
    void write_loop();
    // The connection, opened again when the last attempt failed; throws DatabaseError.
    store::Database& connection();
    // Logs the records lost since the last report: at the first, then at most every 10 s.
    void report_lost(bool stopping);
    void write(std::vector<Record>& records);
    // After a batch the database refused for a record in it: writes its records one by one,
    // leaves out (logging each) those it refuses, and keeps the rest at the first failure
    // that is not the record's (or when the host is stopping).
    void isolate_refused(std::vector<Record>& batch);

    StoreSettings settings_;
    std::string server_id_;
    int64_t writer_id_ = 0;     // random, per sink: the first half of every event's key
    int64_t events_keyed_ = 0;  // the second half (event thread only)
    double report_threshold_;
    double review_threshold_;
    std::unique_ptr<store::Database> db_;  // writer thread only, once it runs; null: reopen
    std::vector<SequenceLedger::Progress> recorded_progress_;
    uint64_t lost_reported_ = 0;  // writer thread only
    std::chrono::steady_clock::time_point lost_reported_at_;

    mutable std::mutex mutex_;
    std::condition_variable wake_writer_, done_;
    std::deque<Record> queue_;
    uint64_t in_flight_ = 0;  // taken by the writer, not yet committed
    bool stopping_ = false;
    bool drain_gave_up_ = false;  // a flush timed out, and nothing was written since
    int flushes_waiting_ = 0;
    Counters counters_;
    std::thread writer_;
};

// The store holds nothing on the player a reviewer named.
struct UnknownPlayer : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The review side: the queue, a player's dossier, verdicts and their export. Opens the
// store the config names (`arbiter review`, the review page); reads while servers write.
class ReviewStore {
  public:
    explicit ReviewStore(const StoreSettings& settings);
    ~ReviewStore();

    // A player in the queue: what was flagged, where, how bad and how recent.
    struct QueueEntry {
        std::string subject;
        int max_severity = 0;
        uint64_t events = 0;      // security events not yet reviewed
        uint64_t servers = 0;     // distinct servers that flagged the player
        uint64_t matches = 0;
        int64_t last_unix = 0;    // the latest of them
        std::string top_event_types;  // "plugin:code" of the strongest, comma-separated
        std::vector<std::string> correlation;  // tier 6 notes, in words
        double trust = 0;                      // trust_score()
    };
    // Players with unreviewed events, most urgent first: flagged on several servers, then
    // by severity, then by recency.
    std::vector<QueueEntry> queue(size_t limit = 50, int64_t window_s = 7 * 24 * 3600);

    struct Dossier {
        std::string subject;
        std::string json;  // everything, as JSON (docs/review.md has its fields)
    };
    // The latest `max_matches` assessments and `max_events` flags (matches_total and
    // events_total say how many there are), every server and verdict. `subject` as a
    // reviewer types it (canonical_subject); the dossier names the key.
    std::optional<Dossier> dossier(const std::string& subject, size_t max_matches = 200,
                                   size_t max_events = 500);

    // Records a verdict (confirmed, false_positive, inconclusive) on a player (as
    // canonical_subject reads it) by a reviewer, and marks their unreviewed events as reviewed with it. Throws
    // std::invalid_argument for an unknown verdict or an empty reviewer name,
    // UnknownPlayer when the store has no such player, and std::runtime_error when the
    // store fails.
    int64_t record_verdict(const std::string& subject, const std::string& verdict,
                           const std::string& reviewer, const std::string& note);

    // The verdicts as a truth file `arbiter evaluate` reads (docs/recorded-matches.md):
    // every match of a confirmed player as a cheater, of a false positive as honest;
    // inconclusive ones are left out. Returns the JSON text.
    std::string export_truth();

  private:
    std::unique_ptr<store::Database> db_;
};

// Seed 000's default trust weighting, on the factors the store knows; 0 to 12000.
struct TrustFactors {
    double account_age_days = 0;    // since the store first saw the account
    double rated_games_played = 0;  // matches the store holds for it
    double anti_cheat_points = 0;   // confirmed verdicts and unreviewed flags (trust.cpp)
    double report_rate = 0, commend_rate = 0, abandon_rate = 0, season_participation = 0;
};
double trust_score(const TrustFactors& factors);

}  // namespace arbiter::host
