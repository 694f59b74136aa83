// The writing half of the store: a bounded queue filled on the event thread, a writer
// thread that commits it in batches (store.hpp says why).
#include <sodium.h>

#include <chrono>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "store/store.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"

namespace arbiter::host {

using store::unix_now;

using store::Database;
using store::DatabaseError;

namespace {

bool worth_logging(uint64_t n) { return n <= 5 || (n & (n - 1)) == 0; }

}  // namespace

struct StoreSink::Record {
    struct Event {
        SignalRecord signal;
        std::string account;
        int severity = 1;
        int64_t recorded_unix = 0;
        int64_t seq = 0;  // with the sink's writer_id_, its key: unique in the store
    };
    struct AssessmentRow {
        Assessment assessment;
        bool final = false;
        int64_t recorded_unix = 0;
    };
    struct MatchRow {
        std::string relay_id;
        uint64_t match_id = 0;
        bool ended = false;
        bool complete = false;
        int64_t recorded_unix = 0;
    };
    struct ProgressRow {
        SequenceLedger::Progress progress;
        int64_t recorded_unix = 0;
    };
    std::variant<Event, AssessmentRow, MatchRow, ProgressRow> row;
};

namespace {

// Whether the writer may write here: one row into each table it writes, taken back. A
// read-only file or transaction, a revoked privilege or a server that is down fail here,
// at start, rather than at the first commit. (A full disk may only show at a commit.)
void check_writable(Database& db) {
    db.begin();
    try {
        db.execute(
            "INSERT INTO matches (server_id, relay_id, match_id, first_seen_unix) VALUES "
            "('', '', -1, 0) ON CONFLICT (server_id, relay_id, match_id) DO NOTHING");
        db.execute(
            "INSERT INTO assessments (server_id, relay_id, match_id, player, account, subject, "
            "action, combined_score, final, assessment_json, updated_unix) VALUES ('', '', -1, "
            "0, '', '', '', 0, 0, '{}', 0) ON CONFLICT (server_id, relay_id, match_id, player) "
            "DO NOTHING");
        db.execute(
            "INSERT INTO security_events (server_id, relay_id, match_id, player, account, "
            "subject, plugin, event_type, model_class, severity, score, confidence, "
            "weighted_score, tripwire, evidence, relay_time_us, recorded_unix) VALUES ('', '', "
            "-1, 0, '', '', '', '', '', 0, 0, 0, 0, 0, '{}', 0, 0)");
        db.execute(
            "INSERT INTO sequence_ledger (server_id, relay_id, match_id, next_sequence, "
            "last_relay_us, first_batch_hash, ended, updated_unix) VALUES ('', '', -1, 0, 0, 0, "
            "0, 0) ON CONFLICT (server_id, relay_id, match_id) DO NOTHING");
    } catch (...) {
        try {
            db.rollback();
        } catch (const DatabaseError&) {
        }
        throw;
    }
    db.rollback();
}

std::vector<SequenceLedger::Progress> read_progress(Database& db, const std::string& server_id) {
    std::vector<SequenceLedger::Progress> matches;
    // Ended ones first, the oldest of them first: the order the ledger forgets them in.
    for (const auto& [ended, kept] :
         {std::pair{1, StoreSink::kEndedKept}, std::pair{0, StoreSink::kOpenKept}}) {
        auto rows = db.prepare(fmt::format(
            "SELECT relay_id, match_id, next_sequence, last_relay_us, first_batch_hash FROM "
            "(SELECT * FROM sequence_ledger WHERE server_id = ? AND ended = ? ORDER BY "
            "updated_unix DESC, relay_id DESC, match_id DESC LIMIT {}) AS latest ORDER BY "
            "updated_unix, relay_id, match_id",
            kept));
        rows->bind(1, server_id).bind(2, static_cast<int64_t>(ended));
        while (rows->step())
            matches.push_back({rows->text(0), static_cast<uint64_t>(rows->integer(1)),
                               static_cast<uint64_t>(rows->integer(2)), rows->integer(3),
                               static_cast<uint64_t>(rows->integer(4)), ended == 1});
    }
    return matches;
}

}  // namespace

StoreSink::StoreSink(const StoreSettings& settings, std::string server_id, double report_threshold,
                     double review_threshold)
    : settings_(settings),
      server_id_(std::move(server_id)),
      report_threshold_(report_threshold),
      review_threshold_(review_threshold) {
    // 64 random bits per sink: the keys of two hosts, or of one host before and after a
    // restart, meet with a chance of one in 2^64 per pair of writers.
    if (sodium_init() < 0) throw std::runtime_error("libsodium cannot start");
    randombytes_buf(&writer_id_, sizeof writer_id_);
    std::string unwritable;
    bool ledger_read = false;
    try {
        db_ = store::open_and_migrate(settings);
        recorded_progress_ = read_progress(*db_, server_id_);
        ledger_read = true;
        check_writable(*db_);
    } catch (const DatabaseError& error) {
        // Refused for what it is (a newer schema, not a database): never started on.
        if (!error.transient() || !settings.start_unwritable)
            throw std::runtime_error(fmt::format(
                "{}: the store: {}{}", settings.where(), error.what(),
                error.transient() ? "; make it writable, or set [store] on_unwritable = "
                                    "\"start\" to start without it"
                                  : ""));
        unwritable = error.what();
        db_.reset();
    }
    if (!unwritable.empty())
        spdlog::warn("store {}: cannot be written ({}); starting without it ([store] "
                     "on_unwritable = \"start\"): it is opened again each second while "
                     "records wait, and past max_queued ({}) they are lost and counted{}",
                     settings_.where(), unwritable, settings_.max_queued,
                     ledger_read ? ""
                                 : "; batches delivered before this start are not known as "
                                   "duplicates");
    writer_ = std::thread([this] { write_loop(); });
}

StoreSink::~StoreSink() {
    flush();
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_writer_.notify_all();
    writer_.join();
}

void StoreSink::push(Record record) {
    std::lock_guard lock(mutex_);
    // Never a wait: the event thread serves every relay and the assessments, which must not
    // stop for a store that cannot keep up. The writer logs the count.
    if (queue_.size() + in_flight_ >= settings_.max_queued) {
        ++counters_.lost;
        return;
    }
    queue_.push_back(std::move(record));
    counters_.queued = queue_.size();
    wake_writer_.notify_one();
}

std::vector<SequenceLedger::Progress> StoreSink::take_recorded_progress() {
    return std::exchange(recorded_progress_, {});
}

void StoreSink::on_progress(const SequenceLedger::Progress& progress) {
    push({Record::ProgressRow{progress, unix_now()}});
}

void StoreSink::on_signal(const SignalRecord& signal) {
    if (!is_security_event(signal, report_threshold_)) return;
    Record::Event event{signal, signal.account, severity_of(signal, review_threshold_), unix_now(),
                        ++events_keyed_};
    push({std::move(event)});
}

void StoreSink::on_action(const Assessment& assessment) {
    push({Record::AssessmentRow{assessment, false, unix_now()}});
}

void StoreSink::on_match_end(const std::string& relay_id, uint64_t match_id, bool complete,
                             const std::vector<Assessment>& players) {
    const int64_t now = unix_now();
    push({Record::MatchRow{relay_id, match_id, true, complete, now}});
    for (const Assessment& assessment : players) push({Record::AssessmentRow{assessment, true, now}});
}

void StoreSink::flush() {
    std::unique_lock lock(mutex_);
    ++flushes_waiting_;
    wake_writer_.notify_one();
    // A database that is down is retried for a while, not for ever: a server that is
    // stopping must stop, and says what it could not write. One that already used up a
    // whole drain without writing since is not waited for again (the host's close and the
    // sink's destructor would otherwise wait twice).
    const auto limit = drain_gave_up_ ? std::chrono::seconds(0) : kDrainLimit;
    const bool done = done_.wait_for(lock, limit, [&] {
        return (queue_.empty() && in_flight_ == 0) || stopping_;
    });
    --flushes_waiting_;
    if (!done && !drain_gave_up_)
        spdlog::error("store {}: {} record(s) still not written after {} s of trying ({} "
                      "failure(s)); they stay queued while the process runs",
                      settings_.where(), queue_.size() + in_flight_, kDrainLimit.count(),
                      counters_.failures);
    if (!done) drain_gave_up_ = true;
}

StoreSink::Counters StoreSink::counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
}

