// The Arbiter host as a library: what `arbiter replay` runs, and what a relay written in
// C++ embeds. Reads top-down as the pipeline it is:
//
//   push(bytes) ─▶ ingest (verify) ─▶ dispatch (every plugin) ─▶ aggregate ─▶ sinks
//
// A batch that fails ingest is refused with the reason and changes nothing; a plugin
// that fails is logged and counted while the others go on; the host keeps running.
//
// With `[host] threads` > 1, dispatch runs on worker threads (parallel_dispatch.hpp) and
// push returns once the batch is handed to them; the host aggregates finished batches in
// the order pushed, on the pushing thread, during later calls. Every call that reads
// what the host knows (assessments, counters, plugins, open matches) or changes its
// plugins first finishes every batch pushed before it, so a caller sees what one thread
// would have given; flush() does only that (a server calls it when its input runs dry,
// so that the last batches' actions go out).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "arbiter/host/aggregator.hpp"
#include "arbiter/host/assessment.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/dispatch.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/parallel_dispatch.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "arbiter/host/reload.hpp"
#include "arbiter/host/sequence_ledger.hpp"
#include "arbiter/host/sharded_instance.hpp"
#include "arbiter/host/sinks.hpp"
#include "arbiter/host/snapshot_handover.hpp"

namespace arbiter::host {

struct HostCounters {
    uint64_t batches = 0;          // accepted
    uint64_t events = 0;           // in accepted batches
    uint64_t refused_batches = 0;  // failed ingest, or duplicates and time going back
    uint64_t lost_stretches = 0;   // gaps in a match's batch sequence
    uint64_t signals = 0;          // accepted from plugins
    uint64_t correlation_signals = 0;  // from the store's tier 6 ([correlation])
    uint64_t matches_ended = 0;
};

class Host {
  public:
    // Loads every enabled plugin of the config. A plugin that cannot be loaded is
    // refused (see plugins()) and the host runs with the others. Throws only when the
    // host itself cannot start (its work folder, its security-event log, or a [store] or
    // [correlation] the config enables and `attachments` does not bring).
    explicit Host(ServerConfig config, HostAttachments attachments = {});
    ~Host();
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    // One batch from outside. Returns the reason when ingest refused it.
    std::optional<std::string> push(std::span<const uint8_t> bytes);
    // The same, saying which match the batch belonged to and whether it ended it.
    struct PushResult {
        std::optional<std::string> problem;  // why ingest refused it
        std::string relay_id;
        uint64_t match_id = 0;
        size_t events = 0;
        bool ended_match = false;
        // A sink failed while batches were taken in during this push (with threads, maybe
        // on an earlier batch): the batch itself was accepted. Logged too.
        std::optional<std::string> sink_failure;
    };
    // `bound_relay`, when not empty, is the relay the batch's source authenticated as: a
    // batch of another relay's matches is refused (a relay feeds, and hears, its own alone).
    // `admitted`, when given, is told the batch's relay and match once the batch is admitted
    // and before any plugin sees it, so that the caller can route what the batch raises
    // (serve: the actions of a match's very first batch go to the relay that sent it).
    PushResult push_batch(
        std::span<const uint8_t> bytes, std::string_view bound_relay = {},
        const std::function<void(const std::string& relay_id, uint64_t match_id)>& admitted = {});
    // Finishes and aggregates every batch pushed so far (nothing to do with one thread).
    // Passes on what a sink threw meanwhile, after every batch is taken in; a reader
    // (assessments(), counters(), ...) logs it instead.
    void flush();
    // Batches pushed and not yet aggregated (always 0 with one thread).
    size_t batches_in_flight() const { return parallel_ ? parallel_->in_flight() : 0; }
    // The worker threads (`[host] threads`, or 1), and the shards they spread matches over
    // (shards_for_threads: 1 with one thread, else many more than the threads).
    uint32_t threads() const { return threads_; }
    uint32_t shards() const { return shards_; }
    // A match ended without a MatchEnd event (its stream closed): plugins report their
    // final signals and free its state. Unknown or already ended matches are ignored.
    void end_match(const std::string& relay_id, uint64_t match_id);
    // The input had a damaged stretch (a file's bytes that were not a record; `where` says
    // which and where). Each open match may have lost batches in it: its next batch tells,
    // and one that ends with neither its next batch nor its MatchEnd is assessed as having
    // lost its rest (SequenceLedger::damage).
    void input_damaged(const std::string& where);
    // Matches with batches and no end yet, with the relay time of their last batch.
    std::vector<std::pair<std::string, uint64_t>> open_matches() const;
    // The stream is over: ends every open match and flushes the sinks. Every step is tried
    // even when one fails; false when any did (each failure is logged). Idempotent.
    bool close();

