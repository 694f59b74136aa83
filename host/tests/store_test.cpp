// The store on SQLite: its schema and migrations, the writer that never drops, what
// kill -9 keeps, the review queue with tier 6's cross-server ranking, verdicts, their
// export, and seed 000's trust score.
#include <linux/capability.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "support/postgres_server.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

// Root writes whatever a file's mode says: without CAP_DAC_OVERRIDE in its effective set
// (for this thread and the threads it starts meanwhile) a mode of 0444 holds for it as
// for anyone. Not root: nothing to drop, the mode holds already.
class WithoutModeOverride {
  public:
    WithoutModeOverride() { set(false); }
    ~WithoutModeOverride() { set(true); }

  private:
    static void set(bool effective) {
        __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
        if (::syscall(SYS_capget, &header, data) != 0) return;
        const uint32_t bit = 1u << CAP_DAC_OVERRIDE;
        if (!(data[0].permitted & bit)) return;
        data[0].effective = effective ? data[0].effective | bit : data[0].effective & ~bit;
        ::syscall(SYS_capset, &header, data);
    }
};

// Every store test runs on both back ends: an SQLite file, and a real PostgreSQL server
// the suite starts for itself (one server, the schema emptied before each test).
class StoreTest : public ::testing::TestWithParam<std::string> {
  protected:
    static void SetUpTestSuite() {
        if (auto started = test::PostgresServer::start(postgres_missing_))
            postgres_ = std::make_unique<test::PostgresServer>(std::move(*started));
    }
    static void TearDownTestSuite() { postgres_.reset(); }

    void SetUp() override {
        if (GetParam() != "postgresql") return;
        if (!postgres_) GTEST_SKIP() << "skipped on PostgreSQL: " << postgres_missing_;
        auto db = store::open_postgres(postgres_->conninfo());
        db->execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
    }

    StoreSettings settings_in(const TempDir& dir, uint64_t commit_ms = 20,
                              uint64_t max_queued = 1000) const {
        StoreSettings settings;
        if (GetParam() == "postgresql")
            settings.postgres = postgres_->conninfo();
        else
            settings.path = (dir / "store.db").string();
        settings.commit_interval_ms = commit_ms;
        settings.max_queued = max_queued;
        return settings;
    }

    // The store cannot be written (true) or can again (false): the SQLite file's mode, or
    // PostgreSQL's default for new transactions (an operator's read-only switch).
    void set_read_only(const StoreSettings& settings, bool read_only) const {
        if (GetParam() == "sqlite") {
            // With its WAL files, as an operator would (`chmod 644 store.db*`): SQLite makes
            // them with the file's mode, read only too while it was.
            for (const char* suffix : {"", "-wal", "-shm"})
                if (std::filesystem::exists(settings.path + suffix))
                    std::filesystem::permissions(settings.path + suffix,
                                                 read_only ? std::filesystem::perms(0444)
                                                           : std::filesystem::perms(0644));
            return;
        }
        auto db = store::open_postgres(postgres_->conninfo());
        db->execute("SET default_transaction_read_only = off");
        db->execute(fmt::format(
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only "
            "= {}', current_database()); END $$",
            read_only ? "on" : "off"));
    }

    static inline std::unique_ptr<test::PostgresServer> postgres_;
    static inline std::string postgres_missing_;
};

SignalRecord flag(const std::string& relay, uint64_t match, uint32_t player,
                  const std::string& account, double score, int64_t t_us = 5'000'000) {
    SignalRecord signal;
    signal.plugin = "reference";
    signal.code = "movement.speed";
    signal.player = {relay, match, player};
    signal.score = score;
    signal.confidence = 1.0;
    signal.evidence_json = "{\"speed_mps\":31.5}";
    signal.reported_at_us = t_us;
    signal.account = account;
    signal.player_first_seen_us = 1'000'000;
    return signal;
}