void StoreSink::write_loop() {
    const auto interval = std::chrono::milliseconds(settings_.commit_interval_ms);
    std::vector<Record> batch;
    uint64_t failing = 0;  // attempts failed in a row
    for (;;) {
        report_lost(false);
        {
            std::unique_lock lock(mutex_);
            // Commits come every interval, many records to one transaction; at once when
            // the queue is full or someone waits for a flush.
            wake_writer_.wait_for(lock, interval, [&] {
                return stopping_ || flushes_waiting_ > 0 || queue_.size() >= settings_.max_queued;
            });
            if (queue_.empty() && batch.empty()) {
                done_.notify_all();
                if (stopping_) return;
                continue;
            }
            while (!queue_.empty()) {
                batch.push_back(std::move(queue_.front()));
                queue_.pop_front();
            }
            in_flight_ = batch.size();
            counters_.queued = 0;
        }
        try {
            write(batch);
            std::lock_guard lock(mutex_);
            counters_.committed += batch.size();
            ++counters_.commits;
            in_flight_ = 0;
            drain_gave_up_ = false;
            if (failing > 0)
                spdlog::info("store {}: written again after {} failed attempt(s); {} record(s) "
                             "held meanwhile are in",
                             settings_.where(), failing, batch.size());
            failing = 0;
            batch.clear();
        } catch (const std::exception& error) {
            // Held, not dropped: the same records go again after a pause.
            const auto* refused = dynamic_cast<const store::DatabaseError*>(&error);
            const bool record_refused = refused && !refused->transient();
            // Anything but the record's own fault: the next attempt opens the store again,
            // since a connection can stay as it was when the cause has gone (SQLite keeps a
            // file it opened read only so after a chmod).
            if (!record_refused) db_.reset();
            std::unique_lock lock(mutex_);
            ++counters_.failures;
            ++failing;
            if (worth_logging(counters_.failures))
                spdlog::error("store {}: cannot write {} record(s): {}; they are held and tried "
                              "again in 1 s ({} failure(s) so far)",
                              settings_.where(), batch.size(), error.what(), counters_.failures);
            lock.unlock();
            // Refused for what it holds: find the record, write the others.
            if (record_refused) isolate_refused(batch);
        }
        {
            std::lock_guard lock(mutex_);
            if (queue_.empty() && in_flight_ == 0) done_.notify_all();
        }
        if (!batch.empty()) {
            std::unique_lock lock(mutex_);
            wake_writer_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
            if (stopping_) {
                const uint64_t left = batch.size() + queue_.size();
                counters_.lost += left;
                spdlog::error("store {}: stopping with {} record(s) it could not write; they "
                              "are lost",
                              settings_.where(), left);
                done_.notify_all();
                lock.unlock();
                report_lost(true);
                return;
            }
        }
    }
}

