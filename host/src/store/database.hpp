// The SQL the store speaks, over one back end: a connection, statements with `?`
// placeholders, rows read by column. SQLite (sqlite_database.cpp) is the embedded default;
// PostgreSQL (postgres_database.cpp) is for hosts on several machines sharing one store.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace arbiter::host::store {

// The database refused or failed; what() names the statement's purpose and the reason.
class DatabaseError : public std::runtime_error {
  public:
    // `transient`: the database could not do it now (busy, locked, full, unreachable, read
    // only) rather than refusing what it was given; it may work later.
    explicit DatabaseError(const std::string& what, bool transient = true)
        : std::runtime_error(what), transient_(transient) {}
    bool transient() const { return transient_; }

  private:
    bool transient_;
};

class Statement {
  public:
    virtual ~Statement() = default;
    // Placeholders count from 1, as SQL numbers them.
    virtual Statement& bind(int index, int64_t value) = 0;
    virtual Statement& bind(int index, double value) = 0;
    virtual Statement& bind(int index, std::string_view value) = 0;
    virtual Statement& bind_null(int index) = 0;
    // The next row: true while there is one. A statement without rows runs on the first.
    virtual bool step() = 0;
    // Ready to bind and run again.
    virtual void reset() = 0;
    virtual int64_t integer(int column) const = 0;
    virtual double real(int column) const = 0;
    virtual std::string text(int column) const = 0;
    virtual bool is_null(int column) const = 0;
};

class Database {
  public:
    virtual ~Database() = default;
    virtual void execute(std::string_view sql) = 0;  // one or more statements, no rows
    virtual std::unique_ptr<Statement> prepare(std::string_view sql) = 0;
    virtual void begin() = 0;
    virtual void commit() = 0;
    virtual void rollback() = 0;
    // The id the last insert gave its row.
    virtual int64_t last_insert_id() = 0;
    // "sqlite", for messages and the few places the SQL differs.
    virtual const char* kind() const = 0;
};

// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
// The throw goes on; a rollback that fails too (the connection is gone) does not hide it.
template <class Body>
void in_transaction(Database& db, Body&& body) {
    db.begin();
    try {
        body();
        db.commit();
    } catch (...) {
        try {
            db.rollback();
        } catch (const DatabaseError&) {
        }
        throw;
    }
}

// Wall-clock seconds since the epoch: what the store records its rows' times in.
inline int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Opens (creating) an SQLite file in WAL mode; throws DatabaseError naming it.
std::unique_ptr<Database> open_sqlite(const std::string& path);
// Connects to PostgreSQL (a libpq connection string or URI); throws DatabaseError.
std::unique_ptr<Database> open_postgres(const std::string& conninfo);

}  // namespace arbiter::host::store
