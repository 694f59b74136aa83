#include "store/schema.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace arbiter::host::store {

namespace {

// `{id}` is the dialect's auto-numbered key.
const std::vector<std::string> kMigrations = {
    // 1: seed 001's SecurityEvent, the assessments and matches behind it, and verdicts.
    R"sql(
CREATE TABLE matches (
  server_id TEXT NOT NULL,
  relay_id TEXT NOT NULL,
  match_id BIGINT NOT NULL,
  first_seen_unix BIGINT NOT NULL,
  ended_unix BIGINT,
  complete INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (server_id, relay_id, match_id)
);
CREATE TABLE security_events (
  event_id {id},
  server_id TEXT NOT NULL,
  relay_id TEXT NOT NULL,
  match_id BIGINT NOT NULL,
  player BIGINT NOT NULL,
  account TEXT NOT NULL,
  subject TEXT NOT NULL,
  plugin TEXT NOT NULL,
  event_type TEXT NOT NULL,
  model_class TEXT NOT NULL,
  severity INTEGER NOT NULL,
  score DOUBLE PRECISION NOT NULL,
  confidence DOUBLE PRECISION NOT NULL,
  weighted_score DOUBLE PRECISION NOT NULL,
  tripwire INTEGER NOT NULL,
  evidence TEXT NOT NULL,
  relay_time_us BIGINT NOT NULL,
  joined_relay_time_us BIGINT,
  recorded_unix BIGINT NOT NULL,
  reviewed INTEGER NOT NULL DEFAULT 0,
  reviewed_by TEXT NOT NULL DEFAULT '',
  verdict TEXT NOT NULL DEFAULT ''
);
CREATE INDEX security_events_subject ON security_events (subject, recorded_unix);
CREATE INDEX security_events_match ON security_events (server_id, relay_id, match_id, player);
CREATE TABLE assessments (
  server_id TEXT NOT NULL,
  relay_id TEXT NOT NULL,
  match_id BIGINT NOT NULL,
  player BIGINT NOT NULL,
  account TEXT NOT NULL,
  subject TEXT NOT NULL,
  action TEXT NOT NULL,
  combined_score DOUBLE PRECISION NOT NULL,
  final INTEGER NOT NULL,
  assessment_json TEXT NOT NULL,
  updated_unix BIGINT NOT NULL,
  PRIMARY KEY (server_id, relay_id, match_id, player)
);
CREATE INDEX assessments_subject ON assessments (subject);
CREATE TABLE verdicts (
  verdict_id {id},
  subject TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('confirmed', 'false_positive', 'inconclusive')),
  reviewer TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  recorded_unix BIGINT NOT NULL
);
CREATE INDEX verdicts_subject ON verdicts (subject, recorded_unix);
)sql",
    // 2: each security event carries the key its writer gave it (a random 64-bit writer id
    // and the event's number: two integers index faster than a text key), so that a batch retried
    // after a commit whose answer was lost (the connection died after PostgreSQL committed)
    // adds none of its events twice. Rows written before have none (NULLs do not collide).
    R"sql(
ALTER TABLE security_events ADD COLUMN writer_id BIGINT;
ALTER TABLE security_events ADD COLUMN writer_seq BIGINT;
CREATE UNIQUE INDEX security_events_writer ON security_events (writer_id, writer_seq);
)sql",
    // 3: subjects carry their kind (review_subject): an unnamed player is
    // "player:relay/match/player", an account that begins with "player:" or "account:" is
    // "account:" and the account. Before, account "eu-1/7/12" and relay eu-1's unnamed
    // player 12 of match 7 were one subject, and one verdict landed on both. Events and
    // assessments are rekeyed from their own account column. A verdict knew only the
    // subject: one given to a name that was an unnamed player's is copied to that player
    // (such a verdict was shown and applied to both), and it stays on the account only
    // where the store holds that account.
    R"sql(
UPDATE verdicts SET subject = 'account:' || subject;
INSERT INTO verdicts (subject, verdict, reviewer, note, recorded_unix)
  SELECT 'player:' || SUBSTR(subject, 9), verdict, reviewer, note, recorded_unix FROM verdicts
  WHERE SUBSTR(subject, 9) IN ({unnamed_before})
  ORDER BY verdict_id;
DELETE FROM verdicts WHERE SUBSTR(subject, 1, 8) = 'account:'
  AND SUBSTR(subject, 9) IN ({unnamed_before})
  AND SUBSTR(subject, 9) NOT IN (SELECT account FROM security_events UNION
                                 SELECT account FROM assessments);
