// Sinks: where signals and assessments leave the host.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "arbiter/host/assessment.hpp"

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
