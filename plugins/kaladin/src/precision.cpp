#include "precision.hpp"

#include <algorithm>
#include <cmath>

#include "reaction.hpp"  // median

namespace arbiter::kaladin {

namespace {
// A widening when the early spread is 0 and the late one is not: no factor covers it.
constexpr double kUnboundedWidening = 1e9;

double length(const Vec& v) {
    return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
}

double median_of(std::span<const PrecisionBlock> blocks) {
    std::vector<double> spreads;
    spreads.reserve(blocks.size());
    for (const PrecisionBlock& b : blocks)
        spreads.push_back(b.spread_mrad);
    return median(std::move(spreads));
}
}  // namespace

std::optional<double> aim_error_mrad(Vec own, Vec aim, Vec target, double min_range_m) {
    const Vec u{aim.x - own.x, aim.y - own.y, aim.z - own.z};
    const Vec v{target.x - own.x, target.y - own.y, target.z - own.z};
    if (!(length(v) >= min_range_m) || !(length(u) > 0)) return std::nullopt;
    const Vec cross{u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x};
    const double dot = u.x * v.x + u.y * v.y + u.z * v.z;
    const double angle = std::atan2(length(cross), dot);
    if (!std::isfinite(angle)) return std::nullopt;
    return angle * 1e3;
}

void PositionTrack::add(int64_t t_us, float x, float y, float z) {
    // Events come in relay-time order; a stray older one is not worth a reordering.
    if (!points_.empty() && t_us < points_.back().t_us) return;
    // Keep the newest point at or before (newest - kKeepUs) as the left end of a bracket.
    // The points the new one makes unneeded go before it comes, so that the ring holds no
    // more than the window at any moment.
    while (points_.size() > 1 && points_[1].t_us <= t_us - kKeepUs)
        points_.pop_front();
    points_.push_back({t_us, x, y, z});
}

std::optional<Vec> PositionTrack::latest(int64_t t_us) const {
    if (points_.empty()) return std::nullopt;
    if (std::llabs(t_us - points_.back().t_us) > kMaxGapUs / 2) return std::nullopt;
    return points_.back().position();
}

std::optional<Vec> PositionTrack::at(int64_t t_us) const {
    if (points_.empty() || t_us < points_.front().t_us) return std::nullopt;
    if (t_us >= points_.back().t_us) return latest(t_us);
    const auto after = std::upper_bound(points_.begin(), points_.end(), t_us,
                                        [](int64_t t, const TrackPoint& p) { return t < p.t_us; });
    const auto before = std::prev(after);
    if (before->t_us == t_us) return before->position();  // known exactly, whatever follows
    const int64_t gap = after->t_us - before->t_us;
    if (gap > kMaxGapUs) return std::nullopt;
    if (gap <= 0) return after->position();
    const double f = static_cast<double>(t_us - before->t_us) / static_cast<double>(gap);
    const Vec a = before->position();
    const Vec b = after->position();
    return Vec{a.x + f * (b.x - a.x), a.y + f * (b.y - a.y), a.z + f * (b.z - a.z)};
}

void RoundTrip::add(uint32_t rtt_us) {
    if (size_ < kKeep) {
        samples_[(head_ + size_++) % kKeep] = rtt_us;
    } else {
        samples_[head_] = rtt_us;  // over the oldest
        head_ = static_cast<uint8_t>((head_ + 1) % kKeep);
    }
}

std::vector<uint32_t> RoundTrip::samples() const {
    std::vector<uint32_t> out(size_);
    for (size_t i = 0; i < size_; ++i)
        out[i] = samples_[(head_ + i) % kKeep];
    return out;
}

void RoundTrip::restore(std::span<const uint32_t> samples) {
    head_ = size_ = 0;
    for (uint32_t sample : samples.last(std::min(samples.size(), kKeep)))
        add(sample);
}

int64_t RoundTrip::median_us() const {
    if (size_ == 0) return 0;
    std::vector<uint32_t> sorted = samples();
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : (int64_t{sorted[n / 2 - 1]} + sorted[n / 2]) / 2;
}

PrecisionMeasure measure_precision(std::span<const PrecisionBlock> blocks, double session_s,
                                   const PrecisionLimits& limits) {
    PrecisionMeasure m;
    m.session_s = session_s;
    m.blocks = blocks.size();
    if (blocks.empty()) return m;
    for (const PrecisionBlock& b : blocks) {
        m.aims += b.aims;
        m.widest_mrad = std::max(m.widest_mrad, b.spread_mrad);
    }
    m.third = std::max<size_t>(1, blocks.size() / 3);
    m.early_mrad = median_of(blocks.first(m.third));
    m.late_mrad = median_of(blocks.last(m.third));
    if (m.early_mrad > 0)
        m.widening = m.late_mrad / m.early_mrad;
    else
        m.widening = m.late_mrad > 0 ? kUnboundedWidening : 1.0;
    m.allowed_late_mrad = m.early_mrad * limits.widening_limit + limits.widening_floor_mrad;
    m.judged = session_s >= limits.min_session_s && blocks.size() >= limits.min_blocks;
    m.flags =
        m.judged && m.widest_mrad < limits.spread_limit_mrad && m.late_mrad <= m.allowed_late_mrad;
    return m;
}

double precision_score(double widest_mrad, double limit_mrad) {
    if (widest_mrad >= limit_mrad || limit_mrad <= 0) return 0.0;
    return std::clamp((limit_mrad - widest_mrad) / limit_mrad, 0.0, 1.0);
}

bool PrecisionTracker::add(int64_t t_us, double error_mrad, int64_t block_us, uint32_t min_aims) {
    if (!first_us_) {
        first_us_ = t_us;
        open_index_ = 0;
    }
    bool closed = false;
    // (A block length changed by a reload never sends an aim back into a closed block.)
    const int64_t index = std::max(open_index_, (t_us - *first_us_) / block_us);
    if (index > open_index_) {
        closed = !open_.empty();
        close_open(block_us, min_aims);
        open_index_ = index;
    }
    open_.push_back(error_mrad);
    last_us_ = std::max(last_us_, t_us);
    ++aims_;
    return closed;
}

bool PrecisionTracker::close(int64_t block_us, uint32_t min_aims) {
    if (open_.empty()) return false;
    close_open(block_us, min_aims);
    return true;
}

void PrecisionTracker::close_open(int64_t block_us, uint32_t min_aims) {
    if (open_.empty()) return;
    if (open_.size() >= min_aims) {
        blocks_.push_back({.from_us = *first_us_ + open_index_ * block_us,
                           .aims = static_cast<uint32_t>(open_.size()),
                           .spread_mrad = median(open_)});
    } else {
        ++thin_blocks_;
    }
    open_.clear();
}

double PrecisionTracker::session_s() const {
    return first_us_ ? static_cast<double>(last_us_ - *first_us_) / 1e6 : 0.0;
}

void PrecisionTracker::restore(std::optional<int64_t> first_us, int64_t last_us, int64_t open_index,
                               std::vector<double> open, std::vector<PrecisionBlock> blocks,
                               uint64_t thin, uint64_t aims) {
    first_us_ = first_us;
    last_us_ = last_us;
    open_index_ = open_index;
    open_ = std::move(open);
    blocks_ = std::move(blocks);
    thin_blocks_ = thin;
    aims_ = aims;
}

}  // namespace arbiter::kaladin