UPDATE verdicts SET subject = SUBSTR(subject, 9) WHERE SUBSTR(subject, 1, 8) = 'account:'
  AND SUBSTR(subject, 9, 7) <> 'player:' AND SUBSTR(subject, 9, 8) <> 'account:';
UPDATE security_events SET subject = {subject_of_row};
UPDATE assessments SET subject = {subject_of_row};
)sql",
    // 4: each server's sequence ledger (sequence_ledger.hpp), written in the transactions
    // of the records, so that a server restarted refuses a match sent again instead of
    // counting it twice: one row per match, where it stood at the last commit.
    R"sql(
CREATE TABLE sequence_ledger (
  server_id TEXT NOT NULL,
  relay_id TEXT NOT NULL,
  match_id BIGINT NOT NULL,
  next_sequence BIGINT NOT NULL,
  last_relay_us BIGINT NOT NULL,
  first_batch_hash BIGINT NOT NULL,
  ended INTEGER NOT NULL,
  updated_unix BIGINT NOT NULL,
  PRIMARY KEY (server_id, relay_id, match_id)
);
CREATE INDEX sequence_ledger_latest ON sequence_ledger (server_id, ended, updated_unix);
)sql",
};

// Migration 3's pieces. The subject of a row, as review_subject makes it:
const std::string kSubjectOfRow =
    "CASE WHEN account = '' THEN 'player:' || relay_id || '/' || CAST(match_id AS TEXT) || '/' "
    "|| CAST(player AS TEXT) WHEN SUBSTR(account, 1, 7) = 'player:' OR SUBSTR(account, 1, 8) = "
    "'account:' THEN 'account:' || account ELSE account END";
// The subjects unnamed players had before it:
const std::string kUnnamedBefore =
    "SELECT relay_id || '/' || CAST(match_id AS TEXT) || '/' || CAST(player AS TEXT) FROM "
    "security_events WHERE account = '' UNION SELECT relay_id || '/' || CAST(match_id AS TEXT) "
    "|| '/' || CAST(player AS TEXT) FROM assessments WHERE account = ''";

void replace_all(std::string& sql, const std::string& name, const std::string& text) {
    for (auto at = sql.find(name); at != std::string::npos; at = sql.find(name, at + text.size()))
        sql.replace(at, name.size(), text);
}

std::string dialect(const Database& db, std::string sql) {
    replace_all(sql, "{id}",
                std::string(db.kind()) == "sqlite" ? "INTEGER PRIMARY KEY AUTOINCREMENT"
                                                   : "BIGSERIAL PRIMARY KEY");
    replace_all(sql, "{subject_of_row}", kSubjectOfRow);
    replace_all(sql, "{unnamed_before}", kUnnamedBefore);
    return sql;
}

}  // namespace

void migrate(Database& db) {
    static_assert(kSchemaVersion >= 1);
    // A store already at this version needs nothing written: readers (the review page,
    // `arbiter review`, the correlator) then open one that cannot be written too, a
    // read-only file or transaction (the writer's own check is StoreSink's).
    try {
        auto version = db.prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
        if (version->step() && version->integer(0) == kSchemaVersion) return;
    } catch (const DatabaseError&) {
        // No schema yet, or no answer: the locked path below says which.
    }
    // One transaction that holds the store's migration lock from the first read: two hosts
    // starting together on a fresh store migrate it once (SQLite: BEGIN IMMEDIATE takes the
    // write lock; PostgreSQL: an advisory lock until the commit).
    in_transaction(db, [&] {
        if (std::string(db.kind()) != "sqlite") db.execute("SELECT pg_advisory_xact_lock(4172837)");
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
            "applied_unix BIGINT NOT NULL)");
        int64_t current = 0;
        {
            auto version = db.prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
            if (version->step()) current = version->integer(0);
        }
        if (current > kSchemaVersion)
            throw DatabaseError(fmt::format(
                "the store is at schema version {}, newer than this host's {}: upgrade the "
                "host, or point it at another store",
                current, kSchemaVersion), false);
        for (int64_t step = current + 1; step <= kSchemaVersion; ++step) {
            db.execute(dialect(db, kMigrations[static_cast<size_t>(step - 1)]));
            auto record =
                db.prepare("INSERT INTO schema_migrations (version, applied_unix) VALUES (?, ?)");
            record->bind(1, step)
                .bind(2, static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count()));
            record->step();
        }
    });
}

std::unique_ptr<Database> open_and_migrate(const StoreSettings& settings) {
    std::unique_ptr<Database> db =
        settings.postgres.empty() ? open_sqlite(settings.path) : open_postgres(settings.postgres);
    migrate(*db);
    return db;
}

}  // namespace arbiter::host::store
