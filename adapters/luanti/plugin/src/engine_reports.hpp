// The engine's own anti-cheat reports about one player (Luanti's register_on_cheat:
// moved_too_fast, interacted_too_far, dug_too_fast, ...), counted by type. They are kept
// as evidence beside Arbiter's own findings, never scored: the engine's checks have their
// own false positives (moved_too_fast after lag), and a reviewer weighs the two together.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arbiter/sdk/evidence.hpp>

namespace arbiter::luanti {

class EngineReports {
  public:
    // Distinct types kept per player; later new ones count as "other", so that a hostile
    // stream cannot grow a player's record without end.
    static constexpr size_t kMostTypes = 16;

    void add(std::string_view type);
    bool empty() const { return counts_.empty(); }
    // In type order (the state is the same bytes for the same counts).
    const std::vector<std::pair<std::string, int64_t>>& counts() const { return counts_; }
    // For restoring: type order, each once, at most kMostTypes (else false, nothing kept).
    bool restore(std::vector<std::pair<std::string, int64_t>> counts);

    Evidence evidence() const;

  private:
    std::vector<std::pair<std::string, int64_t>> counts_;
};

}  // namespace arbiter::luanti