Assessment assessed(const std::string& relay, uint64_t match, uint32_t player,
                    const std::string& account, Action action) {
    Assessment assessment;
    assessment.player = {relay, match, player};
    assessment.account_id = account;
    assessment.action = action;
    assessment.combined_score = action == Action::clear ? 0.0 : 0.9;
    return assessment;
}

// A player's dossier as JSON; null, and a failure, when the store holds no such player.
nlohmann::json dossier_of(ReviewStore& store, const std::string& subject) {
    const auto dossier = store.dossier(subject);
    if (!dossier) {
        ADD_FAILURE() << "no dossier for '" << subject << "'";
        return nullptr;
    }
    return nlohmann::json::parse(dossier->json);
}

int64_t count(const StoreSettings& settings, const std::string& table) {
    auto db = store::open_and_migrate(settings);
    auto rows = db->prepare("SELECT COUNT(*) FROM " + table);
    return rows->step() ? rows->integer(0) : -1;
}

TEST_P(StoreTest, MigratesOnceAndRefusesAStoreFromANewerHost) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        auto db = store::open_and_migrate(settings);
        store::migrate(*db);  // nothing to do the second time
        auto versions = db->prepare("SELECT COUNT(*), MAX(version) FROM schema_migrations");
        ASSERT_TRUE(versions->step());
        EXPECT_EQ(versions->integer(0), store::kSchemaVersion);
        EXPECT_EQ(versions->integer(1), store::kSchemaVersion);
        db->execute("INSERT INTO schema_migrations (version, applied_unix) VALUES (99, 0)");
    }
    try {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        FAIL() << "a store of schema 99 was opened";
    } catch (const std::runtime_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("schema version 99, newer than this host's " +
                                            std::to_string(store::kSchemaVersion)));
    }
}

TEST_P(StoreTest, AStoreOfSchemaOneIsBroughtForwardWithItsRows) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        sink.on_signal(flag("relay-a", 1, 7, "old", 0.9));
        sink.flush();
    }
    {
        // Back to what a host of schema 1 left: no record keys.
        auto db = store::open_and_migrate(settings);
        db->execute("DROP INDEX security_events_writer");
        db->execute("ALTER TABLE security_events DROP COLUMN writer_id");
        db->execute("ALTER TABLE security_events DROP COLUMN writer_seq");
        db->execute("DROP TABLE sequence_ledger");
        db->execute("DELETE FROM schema_migrations WHERE version >= 2");
    }
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        sink.on_signal(flag("relay-a", 1, 8, "new", 0.9));
        sink.flush();
    }
    EXPECT_EQ(count(settings, "security_events"), 2);
    EXPECT_EQ(count(settings, "schema_migrations"), store::kSchemaVersion);
}

TEST_P(StoreTest, AnEventWrittenAgainWithItsKeyIsNotAddedTwice) {
    // What the writer does when a commit's answer was lost after the database committed:
    // it writes the same records again, with the same keys.
    TempDir dir;
    const auto settings = settings_in(dir);
    auto db = store::open_and_migrate(settings);
    for (int attempt = 0; attempt < 2; ++attempt) {
        db->begin();
        auto insert = db->prepare(store::kInsertSecurityEvent);
        insert->bind(1, std::string_view("s1"))
            .bind(2, std::string_view("relay-a"))
            .bind(3, int64_t{1});
        insert->bind(4, int64_t{7})
            .bind(5, std::string_view("acc"))
            .bind(6, std::string_view("acc"));
        insert->bind(7, std::string_view("reference")).bind(8, std::string_view("movement.speed"));
        insert->bind(9, std::string_view("validation")).bind(10, int64_t{3}).bind(11, 0.9);
        insert->bind(12, 1.0).bind(13, 0.9).bind(14, int64_t{0}).bind(15, std::string_view("{}"));
        insert->bind(16, int64_t{5}).bind_null(17).bind(18, int64_t{1});
        insert->bind(19, int64_t{0x0123456789abcdef}).bind(20, int64_t{1});
        insert->step();
        db->commit();
    }
    EXPECT_EQ(count(settings, "security_events"), 1);
    // And every event a sink writes has a key of its own.
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        for (uint32_t player = 1; player <= 50; ++player)
            sink.on_signal(flag("relay-a", 2, player, "acc", 0.9));
        sink.flush();
    }
    EXPECT_EQ(count(settings, "security_events"), 51);
}

