// Turns the mod's lines into event batches of one match per server run: the server's clock
// is the relay clock, a server step is a batch (never split across two, so that a bridge
// that reads the same lines again makes the same batches), and everything the batches
// depend on is kept in a state that the bridge saves beside its place in the files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>
#include <nlohmann/json.hpp>

#include "lines.hpp"

namespace arbiter::luanti {

// Enough for a step of a full server (a position and an allowance per player, and what they
// did); a longer step is cut here, which stays the same on a second reading.
inline constexpr size_t kMaxEventsPerBatch = 4096;

class MatchBuilder {
  public:
    explicit MatchBuilder(std::string relay_id) : relay_id_(std::move(relay_id)) {}

    // Adds one line's events. Finished batches go to `batches`; a line that cannot be taken
    // (a player's line before the player's join, any line before a start) returns why, and
    // nothing of it is added.
    std::optional<std::string> take(const Line& line, std::vector<std::vector<uint8_t>>& batches);

    bool match_open() const { return open_; }
    // No batch is half made: save() now holds everything the lines taken so far gave.
    bool between_batches() const { return !batch_ || batch_->event_count() == 0; }
    uint64_t match_id() const { return match_id_; }
    const std::string& relay_id() const { return relay_id_; }
    // Lines whose time went back before the line ahead of them: taken at that line's time.
    uint64_t times_held() const { return times_held_; }

    // What a bridge that starts again needs to make the same batches from the next line on.
    nlohmann::json save() const;
    // Throws std::runtime_error naming what is wrong with a saved state.
    void restore(const nlohmann::json& saved);

  private:
    struct Player {
        uint32_t id = 0;
        double x = 0, y = 0, z = 0;  // the last position, Arbiter's axes
    };
    BatchBuilder& batch();
    void finish(std::vector<std::vector<uint8_t>>& batches);
    void add_line_events(const Line& line, int64_t t_us, uint32_t player);
    void end_match(int64_t t_us, const std::string& reason,
                   std::vector<std::vector<uint8_t>>& batches);
    int64_t unix_us_at(int64_t t_us) const;

    std::string relay_id_;
    bool open_ = false;
    uint64_t match_id_ = 0;
    uint64_t next_sequence_ = 0;
    uint64_t tick_ = 0;
    int64_t last_t_us_ = 0;
    int64_t started_t_us_ = 0;
    int64_t started_unix_s_ = 0;
    uint32_t next_player_ = 1;
    std::map<std::string, Player, std::less<>> players_;
    uint64_t times_held_ = 0;
    std::optional<BatchBuilder> batch_;
};

}  // namespace arbiter::luanti