    // Hot reload (docs/abi-rules.md, rules 12 to 14), between two batches: the plugin's file is
    // copied and loaded afresh, negotiated and created; the old instance saves its state,
    // the new one restores it and takes over; then the old one is destroyed and its
    // library released. If anything fails, the old generation stays and the report says
    // why. Call it from the thread that pushes batches. (reload.cpp)
    ReloadReport reload_plugin(const std::string& name);
    // The same reload in two halves, so that a server can keep the stream flowing while a
    // new version loads. prepare_plugin does everything slow (copy, load, negotiate,
    // create) and may run on any thread while batches are pushed; install_plugin is the
    // swap, on the pushing thread. The slot it replaces goes to `retired` (to destroy off
    // the event path with release_retired), or is released at once when that is null.
    PluginSlot prepare_plugin(const PluginSettings& settings);
    ReloadReport install_plugin(PluginSlot fresh, PluginSlot* retired = nullptr);
    // The install without holding the stream (a server's reload). A plugin run in shards
    // (`[host] threads` > 1, ARB_CAP_SHARD_BY_MATCH, and ARB_CAP_STATE on both generations)
    // goes over one shard at a time, each on its own lane between two of its own batches,
    // while the other shards and the pushing thread go on: a shard's batches are held for
    // its save and restore (and, batches being taken in in push order, the aggregation of
    // those behind them waits as long; a push waits only when the backpressure bound is
    // reached). Returns nullopt then, and the report comes
    // from finished_install() once every shard is across. With one thread, a plugin in the
    // host's process with ARB_CAP_STATE on both generations (of one event schema) is handed
    // over by a fork instead (SnapshotHandover): the stream is held for the fork, and the
    // report comes from finished_install() once the new instance has caught up. Any other
    // install is made whole at once, as install_plugin does, and its report is returned
    // here. On several threads, a shard whose carry would hold its matches longer than a
    // fork (forks_shard) is forked the same way on its lane instead: its matches are held
    // for the fork, not for a save and restore that grow with them.
    // Meanwhile the host is read and pushed to as usual; what changes its plugins (an
    // install, a reload, a config change, close) first waits for the shards left or the
    // handovers, and end_match for the shard steps running.
    std::optional<ReloadReport> begin_install(PluginSlot fresh, PluginSlot* retired = nullptr);
    // Whether begin_install forks a shard whose open matches hold `shard_players` of the
    // `all_players` in open matches, rather than carry it: when the carry, which grows with
    // the shard, would hold its matches longer than the fork, which grows with the whole
    // host (it copies the page tables of everything mapped) and slows every shard while the
    // copy saves. The figures are the reference plugin's on 2 cores (docs/performance.md,
    // "Forked shards"): a carry about 2 us a player, a fork about 1 ms and 0.3 us a player
    // the host tracks. With set_fork_shard_players, a shard forks at that many players
    // instead, whatever the rest (tests set 1; an embedder whose plugins keep much more or
    // much less per player may set its own).
    bool forks_shard(size_t shard_players, size_t all_players) const {
        if (fork_shard_players_ > 0) return shard_players >= fork_shard_players_;
        return shard_players * kCarryNsPerPlayer > kForkNs + all_players * kForkNsPerPlayer;
    }
    static constexpr size_t kCarryNsPerPlayer = 2000;
    static constexpr size_t kForkNs = 1'000'000;
    static constexpr size_t kForkNsPerPlayer = 300;
    void set_fork_shard_players(size_t players) {
        fork_shard_players_ = players;
        update_fork_hint();
    }
    // A staged install's report once its last shard is across, else nullopt; the replaced
    // generation goes to `retired` (to destroy off the event path), or is released here.
    // Cheap when nothing is under way: a server asks after each batch.
    std::optional<ReloadReport> finished_install(PluginSlot* retired = nullptr);
    // A staged install is under way, or has ended and its report waits to be taken.
    bool installing() const { return staged_ != nullptr || !installs_done_.empty(); }
    // Destroys an old generation and reports whether its library left memory (it warns
    // in the log when not).
    static bool release_retired(PluginSlot retired);
    // Applies a changed server_config.toml the same way: aggregation and sinks at once; a
    // plugin added, removed, reweighted, reconfigured (through configure when it has the
    // capability, else by a reload with its state) or pointed at a new library, or moved
    // into or out of a child process (a new isolation). All or nothing: every fresh
    // generation and the new security-event log are made first, and one that fails (or a
    // table a plugin refuses, which takes back the tables others took) refuses the whole
    // config, with the running one left as it was; the reports then name what failed. A
    // plugin refused before under the same table does not hold the rest back. One report
    // per plugin touched.
    //
    // A server keeps the slow half off the event path, as for a reload: it asks
    // plugins_to_load (from running_plugins(), taken on the event thread) which plugins
    // the change must load afresh, makes them with prepare_plugin on another thread, and
    // passes them here as `prepared`; a plugin that must be loaded and has no prepared slot
    // made from its current library, table and baseline is loaded here. Prepared slots
    // left unused stay in `prepared`. With `retired`, the generations replaced or removed
    // go there, to be destroyed off the event path with release_retired; without, here.
    std::vector<ReloadReport> apply_config(ServerConfig config,
                                           std::vector<PluginSlot>* prepared = nullptr,
                                           std::vector<PluginSlot>* retired = nullptr);
    // A plugin as it runs, as much as deciding what a config change must load needs.
    struct RunningPlugin {
        PluginSettings settings;
        bool active = false;
        bool can_reconfigure = false;  // ARB_CAP_RECONFIGURE: a new table needs no reload
    };
    std::vector<RunningPlugin> running_plugins() const;
    // The plugins apply_config(next) would load afresh, given the plugins as they run:
    // those added, and those whose library changed or whose table or baseline changed
    // without the capability to take it live (or that are not running). Pure: any thread.
    static std::vector<PluginSettings> plugins_to_load(const std::vector<RunningPlugin>& running,
                                                       const ServerConfig& next);

