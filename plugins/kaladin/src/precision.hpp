// Fatigue-free precision: targeting spread that never widens over a multi-hour session
// (docs/detection.md, "plugins/kaladin").
//
// What the relay can measure. The schema carries no aim angle and no hit offset; what it
// does carry is an Order aimed at a player (target_player, and the point it targets), the
// players' positions (PositionUpdate) and the round trip the relay measured. One aimed
// order gives one aim error: the angle, seen from the player's position, between the
// point the order targets and the target player's position as the relay received it one
// round trip (the median of its recent samples, plus the game's view delay) before the
// order arrived, interpolated between
// that player's updates. That rewind is a game server's lag compensation: it is what the
// player's screen showed when they aimed. Every error of this estimate (a round trip that
// changed, a lost update, a target that turned) can only add to the measured spread, so
// it always favours the player.
//
// A block's spread is the median aim error of the block (one stray click moves nothing);
// a session is judged only when it is long and has enough blocks. It flags when every
// block stays under the limit and the late blocks are no wider than the early ones by
// more than the widening limit (a factor) plus a small floor (the block-to-block jitter
// of the relay's own estimate, which a factor on a spread near 0 would not allow for).
// Pixel-perfect aim alone is not enough: it must also not tire.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <arbiter/sdk/prefetch.hpp>
#include <arbiter/sdk/ring.hpp>

namespace arbiter::kaladin {

struct Vec {
    double x = 0, y = 0, z = 0;
};

// The aim error of one aimed order, milliradians: the angle at `own` between `aim` and
// `target`. nullopt when the target is nearer than min_range_m (a hand's width there is a
// large angle) or the aim point is the player's own position.
std::optional<double> aim_error_mrad(Vec own, Vec aim, Vec target, double min_range_m);

// A position as the relay received it. Positions arrive as floats (the schema's Vec3), so
// they are kept as floats: 24 bytes a point instead of 32, and every value read back is
// the one that arrived.
struct TrackPoint {
    int64_t t_us = 0;
    float x = 0, y = 0, z = 0;
    Vec position() const { return {x, y, z}; }
};

// A player's positions as the relay received them, the last few seconds.
class PositionTrack {
  public:
    // Positions are kept for this long after the newest (a rewind is at most this long).
    static constexpr int64_t kKeepUs = 2'000'000;
    // Two updates further apart than this (lost packets, a dropped line) are not
    // interpolated between; a position older than half of it is not used.
    static constexpr int64_t kMaxGapUs = 1'000'000;

    void add(int64_t t_us, float x, float y, float z);
    // The position at relay time t_us, interpolated; nullopt when the relay cannot say.
    std::optional<Vec> at(int64_t t_us) const;
    // The newest position, if it is at most kMaxGapUs / 2 older than t_us.
    std::optional<Vec> latest(int64_t t_us) const;

    const Ring<TrackPoint>& points() const { return points_; }
    // Asks the memory system for what add() reads and writes: the newest point, the slot
    // after it, and the two oldest (which the window lets go of).
    void prefetch() const {
        const size_t n = points_.size();
        // n - 1 of an empty track wraps past the block, and address() says nullptr.
        for (const TrackPoint* point :
             {points_.address(n - 1), points_.address(n), points_.address(0), points_.address(1)})
            if (point) prefetch_line(point);
    }
    void restore(Ring<TrackPoint> points) { points_ = std::move(points); }
    // Input was lost: nothing is interpolated across the gap.
    void clear() { points_.clear(); }

  private:
    Ring<TrackPoint> points_;  // in relay-time order
};

// The round trip a rewind uses: the median of the relay's last few samples, so that one
// sample's jitter, or the long one that spans a lag spike, does not move the rewind.
class RoundTrip {
  public:
    static constexpr size_t kKeep = 9;
    void add(uint32_t rtt_us);
    // 0 before the first sample.
    int64_t median_us() const;
    // The samples kept, oldest first.
    std::vector<uint32_t> samples() const;
    // At most kKeep samples, oldest first.
    void restore(std::span<const uint32_t> samples);

  private:
    // The newest kKeep in place (no allocation for nine numbers), oldest at head_.
    std::array<uint32_t, kKeep> samples_{};
    uint8_t head_ = 0;
    uint8_t size_ = 0;
};

// One block of relay time with enough aimed orders.
struct PrecisionBlock {
    int64_t from_us = 0;     // the block's start
    uint32_t aims = 0;       // aimed orders measured in it
    double spread_mrad = 0;  // their median aim error
};

// The limits a session is judged by (Settings' precision_* keys).
struct PrecisionLimits {
    double min_session_s = 7200;
    uint32_t min_blocks = 6;
    double spread_limit_mrad = 5.0;
    double widening_limit = 1.1;
    // Added to the allowance: near 0 mrad a factor allows nothing (0 times 1.1), while
    // the relay's own estimate jitters from block to block by about this much.
    double widening_floor_mrad = 0.25;
};

struct PrecisionMeasure {
    bool judged = false;           // the session is long enough and has enough blocks
    bool flags = false;            // judged, tight throughout, and not widening
    double session_s = 0;          // first to last aimed order
    size_t blocks = 0;             // blocks with enough aims
    uint64_t aims = 0;             // in those blocks
    double widest_mrad = 0;        // the widest block's spread
    double early_mrad = 0;         // median spread of the first third of the blocks
    double late_mrad = 0;          // of the last third
    double widening = 0;           // late / early (1 when both are 0)
    double allowed_late_mrad = 0;  // early x widening_limit + widening_floor_mrad
    size_t third = 0;              // blocks in each of those thirds
};

// Judges a session: `blocks` in order, `session_s` from its first to its last aimed order.
PrecisionMeasure measure_precision(std::span<const PrecisionBlock> blocks, double session_s,
                                   const PrecisionLimits& limits);

// 0 at the spread limit, 1 at a spread of 0.
double precision_score(double widest_mrad, double limit_mrad);

// A player's aimed orders, block by block, from their first aimed order.
class PrecisionTracker {
  public:
    // One aim error at relay time t_us. Returns true when it closed the previous block
    // (kept when it had at least min_aims aims).
    bool add(int64_t t_us, double error_mrad, int64_t block_us, uint32_t min_aims);
    // Closes the open block (at the end of the match). True when one was open.
    bool close(int64_t block_us, uint32_t min_aims);

    const std::vector<PrecisionBlock>& blocks() const { return blocks_; }
    double session_s() const;
    std::optional<int64_t> first_us() const { return first_us_; }
    int64_t last_us() const { return last_us_; }
    uint64_t thin_blocks() const { return thin_blocks_; }
    uint64_t aims() const { return aims_; }

    // For state save and restore.
    int64_t open_index() const { return open_index_; }
    const std::vector<double>& open_errors() const { return open_; }
    void restore(std::optional<int64_t> first_us, int64_t last_us, int64_t open_index,
                 std::vector<double> open, std::vector<PrecisionBlock> blocks, uint64_t thin,
                 uint64_t aims);

  private:
    void close_open(int64_t block_us, uint32_t min_aims);

    std::optional<int64_t> first_us_;
    int64_t last_us_ = 0;
    int64_t open_index_ = 0;    // the open block, counted in blocks from first_us_
    std::vector<double> open_;  // aim errors of the open block
    std::vector<PrecisionBlock> blocks_;
    uint64_t thin_blocks_ = 0;  // closed with aims, but too few of them
    uint64_t aims_ = 0;         // every aim error ever added
};

}  // namespace arbiter::kaladin