store::Database& StoreSink::connection() {
    if (!db_) {
        db_ = store::open_and_migrate(settings_);
        std::lock_guard lock(mutex_);
        ++counters_.reopens;
    }
    return *db_;
}

void StoreSink::report_lost(bool stopping) {
    uint64_t lost = 0;
    {
        std::lock_guard lock(mutex_);
        lost = counters_.lost;
    }
    if (lost == lost_reported_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!stopping && lost_reported_ > 0 && now - lost_reported_at_ < std::chrono::seconds(10))
        return;
    spdlog::error("store {}: {} record(s) lost ({} since the last report): the store could not "
                  "take them (max_queued {} were waiting); the relays and the assessments went "
                  "on without them",
                  settings_.where(), lost, lost - lost_reported_, settings_.max_queued);
    lost_reported_ = lost;
    lost_reported_at_ = now;
}

void StoreSink::isolate_refused(std::vector<Record>& batch) {
    // Only when the database answers: one that is down refuses everything, and then the
    // records wait for it.
    try {
        auto alive = connection().prepare("SELECT 1");
        alive->step();
    } catch (const std::exception&) {
        db_.reset();
        return;
    }
    // Each record then says for itself whether the database refuses it (a constraint, a
    // value it cannot hold) or cannot take anything now (locked, full, gone).
    std::vector<Record> held;
    uint64_t written = 0;
    bool transient = false;
    for (Record& record : batch) {
        {
            std::lock_guard lock(mutex_);
            // A host that is stopping keeps what is left (and says so), as a failed batch.
            if (stopping_) transient = true;
        }
        if (transient) {
            held.push_back(std::move(record));
            continue;
        }
        std::vector<Record> one;
        one.push_back(std::move(record));
        try {
            write(one);
            ++written;
        } catch (const store::DatabaseError& error) {
            if (error.transient()) {
                // Not this record's fault: it and the rest wait for the database.
                db_.reset();
                transient = true;
                held.push_back(std::move(one.front()));
                continue;
            }
            // The database answers and refuses this record alone: it would block every
            // record after it for ever. Said, counted, and left out.
            std::lock_guard lock(mutex_);
            ++counters_.refused;
            spdlog::error("store {}: the database refuses a record ({}); it is left out ({} so "
                          "far)",
                          settings_.where(), error.what(), counters_.refused);
        }
    }
    std::lock_guard lock(mutex_);
    counters_.committed += written;
    batch = std::move(held);
    in_flight_ = batch.size();
}

