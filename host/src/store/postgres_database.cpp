// The store on PostgreSQL (Debian's libpq), for hosts on several machines that share one
// database. The store's SQL is written for both back ends; here `?` placeholders become
// `$n`, and a connection that broke (the server restarted) is re-established before the
// next statement, so that the writer's retry finds the database again.
#include <libpq-fe.h>

#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "store/database.hpp"

namespace arbiter::host::store {

namespace {

// PostgreSQL's text cannot hold a NUL byte, which UTF-8 allows (an account id from a
// relay may carry one): shown as the escape a reader would write.
std::string without_nul(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\0')
            out += "\\u0000";
        else
            out += c;
    }
    return out;
}

std::string placeholders_numbered(std::string_view sql, int& count) {
    std::string out;
    count = 0;
    for (char c : sql) {
        if (c == '?') {
            // Appended in two steps: "$" + to_string draws a false -Wrestrict from GCC 12
            // at -O3 (the bench preset).
            out += '$';
            out += std::to_string(++count);
        } else {
            out += c;
        }
    }
    return out;
}

// libpq's message on one line (it spreads a lost connection over three).
std::string error_of(PGconn* conn) {
    std::string text = PQerrorMessage(conn);
    for (char& c : text)
        if (c == '\n' || c == '\t') c = ' ';
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

void ensure_connected(PGconn* conn) {
    if (PQstatus(conn) == CONNECTION_OK) return;
    PQreset(conn);
    if (PQstatus(conn) != CONNECTION_OK)
        throw DatabaseError("cannot reach the database: " + error_of(conn));
}

// Statements the server has parsed and planned once per connection, by their SQL: the
// writer runs the same few inserts for every record.
class PreparedCache {
  public:
    explicit PreparedCache(PGconn* conn) : conn_(conn) {}
    // The name of `sql` prepared on this connection; prepares it when the connection is
    // new (a reset loses them all).
    const std::string& name_of(const std::string& sql, int params) {
        if (PQbackendPID(conn_) != backend_) {
            names_.clear();
            backend_ = PQbackendPID(conn_);
        }
        auto found = names_.find(sql);
        if (found != names_.end()) return found->second;
        const std::string name = "arbiter_" + std::to_string(names_.size() + 1);
        PGresult* result = PQprepare(conn_, name.c_str(), sql.c_str(), params, nullptr);
        const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        PQclear(result);
        if (!ok)
            throw DatabaseError(fmt::format("preparing \"{}\": {}", sql.substr(0, 80), error_of(conn_)));
        return names_.emplace(sql, name).first->second;
    }

  private:
    PGconn* conn_;
    int backend_ = 0;
    std::unordered_map<std::string, std::string> names_;
};

class PgStatement final : public Statement {
  public:
    PgStatement(PGconn* conn, PreparedCache& cache, std::string_view sql)
        : conn_(conn), cache_(cache) {
        int count = 0;
        sql_ = placeholders_numbered(sql, count);
        params_.resize(static_cast<size_t>(count));
    }
    ~PgStatement() override { PQclear(result_); }

    Statement& bind(int index, int64_t value) override { return set(index, std::to_string(value)); }
    Statement& bind(int index, double value) override {
        return set(index, fmt::format("{:.17g}", value));
    }
    Statement& bind(int index, std::string_view value) override {
        return set(index, without_nul(value));
    }
    Statement& bind_null(int index) override {
        at(index).reset();
        return *this;
    }
    bool step() override {
        if (!executed_) {
            ensure_connected(conn_);
            std::vector<const char*> values;
            for (const auto& param : params_) values.push_back(param ? param->c_str() : nullptr);
            const std::string& name = cache_.name_of(sql_, static_cast<int>(values.size()));
            PQclear(result_);
            result_ = PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                                     values.data(), nullptr, nullptr, 0);
            const ExecStatusType status = PQresultStatus(result_);
            if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
                // SQLSTATE classes 22 (data exception) and 23 (integrity constraint) are what
                // the server refuses of the record; anything else (no connection, read-only,
                // out of space, a lock, a shutdown) may work later.
                const char* state = result_ ? PQresultErrorField(result_, PG_DIAG_SQLSTATE) : nullptr;
                const bool refused = state && (std::string_view(state).starts_with("22") ||
                                               std::string_view(state).starts_with("23") ||
                                               std::string_view(state).starts_with("P0"));
                throw DatabaseError(fmt::format("running \"{}\": {}", sql_.substr(0, 80),
                                                error_of(conn_)),
                                    !refused);
            }
            executed_ = true;
            row_ = -1;
        }
        return ++row_ < PQntuples(result_);
    }
    void reset() override {
        PQclear(result_);
        result_ = nullptr;
        executed_ = false;
        for (auto& param : params_) param.reset();
    }
    int64_t integer(int column) const override {
        return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10);
    }
    double real(int column) const override {
        return std::strtod(PQgetvalue(result_, row_, column), nullptr);
    }
    std::string text(int column) const override {
        return {PQgetvalue(result_, row_, column),
                static_cast<size_t>(PQgetlength(result_, row_, column))};
    }
    bool is_null(int column) const override { return PQgetisnull(result_, row_, column) != 0; }

  private:
    std::optional<std::string>& at(int index) {
        if (index < 1 || static_cast<size_t>(index) > params_.size())
            throw DatabaseError(fmt::format("binding parameter {} of {}", index, params_.size()));
        return params_[static_cast<size_t>(index - 1)];
    }
    Statement& set(int index, std::string value) {
        at(index) = std::move(value);
        return *this;
    }

    PGconn* conn_;
    PreparedCache& cache_;
    std::string sql_;
    std::vector<std::optional<std::string>> params_;
    PGresult* result_ = nullptr;
    bool executed_ = false;
    int row_ = -1;
};

