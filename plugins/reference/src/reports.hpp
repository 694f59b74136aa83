// How the signals of every area's checks reach the host. A check reports again only when its
// score rises by a step, so that a sustained cheat does not flood the host; a smaller rise is
// held, and reported when the player leaves or the match ends, so that the host still gets
// each check's maximum. One record per player, shared by the areas: the rule is the same for
// every check.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <arbiter/sdk.hpp>

#include "lazy.hpp"

namespace arbiter::reference {

struct Reports {
    // The strongest signal of a check not yet reported.
    struct Held {
        double score = 0;
        double confidence = 0;
        Evidence evidence;
    };
    std::map<std::string, double> reported;  // the highest weighted score reported, per check
    std::map<std::string, Held> held;        // the rise held back, per check

    bool empty() const { return reported.empty() && held.empty(); }
};

// One player's signals during one call of the host (a batch, a match's end).
class Reporter {
  public:
    // The record is made at the player's first signal: most players never have one.
    Reporter(const HostServices& host, Signals& signals, Lazy<Reports>& reports)
        : host_(host), signals_(signals), reports_(reports) {}

    // Emits the signal, holds it, or drops it (no rise), by the step rule above.
    void report(Signal signal);
    // Emits every held rise: the player leaves, or the match ends.
    void report_held(uint32_t player_id);

  private:
    const HostServices& host_;
    Signals& signals_;
    Lazy<Reports>& reports_;
};

// A player's reports in the saved state: the scores reported, then the held signals.
// Whether a blob has held signals is the caller's to say: each plugin numbers the versions
// of its blob its own way (the reference's has them from version 2 on).
void save_reports(StateWriter& out, const Reports& reports);
void restore_reports(StateReader& in, Reports& reports, bool with_held);

}  // namespace arbiter::reference
