// Tier 6 as evidence: what other servers reported of the accounts in play here, read
// from the store and handed to the aggregation as signals of the source "correlation"
// ([correlation], docs/review.md).
//
// The event thread only hands over who joined and takes finished answers; a thread of its
// own, with a connection of its own, runs the queries, so a slow or absent database never
// holds the stream. A player is looked up when they join and every refresh_s while their
// match is open; a signal is given when a class's strongest flag elsewhere grows. At a
// match's end the host waits (settle_ms at most) for lookups not yet answered: aggregation
// only ever grows, so the final assessment is then the same whenever the answers came.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/config.hpp"
#include "arbiter/host/sinks.hpp"

namespace arbiter::host {

namespace store {
class Database;
}

class Correlator : public CorrelationSource {
  public:
    // The source name its signals carry.
    static constexpr const char* kSource = "correlation";

    // Opens its own connection to the store; throws std::runtime_error naming the store.
    Correlator(const StoreSettings& store, const CorrelationSettings& settings,
               std::string server_id);
    ~Correlator() override;
    Correlator(const Correlator&) = delete;
    Correlator& operator=(const Correlator&) = delete;

    // A player with an account joined (or gave their account): look them up.
    void watch(const PlayerKey& player, const std::string& account) override;
    // Signals answered since the last call; cheap when there are none.
    std::vector<SignalRecord> take() override;
    // At a match's end: waits until each of its players was looked up at least once since
    // they were watched (at most `timeout`), then stops looking them up. False when it gave
    // up waiting (the log says so).
    bool settle(const std::string& relay_id, uint64_t match_id,
                std::chrono::milliseconds timeout) override;

    struct Counters {
        uint64_t lookups = 0;   // queries run
        uint64_t failures = 0;  // queries the store failed (logged, retried at the next refresh)
        uint64_t signals = 0;   // signals given
    };
    Counters counters() const;

  private:
    struct Watched {
        std::string account;
        bool looked_up = false;              // at least once since watched
        std::map<ModelClass, double> given;  // the strongest score given per class
    };
    void run();
    // The signals one lookup gives: only classes whose strongest flag elsewhere is above
    // what `given` holds, which it raises. Runs without the lock, on copies.
    std::vector<SignalRecord> look_up(const PlayerKey& player, const std::string& account,
                                      std::map<ModelClass, double>& given);

    CorrelationSettings settings_;
    std::string server_id_;
    std::unique_ptr<store::Database> db_;

    mutable std::mutex mutex_;
    std::condition_variable wake_, looked_up_;
    std::map<PlayerKey, Watched> watched_;
    std::deque<PlayerKey> fresh_;  // to look up before the next refresh
    std::vector<SignalRecord> ready_;
    std::atomic<bool> has_ready_{false};
    bool stopping_ = false;
    Counters counters_;
    std::thread thread_;
};

}  // namespace arbiter::host