// Issue 39: relay us-1 joined a player whose account is the string "eu-1/7/12", and one
// verdict landed on relay eu-1's unnamed player 12 of match 7 as well.
TEST_P(StoreTest, AnAccountSpelledLikeAnUnnamedPlayerIsNotThatPlayer) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        sink.on_signal(flag("eu-1", 7, 12, "", 0.9));
        sink.on_signal(flag("us-1", 3, 1, "eu-1/7/12", 0.9));
        sink.on_signal(flag("us-1", 3, 2, "player:eu-1/7/12", 0.9));
        sink.on_signal(flag("us-1", 3, 3, "account:mallory", 0.9));
        sink.flush();
    }
    ReviewStore store(settings);
    std::set<std::string> subjects;
    for (const auto& entry : store.queue()) subjects.insert(entry.subject);
    EXPECT_EQ(subjects, (std::set<std::string>{"player:eu-1/7/12", "eu-1/7/12",
                                               "account:player:eu-1/7/12",
                                               "account:account:mallory"}));
    // The verdict on the account leaves eu-1's player in the queue, unreviewed.
    store.record_verdict("eu-1/7/12", "confirmed", "alice", "");
    auto unnamed = dossier_of(store, "player:eu-1/7/12");
    ASSERT_EQ(unnamed["events"].size(), 1u);
    EXPECT_EQ(unnamed["events"][0]["relay_id"], "eu-1");
    EXPECT_EQ(unnamed["events"][0]["reviewed"], false);
    EXPECT_TRUE(unnamed["verdicts"].empty());
    // An account named like a key is reached as "account:" and its name, and only so.
    auto spelled = dossier_of(store, "account:player:eu-1/7/12");
    EXPECT_EQ(spelled["subject"], "account:player:eu-1/7/12");
    ASSERT_EQ(spelled["events"].size(), 1u);
    EXPECT_EQ(spelled["events"][0]["player"], 2);
    EXPECT_EQ(dossier_of(store, "account:eu-1/7/12")["subject"], "eu-1/7/12");
    EXPECT_EQ(store.queue().size(), 3u);
}

// A store of schema 2 keyed both kinds alike; brought forward, each row gets its kind from
// its own account, and an old verdict stays readable on the player it was given to.
TEST_P(StoreTest, AStoreOfSchemaTwoIsRekeyedWithItsVerdicts) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        sink.on_signal(flag("eu-1", 7, 12, "", 0.9));
        sink.on_signal(flag("eu-1", 7, 13, "", 0.9));
        sink.on_signal(flag("us-1", 3, 1, "mallory", 0.9));
        sink.on_signal(flag("us-1", 3, 2, "player:x", 0.9));
        sink.on_match_end("eu-1", 7, true, {assessed("eu-1", 7, 12, "", Action::flag_for_review)});
        sink.flush();
    }
    {
        // Back to what a host of schema 2 wrote, with a verdict on each kind.
        auto db = store::open_and_migrate(settings);
        for (const char* table : {"security_events", "assessments"})
            db->execute(fmt::format(
                "UPDATE {} SET subject = CASE WHEN account = '' THEN relay_id || '/' || "
                "CAST(match_id AS TEXT) || '/' || CAST(player AS TEXT) ELSE account END",
                table));
        db->execute(
            "INSERT INTO verdicts (subject, verdict, reviewer, note, recorded_unix) VALUES "
            "('eu-1/7/12', 'confirmed', 'alice', '', 1), ('mallory', 'false_positive', 'bob', "
            "'', 2)");
        db->execute("DROP TABLE sequence_ledger");
        db->execute("DELETE FROM schema_migrations WHERE version >= 3");
    }
    ReviewStore store(settings);
    auto unnamed = dossier_of(store, "player:eu-1/7/12");
    EXPECT_EQ(unnamed["events"].size(), 1u);
    EXPECT_EQ(unnamed["matches"].size(), 1u);
    ASSERT_EQ(unnamed["verdicts"].size(), 1u);
    EXPECT_EQ(unnamed["verdicts"][0]["reviewer"], "alice");
    EXPECT_EQ(dossier_of(store, "mallory")["verdicts"][0]["reviewer"], "bob");
    EXPECT_EQ(dossier_of(store, "account:player:x")["events"].size(), 1u);
    EXPECT_FALSE(store.dossier("eu-1/7/12"));  // no account of that name
    EXPECT_EQ(count(settings, "verdicts"), 2);
    EXPECT_EQ(count(settings, "schema_migrations"), store::kSchemaVersion);
}