void StoreSink::write(std::vector<Record>& records) {
    Database& db = connection();
    auto event = db.prepare(store::kInsertSecurityEvent);
    auto match = db.prepare(
        "INSERT INTO matches (server_id, relay_id, match_id, first_seen_unix) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (server_id, relay_id, match_id) DO NOTHING");
    auto ended = db.prepare(
        "UPDATE matches SET ended_unix = ?, complete = ? WHERE server_id = ? AND relay_id = ? AND "
        "match_id = ?");
    auto assessment = db.prepare(
        "INSERT INTO assessments (server_id, relay_id, match_id, player, account, subject, action, "
        "combined_score, final, assessment_json, updated_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?) ON CONFLICT (server_id, relay_id, match_id, player) DO UPDATE SET "
        "account = excluded.account, subject = excluded.subject, action = excluded.action, "
        "combined_score = excluded.combined_score, final = excluded.final, "
        "assessment_json = excluded.assessment_json, updated_unix = excluded.updated_unix");
    auto ledger = db.prepare(
        "INSERT INTO sequence_ledger (server_id, relay_id, match_id, next_sequence, "
        "last_relay_us, first_batch_hash, ended, updated_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (server_id, relay_id, match_id) DO UPDATE SET next_sequence = "
        "excluded.next_sequence, last_relay_us = excluded.last_relay_us, first_batch_hash = "
        "excluded.first_batch_hash, ended = excluded.ended, updated_unix = excluded.updated_unix");
    // Where each match stands after the last of these records: one row per match per
    // transaction, not one per batch.
    std::map<std::pair<std::string, uint64_t>, const Record::ProgressRow*> progressed;
    // A match is recorded once per transaction, not once per record of it.
    std::set<std::pair<std::string, uint64_t>> recorded;
    auto seen = [&](const std::string& relay, uint64_t match_id, int64_t now) {
        if (!recorded.emplace(relay, match_id).second) return;
        match->reset();
        match->bind(1, server_id_).bind(2, relay).bind(3, static_cast<int64_t>(match_id)).bind(4, now);
        match->step();
    };
    in_transaction(db, [&] {
        for (Record& record : records) {
            if (auto* e = std::get_if<Record::Event>(&record.row)) {
                const SignalRecord& s = e->signal;
                seen(s.player.relay_id, s.player.match_id, e->recorded_unix);
                event->reset();
                event->bind(1, server_id_)
                    .bind(2, s.player.relay_id)
                    .bind(3, static_cast<int64_t>(s.player.match_id))
                    .bind(4, static_cast<int64_t>(s.player.player))
                    .bind(5, e->account)
                    .bind(6, review_subject(s.player, e->account))
                    .bind(7, s.plugin)
                    .bind(8, s.code)
                    .bind(9, std::string_view(to_string(s.model_class)))
                    .bind(10, static_cast<int64_t>(e->severity))
                    .bind(11, s.score)
                    .bind(12, s.confidence)
                    .bind(13, s.weighted())
                    .bind(14, static_cast<int64_t>(s.tripwire ? 1 : 0))
                    .bind(15, s.evidence_json.empty() ? std::string_view("{}") : s.evidence_json)
                    .bind(16, s.reported_at_us);
                if (s.player_first_seen_us) event->bind(17, *s.player_first_seen_us);
                else event->bind_null(17);
                event->bind(18, e->recorded_unix).bind(19, writer_id_).bind(20, e->seq);
                event->step();
            } else if (auto* a = std::get_if<Record::AssessmentRow>(&record.row)) {
                const Assessment& x = a->assessment;
                seen(x.player.relay_id, x.player.match_id, a->recorded_unix);
                assessment->reset();
                assessment->bind(1, server_id_)
                    .bind(2, x.player.relay_id)
                    .bind(3, static_cast<int64_t>(x.player.match_id))
                    .bind(4, static_cast<int64_t>(x.player.player))
                    .bind(5, x.account_id)
                    .bind(6, review_subject(x.player, x.account_id))
                    .bind(7, std::string_view(to_string(x.action)))
                    .bind(8, x.combined_score)
                    .bind(9, static_cast<int64_t>(a->final ? 1 : 0))
                    .bind(10, assessment_json(x))
                    .bind(11, a->recorded_unix);
                assessment->step();
            } else if (auto* m = std::get_if<Record::MatchRow>(&record.row)) {
                seen(m->relay_id, m->match_id, m->recorded_unix);
                ended->reset();
                ended->bind(1, m->recorded_unix)
                    .bind(2, static_cast<int64_t>(m->complete ? 1 : 0))
                    .bind(3, server_id_)
                    .bind(4, m->relay_id)
                    .bind(5, static_cast<int64_t>(m->match_id));
                ended->step();
            } else if (auto* p = std::get_if<Record::ProgressRow>(&record.row)) {
                progressed[{p->progress.relay_id, p->progress.match_id}] = p;
            }
        }
        for (const auto& [key, p] : progressed) {
            const SequenceLedger::Progress& at = p->progress;
            ledger->reset();
            ledger->bind(1, server_id_)
                .bind(2, at.relay_id)
                .bind(3, static_cast<int64_t>(at.match_id))
                .bind(4, static_cast<int64_t>(at.next_sequence))
                .bind(5, at.last_relay_us)
                .bind(6, static_cast<int64_t>(at.first_batch_hash))
                .bind(7, static_cast<int64_t>(at.ended ? 1 : 0))
                .bind(8, p->recorded_unix);
            ledger->step();
        }
    });
}

}  // namespace arbiter::host
