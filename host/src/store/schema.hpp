// The store's tables, and the migrations that make them: numbered steps, each run once in
// a transaction and recorded in schema_migrations, so that a store written by an older
// host is brought forward in place and one written by a newer host is refused.
#pragma once

#include <cstdint>
#include <memory>

#include "arbiter/host/config.hpp"
#include "store/database.hpp"

namespace arbiter::host::store {

// The schema version this host writes and reads.
inline constexpr int64_t kSchemaVersion = 4;

// How the writer adds a security event: 20 placeholders, the last two its key (writer id,
// number); a row with a key already present is left as it is (the same record, written
// again on a retry).
inline constexpr const char* kInsertSecurityEvent =
    "INSERT INTO security_events (server_id, relay_id, match_id, player, account, subject, "
    "plugin, event_type, model_class, severity, score, confidence, weighted_score, tripwire, "
    "evidence, relay_time_us, joined_relay_time_us, recorded_unix, writer_id, writer_seq) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
    "(writer_id, writer_seq) DO NOTHING";

// Applies every migration the database has not had; throws DatabaseError, and refuses a
// database whose version is newer than this host's.
void migrate(Database& db);

// The store the settings name (an SQLite file or a PostgreSQL database), opened and
// migrated; throws DatabaseError.
std::unique_ptr<Database> open_and_migrate(const StoreSettings& settings);

}  // namespace arbiter::host::store