TEST_P(StoreTest, AFileThatIsNoDatabaseIsAClearError) {
    if (GetParam() != "sqlite") GTEST_SKIP() << "a file is SQLite's";
    TempDir dir;
    test::write_text(dir / "store.db", "not a database, only text\n");
    try {
        StoreSink sink(settings_in(dir), "s1", 0.3, 0.7);
        FAIL() << "opened";
    } catch (const std::runtime_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("store.db"));
        EXPECT_THAT(error.what(), HasSubstr("not a database"));
    }
}

TEST_P(StoreTest, WritesFlagsAtTheThresholdAndEveryAssessment) {
    TempDir dir;
    const auto settings = settings_in(dir, 5, 1000);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        for (uint32_t i = 0; i < 500; ++i) {
            sink.on_signal(flag("r", 1, 1 + i % 10, "acct-" + std::to_string(i % 10), 0.8));
            sink.on_signal(flag("r", 1, 1, "acct-0", 0.1));  // under the threshold: not a flag
        }
        sink.on_match_end("r", 1, true, {assessed("r", 1, 1, "acct-0", Action::flag_for_review)});
        sink.flush();
        // 500 flags, the match, its assessment; a queue of 1000 was never full.
        EXPECT_EQ(sink.counters().committed, 502u);
        EXPECT_EQ(sink.counters().lost, 0u);
    }
    EXPECT_EQ(count(settings, "security_events"), 500);
    EXPECT_EQ(count(settings, "assessments"), 1);
    EXPECT_EQ(count(settings, "matches"), 1);
}

// Issue 39: a store that cannot be written held the event thread once max_queued records
// waited, and with it every relay and /metrics. Each way a store becomes unwritable is
// made here as it happens: a file of mode 0444 (root is held to it, see
// WithoutModeOverride), a PostgreSQL database whose transactions are read only.
TEST_P(StoreTest, AStoreThatCannotBeWrittenIsRefusedAtStartOrStartedAndWrittenOnceItCan) {
    TempDir dir;
    auto settings = settings_in(dir, 20, 10);
    { StoreSink created(settings, "s1", 0.3, 0.7); }
    std::unique_ptr<StoreSink> sink;
    {
        WithoutModeOverride held;
        set_read_only(settings, true);
        try {
            StoreSink refused(settings, "s1", 0.3, 0.7);
            ADD_FAILURE() << "started on a store it cannot write";
        } catch (const std::runtime_error& error) {
            EXPECT_THAT(error.what(), HasSubstr("on_unwritable"));
        }
        settings.start_unwritable = true;
        sink = std::make_unique<StoreSink>(settings, "s1", 0.3, 0.7);
        // Reviewers read it all the same.
        ReviewStore reader(settings);
        EXPECT_TRUE(reader.queue().empty());
    }
    // Every record is taken at once: 10 wait for the store, the other 90 are lost and
    // counted, and the thread that gave them went on.
    for (uint32_t i = 0; i < 100; ++i) sink->on_signal(flag("r", 1, 1 + i, "a", 0.9));
    EXPECT_EQ(sink->counters().lost, 90u);
    // The cause goes away: the store is opened again and the 10 are written.
    set_read_only(settings, false);
    sink->flush();
    EXPECT_EQ(sink->counters().committed, 10u);
    EXPECT_GE(sink->counters().reopens, 1u);
    EXPECT_EQ(count(settings, "security_events"), 10);
}

