// `arbiter luanti-bridge`: follows a Luanti world's Arbiter mod live and streams what it
// writes to `arbiter serve` as a relay, one batch per server step; the assessments that
// come back go to stdout, and a player's first FlagForReview goes to the world's
// arbiter/flags.jsonl, which the mod reads and tells the staff in chat.
//
// Restarting loses nothing and counts nothing twice: the bridge saves its place in the
// segments with the state of the match it was building (arbiter/bridge-state.json) and,
// started again, makes the same batches from there. A batch it had already sent before the
// state was saved goes again with the same sequence number, and the host drops it as
// delivered. Segments wholly sent are deleted once the place past them is saved. The relay
// side (connecting, sending, hearing, going back after a failure) is the one every bridge
// shares, adapters/common/relay_feed.hpp; this is the Luanti source it reads from.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "match_builder.hpp"
#include "relay_feed.hpp"
#include "segment_follower.hpp"

namespace arbiter::luanti {

struct BridgeOptions {
    std::filesystem::path world;  // the world folder (with arbiter/events/ in it)
    // The relay's name defaults to "luanti-" + the world's name; `once` sends what is on
    // disk, waits for the answers, and ends.
    relay::Connection connection;
    std::chrono::milliseconds poll{50};  // how often the end of the segments is looked at
    std::chrono::milliseconds save_every{1000};
};

struct BridgeCounts {
    uint64_t lines = 0, refused = 0, batches = 0, already_delivered = 0, flags = 0;
    uint64_t reconnects = 0;
    // From the server's clock in a step line to the step's batch sent: how late the host
    // hears of what happened. Measured only where the bridge runs on the server's machine
    // (Luanti's clock is CLOCK_MONOTONIC_RAW, the bridge reads the same).
    uint64_t steps_timed = 0;
    int64_t delay_sum_us = 0, delay_max_us = 0;
};

class Bridge final : private relay::FeedSource {
  public:
    explicit Bridge(BridgeOptions options);
    ~Bridge();
    // Runs until `stop` is set or, with `once`, the lines on disk are sent and answered.
    // Returns the exit status: 0, 2 when the server cannot be reached (with `once`) or the
    // saved state cannot be read, 3 when some line was refused.
    int run(const std::atomic<bool>& stop);
    const BridgeCounts& counts() const { return counts_; }

    static std::filesystem::path state_path(const std::filesystem::path& world);
    static std::filesystem::path flags_path(const std::filesystem::path& world);

  private:
    // The feed's source: the place and match of the last saved state (or the start of the
    // segments), the batches of the next line, saving.
    void restore() override;
    bool next(std::vector<std::vector<uint8_t>>& batches) override;
    void sent() override;
    void idle() override;
    void close() override { save_state(); }
    void heard(const nlohmann::json& assessment, const std::string& before) override;

    void save_state();
    void time_step(int64_t server_t_us);
    void flag(const std::string& player, const std::string& reasons);
    void report(const std::string& what) const;
    // A line not taken: counted, and said with its place.
    void refuse(const FollowedLine& line, const std::string& why);

    BridgeOptions options_;
    std::unique_ptr<relay::RelayFeed> feed_;
    std::unique_ptr<SegmentFollower> follower_;
    MatchBuilder builder_;
    SegmentPlace saved_place_;
    // The place after the last line that left no batch half made, with the match as it was
    // there: what a save writes. A place inside a step would lose the step's earlier lines
    // on a restart (the batch they were in is not saved).
    SegmentPlace boundary_place_;
    nlohmann::json boundary_match_;
    std::chrono::steady_clock::time_point saved_at_{};
    std::optional<int64_t> step_sent_t_us_;  // the server's clock of the step being sent
    // "match/player" of those already told to staff: saved, so that a restarted bridge does
    // not tell them again when the match's assessments come once more.
    std::set<std::string> flagged_;
    BridgeCounts counts_;
};

}  // namespace arbiter::luanti