    std::vector<Assessment> assessments() const;
    std::optional<Assessment> assessment(const PlayerKey& player) const;
    std::vector<Assessment> match_assessments(const std::string& relay_id, uint64_t match_id) const;
    // An ended match's players leave the host (a long-running server calls this once their
    // final assessments are out; replay keeps everything to print at the end). Ignored for
    // a match still open. The ledger keeps its own bounded memory of ended matches, so a
    // duplicate of a forgotten match's batches is still refused.
    void forget_match(const std::string& relay_id, uint64_t match_id);
    // Players the aggregator holds: those of the matches in play (and, without
    // forget_match, of every match seen).
    size_t tracked_players() const {
        catch_up();
        return aggregator_.players();
    }
    const std::vector<PluginSlot>& plugins() const {
        catch_up();
        return dispatcher_.slots();
    }
    // The refusals among plugins(), one message each.
    std::vector<std::string> plugin_errors() const;
    // Why the config must not be used as loaded: some of its plugins were refused, and
    // [host] partial_start does not allow running without them. nullopt when it may run.
    // A config is taken whole or not at all, at start as on a change (apply_config): a host
    // that ran without a plugin the operator named would report its checks' players Clear.
    std::optional<std::string> refused_at_start() const;
    const HostCounters& counters() const {
        catch_up();
        return counters_;
    }
    Metrics& metrics() {
        catch_up();
        return metrics_;
    }
    const ServerConfig& config() const { return config_; }
    // Records the store could not take and lost ([store] max_queued; 0 without a store).
    uint64_t store_records_lost() const;
    // A sink hears what is taken in from now on: the batches pushed before it are taken in
    // first (to the sinks there were), as with one thread.
    void add_sink(std::shared_ptr<Sink> sink) {
        catch_up();
        sinks_.push_back(std::move(sink));
    }
    void remove_sink(const std::shared_ptr<Sink>& sink) {
        catch_up();
        sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), sink), sinks_.end());
    }

  private:
    // A match that has had batches and no end yet.
    struct OpenMatch {
        int64_t last_relay_time_us = 0;  // of its last batch
        // Players already known to the aggregator: the relay time of each one's first
        // event, and its account (what the sinks record with a signal).
        struct Player {
            int64_t first_seen_us = 0;
            std::string account;
        };
        std::unordered_map<uint32_t, Player> players;
        // One bit per player id already in `players`, for ids below kKnownBitsLimit: most
        // events come from a known player, and a bit test stays in cache where a lookup in
        // a map of 100,000 players does not (docs/performance.md, "Players"). The limit
        // bounds the bitmap at 16 KiB a match, whatever ids a relay sends (one event of
        // player 4,000,000 must not cost half a megabyte); higher ids use the map.
        static constexpr uint32_t kKnownBitsLimit = 1u << 17;
        std::vector<uint64_t> known_bits;
        bool known(uint32_t player) const {
            if (player >= kKnownBitsLimit) return players.count(player) > 0;
            const size_t word = player / 64;
            return word < known_bits.size() && (known_bits[word] >> (player % 64)) & 1u;
        }
        void mark_known(uint32_t player) {
            if (player >= kKnownBitsLimit) return;
            const size_t word = player / 64;
            if (word >= known_bits.size()) known_bits.resize(word + 1, 0);
            known_bits[word] |= uint64_t{1} << (player % 64);
        }
    };
    void register_players(const VerifiedBatch& batch, OpenMatch& match);
    // A batch past ingest and the ledger, with the batch the host wrote for the gap before
    // it: dispatched here with one thread, handed to the workers with several.
    void dispatch_admitted(VerifiedBatch batch, std::optional<VerifiedBatch> lost,
                           std::optional<std::vector<LostStretch>> lost_after = std::nullopt);
    // What the plugins said of a batch, taken in: the gap's signals, the batch's, and (when
    // it ends its match) the final ones, already made on a worker, or made here if nullopt.
    void take_in(const VerifiedBatch& batch, std::vector<SignalRecord> lost_signals,
                 std::vector<SignalRecord> signals,
                 std::optional<std::vector<SignalRecord>> end_signals,
                 std::optional<std::vector<LostStretch>> lost_after);
    // Calls a sink; what it throws is kept (the first of it) and passed on once the batch
    // is wholly taken in, so that one sink's failure costs no other sink, no signal and no
    // match end (pass_on_sink_failure).
    template <typename Call>
    void call_sink(Call&& call);
    void pass_on_sink_failure();
    // Changing the host from inside a sink while batches are taken in would change it
    // under the workers: refused (throws std::logic_error naming `what`).
    void refuse_inside_take_in(const char* what) const;
    // Takes in the workers' finished batches, in push order: those done (Wait::none), at
    // least the oldest, or all.
    void take_finished(ParallelDispatch::Wait wait);
    // Every batch pushed is taken in before the host is read or changed. Const because
    // readers are; the host is never a const object, and nothing is taken in while a
    // batch is being taken in (a sink reading the host from inside sees it as of then).
    void catch_up() const;
    // catch_up(), returning how long it waited (us): part of a reload's pause.
    double catch_up_timed();
    // Ends a match: `complete` when by its own MatchEnd, not because its stream stopped.
    // `end_signals`: the plugins' on_match_end answers when a worker made them already.
    void finish_match(const std::string& relay_id, uint64_t match_id, bool complete,
                      std::optional<std::vector<SignalRecord>> end_signals = std::nullopt);
    // Puts a freshly loaded slot in place of the old one, carrying state across.
    ReloadReport swap_in(PluginSlot& slot, PluginSlot&& fresh, PluginSlot* retired = nullptr);
    // A staged install under way (begin_install): the new generation, whose sharded
    // instance ends up holding the old shards, what each shard's step did, and the report
    // as far as it is known at the start (the plugin, the versions).
    struct StagedInstall {
        PluginSlot fresh;
        std::vector<ShardStep> steps;  // written on the lanes; read once none is pending
        // With one thread: the handover that stands in the plugin's slot (owned there),
        // and `fresh` holds the new library without its instance, which is in it.
        SnapshotHandover* handover = nullptr;
        // On several threads: the shards forked (ShardStep::forked) have had their ends
        // posted, once their handovers were done.
        bool handovers_ended = false;
        ReloadReport report;
        std::chrono::steady_clock::time_point started;
    };
    // Waits for a staged install's shards left and ends it (its report is kept for
    // finished_install): before anything that changes the plugins or calls them here.
    void settle_install();
    // Whether every shard of a staged install is across: its steps have run and the shards
    // it forked have ended their handovers (posted as steps of their own once done). With
    // `wait`, waits for all that, else says whether it is so yet.
    bool shards_across(bool wait);
    // Ends a staged install whose steps have all run: the slot takes the new library and
    // its report is made.
    void end_staged_install();
    // Ends a handover that is done: the new instance and library take the slot, or, when
    // the forked copy failed, the install is made whole.
    void end_handover();
    // The end of both: the report kept for finished_install (with room already made for
    // it), with the generation replaced, and nothing under way any more.
    void staged_done(ReloadReport report, PluginSlot replaced);
    void open_sinks(std::shared_ptr<LedgerKeepingSink> ledger_sink);
    void aggregate(std::vector<SignalRecord> signals);
    // Tier 6's signals ([correlation]) into the aggregation. Not to the sinks' on_signal:
    // they restate what other servers already reported, and the store must not count
    // them as flags of this server.
    void aggregate_correlation(std::vector<SignalRecord> signals);
    // The open match a signal belongs to (or the one being ended), or nullptr.
    const OpenMatch* match_of(const PlayerKey& player) const;
    // The lost stretches of its match, added to an assessment from the aggregator.
    Assessment with_lost_input(Assessment assessment) const;

    ServerConfig config_;
    Metrics metrics_;
    PluginCopies plugin_copies_;
    Dispatcher dispatcher_;
    // Before parallel_, whose workers run its steps: they stop (after the last) first.
    std::unique_ptr<StagedInstall> staged_;
    // Staged installs ended and not yet collected by finished_install, with what they
    // replaced.
    std::vector<std::pair<ReloadReport, PluginSlot>> installs_done_;
    uint32_t threads_ = 1;
    uint32_t shards_ = 1;
    size_t fork_shard_players_ = 0;  // 0: forks_shard's rule
    // With threads > 1; after dispatcher_, whose slots its workers call, so it stops first.
    std::unique_ptr<ParallelDispatch> parallel_;
    bool taking_in_ = false;  // see catch_up
    std::exception_ptr sink_failure_;  // see call_sink
    // Each match's lost stretches as of the last batch taken in (lost_after), so that an
    // assessment says what one thread would have said at that batch. Matches with none
    // have no entry.
    std::map<std::pair<std::string, uint64_t>, std::vector<LostStretch>> lost_seen_;
    Aggregator aggregator_;
    std::vector<std::shared_ptr<Sink>> sinks_;
    std::shared_ptr<SecurityEventLog> security_log_;
    std::shared_ptr<LedgerKeepingSink> ledger_sink_;  // with [store]: the ledger across restarts
    // Tells the store where the match stands in the ledger now (a batch delivered, its end).
    void remember_progress(const std::string& relay_id, uint64_t match_id);
    std::unique_ptr<CorrelationSource> correlation_;  // with [correlation] enabled
    std::chrono::steady_clock::time_point close_settle_deadline_;  // see finish_match
    std::map<std::pair<std::string, uint64_t>, OpenMatch> open_matches_;
    // The players of open_matches_ by shard, and in all (several threads only): what
    // begin_install weighs a fork against a carry by (forks_shard). Kept as players join
    // and matches end, on the thread that takes batches in.
    std::vector<size_t> shard_players_;
    size_t open_players_ = 0;
    void count_open_players(std::string_view relay_id, uint64_t match_id, size_t players,
                            bool joined) noexcept;
    void update_fork_hint() noexcept;
    // Whether a reload begun now would fork a shard: prepare_plugin, which may run on
    // another thread (serve's loader), trims the heap for such a fork only, since a
    // trimmed heap is memory the carried shards' save and restore fault back in.
    std::atomic<bool> a_shard_would_fork_{false};
    // The match being ended, while its plugins report their final signals.
    std::pair<std::pair<std::string, uint64_t>, const OpenMatch*> ending_match_{{}, nullptr};
    SequenceLedger ledger_;
    HostCounters counters_;
    bool closed_ = false;
};

}  // namespace arbiter::host