// A disk that fills while the store runs (a small tmpfs, filled up): records past the
// bound are lost and counted rather than waited for, and once room is made the held ones
// are written.
TEST_P(StoreTest, AFullDiskLosesOnlyPastTheBoundAndIsWrittenOnceThereIsRoom) {
    if (GetParam() != "sqlite")
        GTEST_SKIP() << "PostgreSQL on a full disk: APostgresServerWhoseDiskFillsLosesOnlyPastTheBound";
    TempDir dir;
    const auto small = dir / "small";
    std::filesystem::create_directories(small);
    // 4 MiB of tmpfs, mounted by the test: a full disk it can make and free. It needs root
    // (CAP_SYS_ADMIN); elsewhere the test says so and skips.
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m") != 0)
        GTEST_SKIP() << "cannot mount a small tmpfs to fill (" << std::strerror(errno)
                     << "): run as root for this test";
    struct Unmount {
        std::filesystem::path at;
        ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
    } unmount{small};
    StoreSettings settings;
    settings.path = (small / "store.db").string();
    settings.commit_interval_ms = 20;
    settings.max_queued = 50;
    StoreSink sink(settings, "s1", 0.3, 0.7);
    sink.on_signal(flag("r", 1, 1, "a", 0.9));
    sink.flush();
    ASSERT_EQ(sink.counters().committed, 1u);
    {
        std::ofstream filler(small / "filler", std::ios::binary);
        const std::string block(64 * 1024, 'x');
        while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) &&
               filler.flush()) {
        }
    }
    SignalRecord big = flag("r", 1, 2, "b", 0.9);
    big.evidence_json = "{\"pad\":\"" + std::string(8 * 1024, 'p') + "\"}";
    for (int i = 0; i < 200; ++i) sink.on_signal(big);
    EXPECT_EQ(sink.counters().lost, 150u);
    EXPECT_EQ(sink.counters().committed, 1u);
    std::filesystem::remove(small / "filler");
    sink.flush();
    EXPECT_EQ(sink.counters().committed, 51u);
    EXPECT_EQ(count(settings, "security_events"), 51);
}

// The same on PostgreSQL: a server of the test's own whose data lives on a small tmpfs,
// filled up while the store runs. The server refuses to grow its tables (its write-ahead
// log has room in the segment it had made), the records past the bound are lost and
// counted, and once room is made the held ones are written.
TEST_P(StoreTest, APostgresServerWhoseDiskFillsLosesOnlyPastTheBound) {
    if (GetParam() != "postgresql") GTEST_SKIP() << "the SQLite case is the test above";
    std::string why_not;
    // 96 MiB: initdb's files and a WAL segment, with room to fill.
    auto server = test::PostgresServer::start(why_not, 96);
    ASSERT_TRUE(server) << why_not;
    StoreSettings settings;
    settings.postgres = server->conninfo();
    settings.commit_interval_ms = 20;
    settings.max_queued = 50;
    StoreSink sink(settings, "s1", 0.3, 0.7);
    sink.on_signal(flag("r", 1, 1, "a", 0.9));
    sink.flush();
    ASSERT_EQ(sink.counters().committed, 1u);
    const auto filler_path = server->disk() / "filler";
    {
        std::ofstream filler(filler_path, std::ios::binary);
        const std::string block(64 * 1024, 'x');
        while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) &&
               filler.flush()) {
        }
    }
    SignalRecord big = flag("r", 1, 2, "b", 0.9);
    big.evidence_json = "{\"pad\":\"" + std::string(8 * 1024, 'p') + "\"}";
    for (int i = 0; i < 200; ++i) sink.on_signal(big);
    // Whatever the server still had room for in pages it had is written; of the rest, the
    // store holds max_queued and counts the others lost.
    const uint64_t lost = sink.counters().lost;
    EXPECT_GE(lost, 100u) << "the disk was full, yet most records were taken";
    std::filesystem::remove(filler_path);
    sink.flush();
    EXPECT_EQ(sink.counters().committed, 1u + 200u - lost);
    EXPECT_EQ(count(settings, "security_events"), static_cast<int64_t>(1 + 200 - lost));
}

