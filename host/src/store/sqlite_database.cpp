// The store on SQLite (Debian's libsqlite3): one file, WAL, so that `arbiter review` reads
// while a server writes.
#include <sqlite3.h>

#include <fmt/format.h>

#include "store/database.hpp"

namespace arbiter::host::store {

namespace {

// What may work later (another writer holds the lock, the disk is full) as against what
// the database refuses of the record itself (a constraint, a value too big).
bool is_transient(int result) {
    switch (result & 0xff) {
        case SQLITE_CONSTRAINT:
        case SQLITE_TOOBIG:
        case SQLITE_MISMATCH:
        case SQLITE_RANGE:
            return false;
        default:
            return true;
    }
}

class SqliteStatement final : public Statement {
  public:
    SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
        if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_,
                               nullptr) != SQLITE_OK)
            throw DatabaseError(fmt::format("preparing \"{}\": {}", sql.substr(0, 80),
                                            sqlite3_errmsg(db)));
    }
    ~SqliteStatement() override { sqlite3_finalize(statement_); }

    Statement& bind(int index, int64_t value) override {
        check(sqlite3_bind_int64(statement_, index, value));
        return *this;
    }
    Statement& bind(int index, double value) override {
        check(sqlite3_bind_double(statement_, index, value));
        return *this;
    }
    Statement& bind(int index, std::string_view value) override {
        check(sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                  SQLITE_UTF8));
        return *this;
    }
    Statement& bind_null(int index) override {
        check(sqlite3_bind_null(statement_, index));
        return *this;
    }
    bool step() override {
        const int result = sqlite3_step(statement_);
        if (result == SQLITE_ROW) return true;
        if (result == SQLITE_DONE) return false;
        throw DatabaseError(fmt::format("running \"{}\": {}",
                                        std::string_view(sqlite3_sql(statement_)).substr(0, 80),
                                        sqlite3_errmsg(db_)),
                            is_transient(result));
    }
    void reset() override {
        sqlite3_reset(statement_);
        sqlite3_clear_bindings(statement_);
    }
    int64_t integer(int column) const override { return sqlite3_column_int64(statement_, column); }
    double real(int column) const override { return sqlite3_column_double(statement_, column); }
    std::string text(int column) const override {
        const auto* data = sqlite3_column_text(statement_, column);
        return data ? std::string(reinterpret_cast<const char*>(data),
                                  static_cast<size_t>(sqlite3_column_bytes(statement_, column)))
                    : std::string();
    }
    bool is_null(int column) const override {
        return sqlite3_column_type(statement_, column) == SQLITE_NULL;
    }

  private:
    void check(int result) const {
        if (result != SQLITE_OK)
            throw DatabaseError(fmt::format("binding: {}", sqlite3_errmsg(db_)));
    }
    sqlite3* db_;
    sqlite3_stmt* statement_ = nullptr;
};

class SqliteDatabase final : public Database {
  public:
    explicit SqliteDatabase(const std::string& path) {
        if (sqlite3_open_v2(path.c_str(), &db_,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            nullptr) != SQLITE_OK) {
            const std::string reason = db_ ? sqlite3_errmsg(db_) : "out of memory";
            sqlite3_close(db_);
            throw DatabaseError(fmt::format("{}: cannot open the store: {}", path, reason));
        }
        // A reader (arbiter review) and the writer may meet: wait for each other a while.
        sqlite3_busy_timeout(db_, 10'000);
        try {
            execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                    "PRAGMA foreign_keys = ON;");
        } catch (const DatabaseError& error) {
            sqlite3_close(db_);
            throw DatabaseError(fmt::format("{}: {}", path, error.what()));
        }
    }
    ~SqliteDatabase() override { sqlite3_close(db_); }

    void execute(std::string_view sql) override {
        char* message = nullptr;
        const std::string text(sql);
        if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
            const std::string reason = message ? message : sqlite3_errmsg(db_);
            sqlite3_free(message);
            throw DatabaseError(fmt::format("running \"{}\": {}", sql.substr(0, 80), reason));
        }
    }
    std::unique_ptr<Statement> prepare(std::string_view sql) override {
        return std::make_unique<SqliteStatement>(db_, sql);
    }
    void begin() override { execute("BEGIN IMMEDIATE"); }
    void commit() override { execute("COMMIT"); }
    void rollback() override {
        if (!sqlite3_get_autocommit(db_)) execute("ROLLBACK");
    }
    int64_t last_insert_id() override { return sqlite3_last_insert_rowid(db_); }
    const char* kind() const override { return "sqlite"; }

  private:
    sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<Database> open_sqlite(const std::string& path) {
    return std::make_unique<SqliteDatabase>(path);
}

}  // namespace arbiter::host::store