class PgDatabase final : public Database {
  public:
    explicit PgDatabase(const std::string& conninfo) : conn_(connect(conninfo)), cache_(conn_) {
        if (PQstatus(conn_) != CONNECTION_OK) {
            const std::string reason = error_of(conn_);
            PQfinish(conn_);
            throw DatabaseError("cannot connect to PostgreSQL: " + reason);
        }
        // Notices (a table that already exists, say) are the store's business, not the log's.
        PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
    }
    ~PgDatabase() override { PQfinish(conn_); }

    // Bounds on a server that has gone away, so that a writer, a lookup or the review page
    // gives up in seconds rather than at the TCP timeout (and a SIGTERM is not held that
    // long): 10 s to connect, a dead peer noticed within about 25 s. They come first, so
    // that the operator's connection string (expanded after them) overrides any of them.
    static PGconn* connect(const std::string& conninfo) {
        const char* keys[] = {"connect_timeout",
                              "keepalives",
                              "keepalives_idle",
                              "keepalives_interval",
                              "keepalives_count",
                              "dbname",
                              nullptr};
        const char* values[] = {"10", "1", "10", "5", "3", conninfo.c_str(), nullptr};
        return PQconnectdbParams(keys, values, /*expand_dbname=*/1);
    }

    void execute(std::string_view sql) override {
        ensure_connected(conn_);
        const std::string text(sql);
        PGresult* result = PQexec(conn_, text.c_str());
        const ExecStatusType status = PQresultStatus(result);
        PQclear(result);
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            throw DatabaseError(fmt::format("running \"{}\": {}", sql.substr(0, 80), error_of(conn_)));
    }
    std::unique_ptr<Statement> prepare(std::string_view sql) override {
        return std::make_unique<PgStatement>(conn_, cache_, sql);
    }
    void begin() override { execute("BEGIN"); }
    void commit() override { execute("COMMIT"); }
    void rollback() override {
        if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE)
            execute("ROLLBACK");
    }
    int64_t last_insert_id() override {
        auto row = prepare("SELECT lastval()");
        return row->step() ? row->integer(0) : 0;
    }
    const char* kind() const override { return "postgresql"; }

  private:
    PGconn* conn_;
    PreparedCache cache_;
};

}  // namespace

std::unique_ptr<Database> open_postgres(const std::string& conninfo) {
    return std::make_unique<PgDatabase>(conninfo);
}

}  // namespace arbiter::host::store