// Issue 39: the ledger was kept in memory only, so a server restarted took a match sent
// again as new. The sink keeps it in the store, and the next sink of the same server
// reads it back; another server's is its own.
TEST_P(StoreTest, TheLedgerIsKeptWithTheRecordsAndReadBackByTheSameServer) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        EXPECT_TRUE(sink.take_recorded_progress().empty());
        sink.on_progress({"relay-a", 7, 3, 2'000'000, 0xfedcba9876543210, false});
        sink.on_progress({"relay-a", 7, 5, 4'000'000, 0xfedcba9876543210, true});
        sink.on_progress({"relay-b", UINT64_MAX - 1, 1, 1'000, 1, false});
        sink.flush();
    }
    StoreSink again(settings, "s1", 0.3, 0.7);
    auto progress = again.take_recorded_progress();
    ASSERT_EQ(progress.size(), 2u);
    // The ended match first.
    EXPECT_EQ(progress[0].relay_id, "relay-a");
    EXPECT_EQ(progress[0].match_id, 7u);
    EXPECT_EQ(progress[0].next_sequence, 5u);
    EXPECT_EQ(progress[0].last_relay_us, 4'000'000);
    EXPECT_EQ(progress[0].first_batch_hash, 0xfedcba9876543210);
    EXPECT_TRUE(progress[0].ended);
    EXPECT_EQ(progress[1].match_id, UINT64_MAX - 1);
    EXPECT_FALSE(progress[1].ended);
    StoreSink other(settings, "s2", 0.3, 0.7);
    EXPECT_TRUE(other.take_recorded_progress().empty());
}

TEST_P(StoreTest, KillDashNineKeepsEverythingFlushedAndLosesAtMostTheLastInterval) {
    TempDir dir;
    const auto settings = settings_in(dir, 50);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        for (uint32_t i = 0; i < 100; ++i)
            sink.on_signal(flag("r", 1, 1, "a", 0.9));
        sink.flush();  // these 100 are committed
        for (uint32_t i = 0; i < 100; ++i)
            sink.on_signal(flag("r", 1, 2, "b", 0.9));
        ::kill(::getpid(), SIGKILL);  // no flush, no destructor
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    const int64_t kept = count(settings, "security_events");
    EXPECT_GE(kept, 100);
    EXPECT_LE(kept, 200);
    // The store opens clean after it: WAL recovery, no damage.
    ReviewStore store(settings);
    EXPECT_FALSE(store.queue().empty());
}

TEST_P(StoreTest, TheQueueRanksAnAccountFlaggedOnTwoServersFirst) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        // Two servers on one store, as two hosts on one database.
        StoreSink one(settings, "server-one", 0.3, 0.7);
        StoreSink two(settings, "server-two", 0.3, 0.7);
        // A strong flag on one server only.
        one.on_signal(flag("relay-a", 1, 7, "loud", 1.0));
        // Two moderate flags of one account on two servers: each alone at Monitor.
        one.on_signal(flag("relay-a", 1, 3, "quiet", 0.5));
        two.on_signal(flag("relay-b", 9, 4, "quiet", 0.5));
        // A player without an account.
        two.on_signal(flag("relay-b", 9, 5, "", 0.6));
        one.flush();
        two.flush();
    }
    ReviewStore store(settings);
    const auto queue = store.queue();
    ASSERT_EQ(queue.size(), 3u);
    EXPECT_EQ(queue[0].subject, "quiet");
    EXPECT_EQ(queue[0].servers, 2u);
    ASSERT_FALSE(queue[0].correlation.empty());
    EXPECT_THAT(queue[0].correlation[0], HasSubstr("flagged on 2 servers within 7 days"));
    EXPECT_EQ(queue[1].subject, "loud");
    EXPECT_EQ(queue[1].max_severity, 4);
    EXPECT_EQ(queue[2].subject, "player:relay-b/9/5");

    const auto dossier = store.dossier("quiet");
    ASSERT_TRUE(dossier);
    const auto json = nlohmann::json::parse(dossier->json);
    EXPECT_EQ(json["servers"].size(), 2u);
    EXPECT_EQ(json["events"].size(), 2u);
    EXPECT_EQ(json["events"][0]["evidence"]["speed_mps"], 31.5);
    EXPECT_DOUBLE_EQ(json["events"][0]["since_join_s"].get<double>(), 4.0);
    EXPECT_FALSE(store.dossier("nobody"));
}

