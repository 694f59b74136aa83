// Sinks: where signals and assessments leave the host.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/sequence_ledger.hpp"

namespace arbiter::host {

class Sink {
  public:
    virtual ~Sink() = default;
    // Every signal the host accepted, in the order it was reported.
    virtual void on_signal(const SignalRecord& signal) { (void)signal; }
    // A player's action went up.
    virtual void on_action(const Assessment& assessment) { (void)assessment; }
    // A match ended (`complete`: by its own MatchEnd), with every player's final assessment.
    virtual void on_match_end(const std::string& relay_id, uint64_t match_id, bool complete,
                              const std::vector<Assessment>& players) {
        (void)relay_id, (void)match_id, (void)complete, (void)players;
    }
    virtual void flush() {}
};

// A sink that also keeps where each match stands in the sequence ledger, so that a host
// restarted on it goes on where the last one stopped (the store is one). The host gives
// it each match's place after the records of the batch that moved it.
class LedgerKeepingSink : public Sink {
  public:
    // Where the ledger stood when the sink opened. Taken once, by the host at its start.
    virtual std::vector<SequenceLedger::Progress> take_recorded_progress() = 0;
    virtual void on_progress(const SequenceLedger::Progress& progress) = 0;
    // Records it could not keep and dropped (a store past its queue's bound).
    virtual uint64_t records_lost() const = 0;
};

// Evidence from outside the match (tier 6): what other servers reported of the accounts
// playing here. The host says who joined, takes the signals answered since it last asked,
// and at a match's end waits for the answers about its players (the store is one).
class CorrelationSource {
  public:
    virtual ~CorrelationSource() = default;
    virtual void watch(const PlayerKey& player, const std::string& account) = 0;
    virtual std::vector<SignalRecord> take() = 0;
    // False when it gave up waiting (`timeout`) for an answer.
    virtual bool settle(const std::string& relay_id, uint64_t match_id,
                        std::chrono::milliseconds timeout) = 0;
};

// What a program plugs into the host beside its config: the host builds neither, so that
// the core needs no database. `arbiter` opens them from [store] and [correlation]
// (store/attach.hpp); a host given a config that asks for them without them refuses to
// start rather than run without what the operator configured.
struct HostAttachments {
    std::shared_ptr<LedgerKeepingSink> ledger_sink;  // first of the sinks, before the log
    std::unique_ptr<CorrelationSource> correlation;
};

// The security-event log (seed 001's SecurityEvent table), JSON Lines: one record for
// each signal whose weighted score reaches the reporting threshold, with the review
// fields left empty for a human.
class SecurityEventLog : public Sink {
  public:
    // Opens the file for appending; throws std::runtime_error naming it.
    SecurityEventLog(const std::string& path, std::string server_id, double report_threshold,
                     double review_threshold);
    void on_signal(const SignalRecord& signal) override;
    void flush() override;
    uint64_t written() const { return next_id_ - 1; }

  private:
    std::string path_;
    std::string server_id_;
    double threshold_;
    double review_threshold_;
    std::ofstream out_;
    std::mutex mutex_;
    uint64_t next_id_ = 1;
    uint64_t failed_writes_ = 0;
};

// Whether a signal is a security event: its weighted score reaches the reporting
// threshold, or it is a trip-wire the plugin may raise. The log and the store agree on it.
bool is_security_event(const SignalRecord& signal, double report_threshold);

// 1 low, 2 medium, 3 high, 4 critical, from a signal's weighted score.
int severity_of(const SignalRecord& signal, double review_threshold);

// One assessment as one line of JSON, with every check and its evidence.
std::string assessment_json(const Assessment& assessment);
// A readable table: player, action, combined score, top signals.
void print_assessment_table(std::ostream& out, const std::vector<Assessment>& assessments);

}  // namespace arbiter::host
