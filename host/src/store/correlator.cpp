#include "store/correlator.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"

namespace arbiter::host {

using nlohmann::json;

namespace {

// Rows read per lookup: the strongest flags first, far more than any one account has in
// a window unless something floods the store, which must not stall the lookups.
constexpr int kMaxRows = 1000;

}  // namespace

Correlator::Correlator(const StoreSettings& store, const CorrelationSettings& settings,
                       std::string server_id)
    : settings_(settings), server_id_(std::move(server_id)) {
    db_ = store::open_and_migrate(store);
    thread_ = std::thread([this] { run(); });
}

Correlator::~Correlator() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    looked_up_.notify_all();
    thread_.join();
}

void Correlator::watch(const PlayerKey& player, const std::string& account) {
    if (account.empty()) return;
    {
        std::lock_guard lock(mutex_);
        Watched& watched = watched_[player];
        if (watched.account == account && watched.looked_up) return;
        // Another account for the same player: what was given for the old one is no
        // measure for the new one. (Signals already given stay in the aggregation, as
        // every signal does.)
        if (watched.account != account) watched.given.clear();
        watched.account = account;
        watched.looked_up = false;
        fresh_.push_back(player);
    }
    wake_.notify_one();
}

std::vector<SignalRecord> Correlator::take() {
    if (!has_ready_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(mutex_);
    has_ready_.store(false, std::memory_order_relaxed);
    return std::exchange(ready_, {});
}

bool Correlator::settle(const std::string& relay_id, uint64_t match_id,
                        std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    const PlayerKey first{relay_id, match_id, 0};
    auto pending = [&] {
        for (auto it = watched_.lower_bound(first);
             it != watched_.end() && it->first.relay_id == relay_id &&
             it->first.match_id == match_id;
             ++it)
            if (!it->second.looked_up) return true;
        return false;
    };
    const bool settled =
        looked_up_.wait_for(lock, timeout, [&] { return stopping_ || !pending(); }) && !pending();
    if (!settled)
        spdlog::warn(
            "correlation: the store did not answer for every player of {}/{} within "
            "{} ms; the match ends without what it would have said",
            escape_for_message(relay_id, 64), match_id, timeout.count());
    for (auto it = watched_.lower_bound(first);
         it != watched_.end() && it->first.relay_id == relay_id && it->first.match_id == match_id;)
        it = watched_.erase(it);
    return settled;
}

Correlator::Counters Correlator::counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
}

void Correlator::run() {
    auto next_refresh =
        std::chrono::steady_clock::now() + std::chrono::seconds(settings_.refresh_s);
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        wake_.wait_until(lock, next_refresh, [&] { return stopping_ || !fresh_.empty(); });
        if (stopping_) break;
        // New players first; at a refresh, everyone in play.
        std::vector<PlayerKey> due(fresh_.begin(), fresh_.end());
        fresh_.clear();
        if (std::chrono::steady_clock::now() >= next_refresh) {
            for (const auto& [key, watched] : watched_)
                due.push_back(key);
            next_refresh =
                std::chrono::steady_clock::now() + std::chrono::seconds(settings_.refresh_s);
        }
        std::sort(due.begin(), due.end());
        due.erase(std::unique(due.begin(), due.end()), due.end());
        for (const PlayerKey& key : due) {
            auto found = watched_.find(key);
            if (found == watched_.end()) continue;  // its match ended meanwhile
            const std::string account = found->second.account;
            std::map<ModelClass, double> given = found->second.given;
            lock.unlock();
            std::vector<SignalRecord> signals;
            bool failed = false;
            try {
                signals = look_up(key, account, given);
            } catch (const std::exception& error) {
                failed = true;
                spdlog::warn(
                    "correlation: looking up '{}' in the store failed: {} (tried "
                    "again at the next refresh)",
                    escape_for_message(account, 64), error.what());
            }
            lock.lock();
            ++counters_.lookups;
            if (failed) ++counters_.failures;
            found = watched_.find(key);
            if (found == watched_.end() || found->second.account != account) continue;
            // A failed lookup counts as done for settle(): the match does not wait on a
            // store that is down; the next refresh tries again while the match is open.
            found->second.looked_up = true;
            found->second.given = std::move(given);
            if (!signals.empty()) {
                counters_.signals += signals.size();
                for (auto& signal : signals)
                    ready_.push_back(std::move(signal));
                has_ready_.store(true, std::memory_order_release);
            }
            looked_up_.notify_all();
        }
    }
}

std::vector<SignalRecord> Correlator::look_up(const PlayerKey& player, const std::string& account,
                                              std::map<ModelClass, double>& given) {
    // Flags of the account on other servers within the window that no reviewer dismissed
    // (unreviewed, or confirmed), strongest first. This source's own signals never reach
    // the store; they are left out all the same, so that servers cannot echo each other.
    auto rows = db_->prepare(fmt::format(
        "SELECT model_class, server_id, plugin, event_type, weighted_score, recorded_unix FROM "
        "security_events WHERE subject = ? AND server_id <> ? AND plugin <> ? AND "
        "recorded_unix >= ? AND (reviewed = 0 OR verdict = 'confirmed') ORDER BY "
        "weighted_score DESC, event_id LIMIT {}",
        kMaxRows));
    rows->bind(1, account_subject(account))
        .bind(2, server_id_)
        .bind(3, std::string_view(kSource))
        .bind(4, store::unix_now() - static_cast<int64_t>(settings_.window_days) * 86'400);
    struct Elsewhere {
        double strongest = 0;
        json strongest_flag;
        std::set<std::string> servers;
        uint64_t flags = 0;
    };
    std::map<ModelClass, Elsewhere> by_class;
    while (rows->step()) {
        const auto model_class = model_class_from_string(rows->text(0));
        if (!model_class) continue;
        Elsewhere& e = by_class[*model_class];
        ++e.flags;
        e.servers.insert(rows->text(1));
        const double weighted = rows->real(4);
        if (e.strongest_flag.is_null()) {
            e.strongest = weighted;
            e.strongest_flag = {{"server_id", rows->text(1)},
                                {"plugin", rows->text(2)},
                                {"event_type", rows->text(3)},
                                {"weighted_score", weighted},
                                {"recorded_unix", rows->integer(5)}};
        }
    }
    std::vector<SignalRecord> signals;
    for (const auto& [model_class, e] : by_class) {
        const double score = std::clamp(e.strongest, 0.0, 1.0);
        double& before = given[model_class];
        if (score <= before) continue;
        before = score;
        SignalRecord signal;
        signal.plugin = kSource;
        signal.code = fmt::format("elsewhere.{}", to_string(model_class));
        signal.model_class = settings_.model_class.value_or(model_class);
        signal.weight = settings_.weight;
        signal.player = player;
        signal.score = score;
        signal.confidence = 1.0;
        signal.account = account;
        signal.evidence_json = dump_json(
            {{"account", account},
             {"flags", e.flags},
             {"servers", json(std::vector<std::string>(e.servers.begin(), e.servers.end()))},
             {"strongest", e.strongest_flag},
             {"class_of_the_flags", to_string(model_class)},
             {"window_days", settings_.window_days}});
        signals.push_back(std::move(signal));
    }
    return signals;
}

}  // namespace arbiter::host