TEST_P(StoreTest, AVerdictTakesAPlayerOffTheQueueAndIsExportedAsALabel) {
    TempDir dir;
    const auto settings = settings_in(dir);
    {
        StoreSink sink(settings, "s1", 0.3, 0.7);
        sink.on_signal(flag("r", 1, 1, "cheater", 0.9));
        sink.on_signal(flag("r", 1, 2, "honest", 0.5));
        sink.on_signal(flag("r", 1, 3, "unsure", 0.5));
        sink.on_match_end("r", 1, true,
                          {assessed("r", 1, 1, "cheater", Action::flag_for_review),
                           assessed("r", 1, 2, "honest", Action::monitor),
                           assessed("r", 1, 3, "unsure", Action::monitor)});
        sink.flush();
    }
    ReviewStore store(settings);
    EXPECT_GT(store.record_verdict("cheater", "confirmed", "alice", "clear speed hack"), 0);
    store.record_verdict("honest", "false_positive", "alice", "");
    store.record_verdict("unsure", "inconclusive", "bob", "");
    EXPECT_TRUE(store.queue().empty());
    EXPECT_THROW(store.record_verdict("cheater", "guilty", "alice", ""), std::invalid_argument);
    EXPECT_THROW(store.record_verdict("cheater", "confirmed", "", ""), std::invalid_argument);
    EXPECT_THROW(store.record_verdict("cheater", "confirmed", std::string("\xff", 1), ""),
                 std::invalid_argument);
    EXPECT_THROW(store.record_verdict("nobody", "confirmed", "alice", ""), std::runtime_error);

    const auto dossier = nlohmann::json::parse(store.dossier("cheater")->json);
    EXPECT_EQ(dossier["verdicts"][0]["reviewer"], "alice");
    EXPECT_EQ(dossier["events"][0]["verdict"], "confirmed");
    EXPECT_EQ(dossier["trust"]["score"], 0.0);  // a confirmed cheater has no trust left

    const auto truth = nlohmann::json::parse(store.export_truth());
    EXPECT_EQ(truth["format"], "arbiter-truth");
    ASSERT_EQ(truth["matches"].size(), 1u);
    const auto& players = truth["matches"][0]["players"];
    ASSERT_EQ(players.size(), 2u);  // the inconclusive one is left out
    EXPECT_EQ(players[0]["account"], "cheater");
    EXPECT_EQ(players[0]["cheater"], true);
    EXPECT_EQ(players[1]["account"], "honest");
    EXPECT_EQ(players[1]["cheater"], false);
}

