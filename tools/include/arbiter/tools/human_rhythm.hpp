// How real people's inputs are spaced in time, for the simulator's honest players.
//
// Built from real human traces (../shared/data/human-traces/dev-actions.csv): each
// player's actions are grouped by timestamp (actions that share one are one input with
// several actions, as a held key or a selection followed by a command), and a player's
// rhythm is the sequence of those groups with the gaps between them. A simulated player
// replays such sequences by blocks (a block bootstrap): it starts at a random point of a
// random real player, plays on for a random number of inputs, then jumps to another
// random point. Blocks keep what single intervals lose: bursts, pauses, and the way a
// person's pace drifts. Times quantised by a game loop (StarCraft II: 1/22.4 s) are spread
// uniformly within the loop, so that the simulated relay's own ticks do the quantising.
//
// Without the traces (a machine outside CI has no ../shared), a built-in table stands in:
// the quantiles of the same intervals, how many actions share a timestamp, and the share of
// each action kind, all measured on the 30 StarCraft II players of dev-actions.csv and
// drawn independently. It is cruder (no bursts) and documented as the fallback.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/tools/random.hpp"
#include "arbiter/tools/trace_rows.hpp"

namespace arbiter::tools {

// One action of an input.
struct InputAction {
    std::string_view kind;  // "command", "selection", ... (valid while the model lives)
    bool repeat = false;    // a held key repeating a command
};

class HumanRhythm {
  public:
    // The source whose traces shape honest StarCraft II-like players by default: the
    // osu! traces of dev-actions.csv are a rhythm game's, metronomic by design.
    static constexpr const char* kDefaultSource = "sc2reader_test_replays";

    // From trace rows (players of `source` only; every player when `source` is empty).
    // Throws std::runtime_error when no player has enough inputs to learn from.
    static HumanRhythm from_rows(const std::vector<TraceRow>& rows, const std::string& source,
                                 std::string description);
    // Reads a trace file (CSV or JSON Lines by its extension); throws std::runtime_error
    // naming the file and the first bad row.
    static HumanRhythm from_file(const std::filesystem::path& path,
                                 const std::string& source = kDefaultSource);
    // The built-in table (see above).
    static HumanRhythm builtin();

    // Where the model came from, e.g. "dev-actions.csv: 30 players, 54952 inputs".
    const std::string& description() const { return description_; }
    bool from_traces() const { return !steps_.empty(); }

    // One player's stream of inputs.
    class Stream {
      public:
        // The gap in seconds from the previous input to the next, and the actions of
        // the next input (cleared, then filled).
        double next(Rng& rng, std::vector<InputAction>& actions);

      private:
        friend class HumanRhythm;
        Stream(const HumanRhythm* model, Rng& rng);
        void jump(Rng& rng);
        const HumanRhythm* model_;
        size_t position_ = 0;  // next step
        size_t end_ = 0;       // end of the current trace
        uint32_t left_in_block_ = 0;
    };
    Stream stream(Rng& rng) const { return Stream(this, rng); }

  private:
    struct Step {
        float gap_s;     // since the previous input of the same player
        uint32_t first;  // into actions_
        uint16_t count;
    };
    struct Kind {
        uint32_t name;  // into kind_names_
        bool repeat;
    };

    HumanRhythm() = default;
    double builtin_gap(Rng& rng) const;

    std::string description_;
    // Trace model: every player's steps, one trace after another.
    std::vector<Step> steps_;
    std::vector<Kind> actions_;
    std::vector<std::string> kind_names_;
    std::vector<std::pair<size_t, size_t>> traces_;  // [begin, end) into steps_
    double quantum_s_ = 0;  // the game loop the times are quantised to, 0 for none
};

// The trace file the simulator uses when none is named: $ARBITER_HUMAN_TRACES, else
// ../shared/data/human-traces/dev-actions.csv of the source tree the tools were built
// from. Empty when neither exists.
std::filesystem::path default_human_traces();

}  // namespace arbiter::tools
