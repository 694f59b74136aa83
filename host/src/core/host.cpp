#include "arbiter/host/host.hpp"

#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/input_lost.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "core/admission.hpp"

#include <arbiter/events_generated.h>

namespace arbiter::host {

Host::Host(ServerConfig config, HostAttachments attachments)
    : config_(std::move(config)),
      plugin_copies_(config_.host.work_dir),
      dispatcher_(metrics_),
      threads_(std::max(1u, config_.host.threads.value_or(HostSettings::default_threads()))),
      shards_(shards_for_threads(threads_)),
      aggregator_(config_.aggregation) {
    for (const auto& settings : config_.plugins) {
        if (!settings.enabled) {
            spdlog::info("plugin '{}': disabled in {}", settings.name, settings.position.str());
            continue;
        }
        dispatcher_.add(
            load_plugin_slot(settings, plugin_copies_, metrics_, config_.host.plugin_runner, shards_));
    }
    if (threads_ > 1) {
        parallel_ = std::make_unique<ParallelDispatch>(dispatcher_, shards_, threads_);
        shard_players_.assign(shards_, 0);
    }
    open_sinks(std::move(attachments.ledger_sink));
    if (config_.correlation.enabled) {
        if (!attachments.correlation)
            throw std::runtime_error(
                "[correlation] is enabled, but this program has no store to correlate "
                "with: the `arbiter` command has one, the embedding library does not");
        correlation_ = std::move(attachments.correlation);
    }
}

void Host::open_sinks(std::shared_ptr<LedgerKeepingSink> ledger_sink) {
    if (config_.store.enabled()) {
        if (!ledger_sink)
            throw std::runtime_error(
                "[store] is set, but this program has no store: the `arbiter` command has "
                "one, the embedding library does not");
        ledger_sink_ = std::move(ledger_sink);
        ledger_.restore(ledger_sink_->take_recorded_progress());
        add_sink(ledger_sink_);
    }
    if (config_.sinks.security_log.empty()) return;
    security_log_ = std::make_shared<SecurityEventLog>(
        config_.sinks.security_log, config_.host.server_id, config_.sinks.report_threshold,
        config_.aggregation.review_threshold);
    add_sink(security_log_);
}

void Host::remember_progress(const std::string& relay_id, uint64_t match_id) {
    if (!ledger_sink_) return;
    if (auto progress = ledger_.progress(relay_id, match_id)) ledger_sink_->on_progress(*progress);
}

uint64_t Host::store_records_lost() const {
    return ledger_sink_ ? ledger_sink_->records_lost() : 0;
}

Host::~Host() {
    try {
        close();
    } catch (...) {
        // close() logs its own failures; nothing may leave a destructor.
    }
}

std::optional<std::string> Host::push(std::span<const uint8_t> bytes) {
    return push_batch(bytes).problem;
}

Host::PushResult Host::push_batch(
    std::span<const uint8_t> bytes, std::string_view bound_relay,
    const std::function<void(const std::string& relay_id, uint64_t match_id)>& admitted_to) {
    refuse_inside_take_in("push a batch");
    PushResult result;
    Admission admission = admit_batch(bytes, config_.host.max_batch_bytes, ledger_, bound_relay);
    if (admission.problem) {
        ++counters_.refused_batches;
        metrics_.add("host.batches_refused", 1);
        result.problem = std::move(admission.problem);
        return result;
    }
    VerifiedBatch& batch = admission.batch;
    const SequenceLedger::Verdict& admitted = admission.verdict;
    if (admitted.reused_id)
        spdlog::warn("match {}/{}: begins again after its end, with other events: a new match "
                     "under the same id (its players' assessments join the earlier match's)",
                     escape_for_message(batch.relay_id, 80), batch.match_id);
    if (admitted.gap) {
        ++counters_.lost_stretches;
        metrics_.add("host.lost_stretches", 1);
        spdlog::warn("match {}/{}: input lost: {} never arrived; the match's assessments say so",
                     escape_for_message(batch.relay_id, 80), batch.match_id,
                     admitted.gap->describe());
    }
    remember_progress(batch.relay_id, batch.match_id);
    std::optional<std::vector<LostStretch>> lost_after;
    if (admitted.gap || admitted.reused_id || batch.ends_match)
        lost_after = ledger_.lost(batch.relay_id, batch.match_id);
    result.relay_id = batch.relay_id;
    result.match_id = batch.match_id;
    result.events = batch.event_count;
    result.ended_match = batch.ends_match;
    if (admitted_to) admitted_to(result.relay_id, result.match_id);
    try {
        dispatch_admitted(std::move(batch), std::move(admission.lost), std::move(lost_after));
    } catch (const std::exception& error) {
        // The batch was admitted and dispatched; what failed was taking batches in (a sink,
        // with threads maybe on an earlier batch). The caller hears it beside the batch's
        // acceptance, never as the batch's refusal.
        result.sink_failure = error.what();
        spdlog::error("taking in batches: {}", error.what());
    }
    return result;
}

std::vector<std::pair<std::string, uint64_t>> Host::open_matches() const {
    catch_up();
    std::vector<std::pair<std::string, uint64_t>> matches;
    for (const auto& [key, match] : open_matches_)
        matches.push_back(key);
    return matches;
}

void Host::dispatch_admitted(VerifiedBatch batch, std::optional<VerifiedBatch> lost,
                             std::optional<std::vector<LostStretch>> lost_after) {
    if (!parallel_) {
        std::vector<SignalRecord> lost_signals;
        if (lost) lost_signals = dispatcher_.dispatch(*lost, kInputLostSchemaMinor);
        std::vector<SignalRecord> signals = dispatcher_.dispatch(batch);
        take_in(batch, std::move(lost_signals), std::move(signals), std::nullopt,
                std::move(lost_after));
        return;
    }
    // Backpressure: the batches in flight hold their bytes until taken in. A sink that
    // throws while older batches are taken in must not cost this one its dispatch: the
    // ledger has admitted it. (Taking in makes room even when a sink throws.)
    std::exception_ptr failure;
    try {
        if (parallel_->full()) take_finished(ParallelDispatch::Wait::room);
    } catch (...) {
        failure = std::current_exception();
    }
    parallel_->submit(std::move(batch), std::move(lost), std::move(lost_after));
    try {
        take_finished(ParallelDispatch::Wait::none);
    } catch (...) {
        if (!failure) failure = std::current_exception();
    }
    if (failure) std::rethrow_exception(failure);
}

void Host::take_in(const VerifiedBatch& batch, std::vector<SignalRecord> lost_signals,
                   std::vector<SignalRecord> signals,
                   std::optional<std::vector<SignalRecord>> end_signals,
                   std::optional<std::vector<LostStretch>> lost_after) {
    if (lost_after) {
        const std::pair<std::string, uint64_t> key{batch.relay_id, batch.match_id};
        if (lost_after->empty())
            lost_seen_.erase(key);
        else
            lost_seen_[key] = std::move(*lost_after);
    }
    aggregate(std::move(lost_signals));
    ++counters_.batches;
    counters_.events += batch.event_count;
    OpenMatch& match = open_matches_[{batch.relay_id, batch.match_id}];
    match.last_relay_time_us = batch.last_relay_time_us;

    register_players(batch, match);
    if (correlation_) aggregate_correlation(correlation_->take());
    aggregate(std::move(signals));
    if (batch.ends_match) finish_match(batch.relay_id, batch.match_id, true, std::move(end_signals));
    pass_on_sink_failure();
}

template <typename Call>
void Host::call_sink(Call&& call) {
    try {
        call();
    } catch (...) {
        if (!sink_failure_) sink_failure_ = std::current_exception();
    }
}

void Host::pass_on_sink_failure() {
    if (!sink_failure_) return;
    std::exception_ptr failure = sink_failure_;
    sink_failure_ = nullptr;
    std::rethrow_exception(failure);
}

void Host::refuse_inside_take_in(const char* what) const {
    if (parallel_ && taking_in_)
        throw std::logic_error(std::string("cannot ") + what +
                               " from inside a sink while the host takes batches in: the "
                               "workers may be inside the plugins");
}

void Host::take_finished(ParallelDispatch::Wait wait) {
    if (!parallel_ || taking_in_) return;
    taking_in_ = true;
    struct Done {
        bool& flag;
        ~Done() { flag = false; }
    } done{taking_in_};
    // Every finished batch is taken in even when one of them throws (a sink whose disk is
    // full): the first failure is passed on after the rest.
    std::exception_ptr failure;
    for (FinishedBatch& work : parallel_->take_finished(wait)) {
        try {
            const VerifiedBatch& batch = work.batch;
            std::vector<SignalRecord> lost_signals;
            if (work.lost)
                lost_signals = dispatcher_.gather(work.lost_calls, work.lost->relay_id,
                                                  work.lost->match_id,
                                                  work.lost->last_relay_time_us, "on_batch");
            std::vector<SignalRecord> signals = dispatcher_.gather(
                work.batch_calls, batch.relay_id, batch.match_id, batch.last_relay_time_us,
                "on_batch");
            std::optional<std::vector<SignalRecord>> end_signals;
            if (batch.ends_match)
                end_signals = dispatcher_.gather(work.end_calls, batch.relay_id, batch.match_id,
                                                 batch.last_relay_time_us, "on_match_end");
            take_in(batch, std::move(lost_signals), std::move(signals), std::move(end_signals),
                    std::move(work.lost_after));
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
}

void Host::catch_up() const {
    // Readers are const; the host itself never is (see the header).
    try {
        const_cast<Host*>(this)->take_finished(ParallelDispatch::Wait::all);
    } catch (const std::exception& error) {
        // A sink failed on a batch pushed earlier; every batch was taken in all the same.
        // The reader asked for the host's state, not the sink's: it gets it, the log
        // gets the failure (flush() and push() pass such failures on).
        spdlog::error("taking in the batches pushed so far: {}", error.what());
    }
}

void Host::flush() {
    take_finished(ParallelDispatch::Wait::all);
}

void Host::register_players(const VerifiedBatch& batch, OpenMatch& match) {
    const auto* events = batch.root().events();
    if (!events) return;
    // Each player added is counted, even when a sink or the correlator throws midway:
    // finish_match takes away every player of the match.
    size_t joined = 0;
    struct CountJoined {
        Host& host;
        const VerifiedBatch& batch;
        const size_t& joined;
        ~CountJoined() {
            if (joined > 0) host.count_open_players(batch.relay_id, batch.match_id, joined, true);
        }
    } count_joined{*this, batch, joined};
    for (const fb::Event* event : *events) {
        const uint32_t player = event->player();
        if (player == 0) continue;
        // Only a new player, or a join (which may carry the account), reaches the
        // aggregator: a lookup by relay, match and player for every event is most of the
        // host's own cost per event.
        const auto* join = event->body_as_PlayerJoin();
        if (!join && match.known(player)) continue;
        const auto [seen, first] = match.players.try_emplace(player);
        if (!join && !first) continue;
        if (first) {
            seen->second.first_seen_us = event->relay_time_us();
            match.mark_known(player);
            ++joined;
        }
        std::string account = join && join->account_id() ? join->account_id()->str() : "";
        if (!account.empty()) seen->second.account = account;
        aggregator_.observe_player({batch.relay_id, batch.match_id, player}, account);
        if (correlation_ && !account.empty())
            correlation_->watch({batch.relay_id, batch.match_id, player}, account);
    }
}

void Host::count_open_players(std::string_view relay_id, uint64_t match_id, size_t players,
                              bool joined) noexcept {
    if (shard_players_.empty()) return;  // one thread: no shards
    size_t& in_shard = shard_players_[shard_of(relay_id, match_id, shards_)];
    in_shard = joined ? in_shard + players : in_shard - std::min(in_shard, players);
    open_players_ =
        joined ? open_players_ + players : open_players_ - std::min(open_players_, players);
    update_fork_hint();
}

void Host::update_fork_hint() noexcept {
    bool forks = false;
    for (const size_t shard : shard_players_)
        forks = forks || forks_shard(shard, open_players_);
    a_shard_would_fork_.store(forks, std::memory_order_relaxed);
}

const Host::OpenMatch* Host::match_of(const PlayerKey& player) const {
    const std::pair<std::string, uint64_t> key{player.relay_id, player.match_id};
    auto open = open_matches_.find(key);
    return open != open_matches_.end()                          ? &open->second
           : ending_match_.second && ending_match_.first == key ? ending_match_.second
                                                                : nullptr;
}

void Host::aggregate_correlation(std::vector<SignalRecord> signals) {
    if (signals.empty()) return;
    const std::vector<std::shared_ptr<Sink>> sinks = sinks_;
    for (SignalRecord& signal : signals) {
        const OpenMatch* match = match_of(signal.player);
        if (!match) continue;  // the match ended before the store answered
        // Stamped with the player's first relay time, not the batch at which the answer
        // happened to arrive: the assessment then does not depend on the store's timing.
        const auto player = match->players.find(signal.player.player);
        signal.reported_at_us = player != match->players.end() ? player->second.first_seen_us
                                                               : match->last_relay_time_us;
        signal.player_first_seen_us = signal.reported_at_us;
        ++counters_.correlation_signals;
        if (auto raised = aggregator_.add(signal)) {
            auto assessment = this->assessment(signal.player);
            spdlog::info("player {}/{}/{} reaches {} with what other servers reported",
                         signal.player.relay_id, signal.player.match_id, signal.player.player,
                         to_string(*raised));
            for (auto& sink : sinks)
                call_sink([&] { sink->on_action(*assessment); });
        }
    }
}

void Host::aggregate(std::vector<SignalRecord> signals) {
    // Most batches bring no signal: nothing to copy or call on the hot path.
    if (signals.empty()) return;
    // A signal about a player the match never had is dropped: a plugin reports on players
    // the relay sent, and one that names others (twenty thousand of them in one call)
    // would make an assessment and a store row of each.
    std::erase_if(signals, [&](SignalRecord& signal) {
        if (const OpenMatch* match = match_of(signal.player)) {
            const auto player = match->players.find(signal.player.player);
            if (player != match->players.end()) {
                signal.account = player->second.account;
                signal.player_first_seen_us = player->second.first_seen_us;
                return false;
            }
        }
        if (const PluginSlot* slot = dispatcher_.find(signal.plugin); slot && slot->bounds)
            slot->bounds->count_signal_about_a_stranger();
        return true;
    });
    // A sink may add or remove sinks from inside its call (an embedding program changing
    // its callback from the callback): each call goes over a copy, which also keeps the
    // sink being called alive.
    const std::vector<std::shared_ptr<Sink>> sinks = sinks_;
    for (const auto& signal : signals) {
        ++counters_.signals;
        for (auto& sink : sinks)
            call_sink([&] { sink->on_signal(signal); });
        if (auto raised = aggregator_.add(signal)) {
            auto assessment = this->assessment(signal.player);
            spdlog::info("player {}/{}/{} reaches {}", signal.player.relay_id,
                         signal.player.match_id, signal.player.player, to_string(*raised));
            for (auto& sink : sinks)
                call_sink([&] { sink->on_action(*assessment); });
        }
    }
}

std::vector<Assessment> Host::assessments() const {
    catch_up();
    std::vector<Assessment> all = aggregator_.assessments();
    for (auto& assessment : all)
        assessment = with_lost_input(std::move(assessment));
    return all;
}

std::optional<Assessment> Host::assessment(const PlayerKey& player) const {
    catch_up();
    auto found = aggregator_.assessment(player);
    if (found) found = with_lost_input(std::move(*found));
    return found;
}

std::vector<Assessment> Host::match_assessments(const std::string& relay_id, uint64_t match_id) const {
    catch_up();
    std::vector<Assessment> players = aggregator_.match_assessments(relay_id, match_id);
    for (auto& assessment : players)
        assessment = with_lost_input(std::move(assessment));
    return players;
}

void Host::forget_match(const std::string& relay_id, uint64_t match_id) {
    refuse_inside_take_in("forget a match");
    catch_up();
    if (open_matches_.count({relay_id, match_id})) return;
    aggregator_.forget_match(relay_id, match_id);
    lost_seen_.erase({relay_id, match_id});
}

Assessment Host::with_lost_input(Assessment assessment) const {
    const auto lost = lost_seen_.find({assessment.player.relay_id, assessment.player.match_id});
    assessment.lost_input.clear();
    if (lost != lost_seen_.end()) assessment.lost_input = lost->second;
    return assessment;
}

void Host::end_match(const std::string& relay_id, uint64_t match_id) {
    refuse_inside_take_in("end a match");
    // The plugins' on_match_end is called from here, not on a lane: a staged install's
    // shard steps running end first. A handover (one thread, or a forked shard) takes the
    // call as it takes a batch, so nothing waits for one.
    if (staged_ && !staged_->handover) parallel_->wait_for_steps();
    catch_up();
    finish_match(relay_id, match_id, false);
    pass_on_sink_failure();
}

void Host::input_damaged(const std::string& where) {
    ledger_.damage(where);
}

void Host::finish_match(const std::string& relay_id, uint64_t match_id, bool complete,
                        std::optional<std::vector<SignalRecord>> end_signals) {
    auto it = open_matches_.find({relay_id, match_id});
    if (it == open_matches_.end()) return;
    int64_t last_relay_time_us = it->second.last_relay_time_us;
    // Its players stay known to the sinks for the signals of its end.
    const OpenMatch ending = std::move(it->second);
    open_matches_.erase(it);
    count_open_players(relay_id, match_id, ending.players.size(), false);
    if (!complete) {  // complete: the ledger was told at push
        ledger_.match_ended(relay_id, match_id, false);
        remember_progress(relay_id, match_id);
        // An end without MatchEnd after damaged input adds a stretch through the end.
        const auto& lost = ledger_.lost(relay_id, match_id);
        if (!lost.empty()) lost_seen_[{relay_id, match_id}] = lost;
    }
    ++counters_.matches_ended;
    ending_match_ = {{relay_id, match_id}, &ending};
    // Cleared however aggregate leaves (a sink that throws): `ending` dies with this call.
    struct Clear {
        decltype(ending_match_)& slot;
        ~Clear() { slot = {}; }
    } clear{ending_match_};
    aggregate(end_signals ? std::move(*end_signals)
                          : dispatcher_.end_match(relay_id, match_id, last_relay_time_us));
    if (correlation_) {
        // The final assessment waits for the store's answers about this match's players,
        // so that it does not depend on when they came.
        // While closing, every match still open shares one wait rather than each its own.
        auto wait = std::chrono::milliseconds(config_.correlation.settle_ms);
        if (closed_)
            wait = std::max(std::chrono::milliseconds(0),
                            std::chrono::duration_cast<std::chrono::milliseconds>(
                                close_settle_deadline_ - std::chrono::steady_clock::now()));
        correlation_->settle(relay_id, match_id, wait);
        aggregate_correlation(correlation_->take());
    }
    if (sinks_.empty()) return;
    const std::vector<Assessment> players = match_assessments(relay_id, match_id);
    const std::vector<std::shared_ptr<Sink>> sinks = sinks_;
    for (auto& sink : sinks)
        call_sink([&] { sink->on_match_end(relay_id, match_id, complete, players); });
}

bool Host::close() {
    refuse_inside_take_in("close the host");
    settle_install();
    if (closed_) return true;
    closed_ = true;
    // Set before the last batches are taken in: a match they end waits for the store's
    // answers like every match still open, within one shared wait.
    close_settle_deadline_ =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.correlation.settle_ms);
    bool caught_up = true;
    try {
        flush();
    } catch (const std::exception& error) {
        caught_up = false;
        spdlog::error("closing the host: taking in the last batches: {}", error.what());
    }
    // Every step is tried whatever the one before it threw (a sink whose disk is full, say):
    // a server that is stopping must stop, and every match it can end must end.
    bool clean = true;
    auto attempt = [&](const std::string& what, auto&& step) {
        try {
            step();
        } catch (const std::exception& error) {
            clean = false;
            spdlog::error("closing the host: {}: {}", what, error.what());
        }
    };
    while (!open_matches_.empty()) {
        // Copies, not structured bindings: clang 14 (the fuzz preset's) cannot capture those.
        const std::string relay = open_matches_.begin()->first.first;
        const uint64_t match = open_matches_.begin()->first.second;
        attempt(fmt::format("ending match {}/{}", escape_for_message(relay, 80), match),
                [&] {
                    finish_match(relay, match, false);
                    pass_on_sink_failure();
                });
        open_matches_.erase({relay, match});  // finish_match erases it first; this is for a throw before
    }
    const std::vector<std::shared_ptr<Sink>> sinks = sinks_;
    for (auto& sink : sinks)
        attempt("flushing a sink", [&] { sink->flush(); });
    return clean && caught_up;
}

std::vector<std::string> Host::plugin_errors() const {
    catch_up();
    std::vector<std::string> errors;
    for (const auto& slot : dispatcher_.slots())
        if (!slot.error.empty()) errors.push_back(slot.error);
    return errors;
}

std::optional<std::string> Host::refused_at_start() const {
    if (config_.host.partial_start) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& slot : plugins())
        if (!slot.error.empty()) names.push_back("'" + slot.settings.name + "'");
    if (names.empty()) return std::nullopt;
    std::string listed;
    for (const auto& name : names)
        listed += (listed.empty() ? "" : ", ") + name;
    const char* them = names.size() == 1 ? "it" : "them";
    return fmt::format(
        "{0}: not used: {1} {2} cannot be loaded; a config is taken whole or not at all, at "
        "start as on a reload, so that no plugin it names is left out unseen: mend {3} "
        "(`arbiter plugins {0}` says why), or set [host] partial_start = true to run without {3}",
        config_.file.string(), names.size() == 1 ? "plugin" : "plugins", listed, them);
}

}  // namespace arbiter::host