// Issue 16: a database that goes away mid-stream (PostgreSQL restarted) is retried with
// the records held, and the log says so; nothing given is lost.
TEST_P(StoreTest, ADatabaseThatGoesAwayIsRetriedWithTheRecordsHeld) {
    if (GetParam() != "postgresql") GTEST_SKIP() << "a server to stop is PostgreSQL's";
    TempDir dir;
    const auto settings = settings_in(dir);
    StoreSink sink(settings, "s1", 0.3, 0.7);
    for (uint32_t i = 0; i < 50; ++i)
        sink.on_signal(flag("r", 1, 1, "a", 0.9));
    sink.flush();
    std::string error;
    ASSERT_TRUE(postgres_->stop(error)) << error;
    for (uint32_t i = 0; i < 50; ++i)
        sink.on_signal(flag("r", 1, 2, "b", 0.9));
    // The writer fails at least once while the server is down.
    for (int i = 0; i < 200 && sink.counters().failures == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GT(sink.counters().failures, 0u);
    ASSERT_TRUE(postgres_->start_again(error)) << error;
    sink.flush();
    EXPECT_EQ(sink.counters().committed, 100u);
    EXPECT_EQ(sink.counters().refused, 0u);
    EXPECT_EQ(count(settings, "security_events"), 100);
}

// A record the database refuses on its own (a NUL in an account, which PostgreSQL's text
// cannot hold, is escaped instead; here a value past a column's range) cannot hold the
// records after it back for ever.
TEST_P(StoreTest, ARecordTheDatabaseRefusesAloneIsLeftOutAndTheRestWritten) {
    TempDir dir;
    const auto settings = settings_in(dir, 5);
    {
        // A constraint of the operator's own that one record breaks.
        auto db = store::open_and_migrate(settings);
        if (GetParam() == "postgresql")
            db->execute(
                "CREATE FUNCTION refuse_x() RETURNS trigger AS $$ BEGIN IF NEW.account = 'x' "
                "THEN RAISE EXCEPTION 'no x'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
        db->execute(
            "CREATE TRIGGER refuse_x BEFORE INSERT ON security_events " +
            std::string(GetParam() == "sqlite"
                            ? "WHEN NEW.account = 'x' BEGIN SELECT RAISE(ABORT, 'no x'); END"
                            : "FOR EACH ROW EXECUTE FUNCTION refuse_x()"));
    }
    StoreSink sink(settings, "s1", 0.3, 0.7);
    sink.on_signal(flag("r", 1, 1, "a", 0.9));
    sink.on_signal(flag("r", 1, 2, "x", 0.9));
    sink.on_signal(flag("r", 1, 3, std::string("n\0ul", 4), 0.9));
    sink.flush();
    EXPECT_EQ(sink.counters().refused, 1u);
    EXPECT_EQ(count(settings, "security_events"), 2);
}

INSTANTIATE_TEST_SUITE_P(Store, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& backend) { return backend.param; });

TEST(Trust, FollowsSeedZeroZeroZerosWeighting) {
    TrustFactors fresh;
    EXPECT_EQ(trust_score(fresh), 6000.0);
    TrustFactors old = fresh;
    old.account_age_days = 365;
    EXPECT_EQ(trust_score(old), 7500.0);
    old.account_age_days = 10'000;  // saturates at a year
    EXPECT_EQ(trust_score(old), 7500.0);
    TrustFactors idle = fresh;
    idle.rated_games_played = 20;  // the dead zone: nothing yet
    EXPECT_EQ(trust_score(idle), 6000.0);
    idle.rated_games_played = 520;
    EXPECT_EQ(trust_score(idle), 9000.0);
    // Everything good, and five anti-cheat points: zero all the same.
    TrustFactors best{.account_age_days = 365,
                      .rated_games_played = 520,
                      .anti_cheat_points = 5,
                      .report_rate = 0,
                      .commend_rate = 0.5,
                      .abandon_rate = 0,
                      .season_participation = 8};
    EXPECT_EQ(trust_score(best), 0.0);
    best.anti_cheat_points = 0;
    EXPECT_EQ(trust_score(best), 12000.0);
    // NaN guards: a factor that is not a number counts as absent.
    TrustFactors broken = fresh;
    broken.account_age_days = std::numeric_limits<double>::quiet_NaN();
    broken.anti_cheat_points = std::numeric_limits<double>::infinity();
    broken.report_rate = -4;
    EXPECT_EQ(trust_score(broken), 6000.0);
}

}  // namespace
}  // namespace arbiter::host
