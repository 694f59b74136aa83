#include "sample_ring.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include <arbiter/sdk/prefetch.hpp>

namespace arbiter::reference {

namespace {

// A quarter more each time, not twice as much: a track's length is set by its rate and
// the checks' horizon, so a ring grows a few times and then stays, and doubling would
// leave up to half of it unused for good.
size_t grown(size_t capacity) {
    return capacity + capacity / 4 + 4;
}

bool is_float(double v) {
    return static_cast<double>(static_cast<float>(v)) == v;
}

}  // namespace

SampleRing::SampleRing(const SampleRing& other) {
    *this = other;
}

SampleRing& SampleRing::operator=(const SampleRing& other) {
    if (this == &other) return *this;
    SampleRing copy;
    const size_t forgotten = other.positions_forgotten();
    for (size_t i = 0; i < other.size(); ++i) {
        copy.push_time(other.time(i));
        if (i >= forgotten) copy.push_position(other.position(i));
    }
    copy.first_seq_ = other.first_seq_;
    swap(copy);
    return *this;
}

SampleRing& SampleRing::operator=(SampleRing&& other) noexcept {
    SampleRing taken(std::move(other));
    swap(taken);
    return *this;
}

void SampleRing::swap(SampleRing& other) noexcept {
    std::swap(narrow_, other.narrow_);
    std::swap(wide_, other.wide_);
    std::swap(origin_us_, other.origin_us_);
    std::swap(first_seq_, other.first_seq_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(position_head_, other.position_head_);
    std::swap(positions_, other.positions_);
    std::swap(position_capacity_, other.position_capacity_);
    std::swap(floats_, other.floats_);
    std::swap(doubles_, other.doubles_);
}

int64_t SampleRing::longest_step(size_t first, size_t last) const {
    first = std::max<size_t>(first, 1);
    last = std::min<size_t>(last, size_);
    int64_t longest = 0;
    if (first >= last) return longest;
    if (wide_) {
        for (size_t i = first; i < last; ++i)
            longest = std::max(longest, wide_[slot(i)] - wide_[slot(i - 1)]);
        return longest;
    }
    // Two times from the same origin differ by exactly their offsets' difference. Four
    // maxima, each over every fourth step, so that no step waits for the comparison of the
    // one before it (one running maximum made the walk a chain of dependent compares: a
    // fifth of an event's cost through every bundled plugin, docs/performance.md).
    int64_t lanes[4] = {0, 0, 0, 0};
    int64_t previous = narrow_[slot(first - 1)];
    for (size_t i = first; i < last;) {
        const size_t s = slot(i);
        const size_t run = std::min<size_t>(last - i, capacity_ - s);
        const int32_t* times = narrow_.get() + s;
        lanes[0] = std::max(lanes[0], int64_t{times[0]} - previous);
        size_t k = 1;
        for (; k + 4 <= run; k += 4)
            for (size_t lane = 0; lane < 4; ++lane)
                lanes[lane] =
                    std::max(lanes[lane], int64_t{times[k + lane]} - times[k + lane - 1]);
        for (; k < run; ++k)
            lanes[0] = std::max(lanes[0], int64_t{times[k]} - times[k - 1]);
        previous = times[run - 1];
        i += run;
    }
    return std::max({lanes[0], lanes[1], lanes[2], lanes[3]});
}

Vec3 SampleRing::position(size_t i) const {
    if (positions_ == 0) return {};
    const size_t forgotten = positions_forgotten();
    const size_t s = position_slot(i < forgotten ? 0 : i - forgotten);
    if (doubles_) return {doubles_[3 * s], doubles_[3 * s + 1], doubles_[3 * s + 2]};
    return {floats_[3 * s], floats_[3 * s + 1], floats_[3 * s + 2]};
}

void SampleRing::prefetch() const {
    // The whole blocks, not only the live part: a ring's live part wraps, and a block is a
    // few hundred bytes.
    if (narrow_) prefetch_span(std::span<const int32_t>(narrow_.get(), capacity_));
    if (wide_) prefetch_span(std::span<const int64_t>(wide_.get(), capacity_));
    if (floats_)
        prefetch_span(std::span<const float>(floats_.get(), 3 * size_t{position_capacity_}));
    if (doubles_)
        prefetch_span(std::span<const double>(doubles_.get(), 3 * size_t{position_capacity_}));
}

void SampleRing::push_time(int64_t t_us) {
    if (size_ == capacity_) reserve_times(grown(capacity_));
    if (!wide_) {
        if (size_ == 0) origin_us_ = t_us;
        int64_t offset = 0;
        if (!offset_of(t_us, origin_us_, offset)) rebase(t_us);
    }
    const size_t s = slot(size_);
    if (wide_) {
        wide_[s] = t_us;
    } else {
        narrow_[s] = static_cast<int32_t>(t_us - origin_us_);
    }
    ++size_;
}

void SampleRing::push_floats(float x, float y, float z) {
    if (doubles_) {
        push_position({x, y, z});
        return;
    }
    if (positions_ == position_capacity_) reserve_positions(grown(position_capacity_));
    const size_t s = position_slot(positions_);
    floats_[3 * s] = x;
    floats_[3 * s + 1] = y;
    floats_[3 * s + 2] = z;
    ++positions_;
}

void SampleRing::push_position(const Vec3& p) {
    if (positions_ == position_capacity_) reserve_positions(grown(position_capacity_));
    if (!doubles_ && !(is_float(p.x) && is_float(p.y) && is_float(p.z))) {
        // Kept whole from now on, so that what is read back is what was pushed.
        auto doubles = std::make_unique<double[]>(3 * size_t{position_capacity_});
        for (size_t j = 0; j < positions_; ++j) {
            const size_t s = position_slot(j);
            for (size_t k = 0; k < 3; ++k)
                doubles[3 * s + k] = floats_[3 * s + k];
        }
        doubles_ = std::move(doubles);
        floats_.reset();
    }
    const size_t s = position_slot(positions_);
    if (doubles_) {
        doubles_[3 * s] = p.x;
        doubles_[3 * s + 1] = p.y;
        doubles_[3 * s + 2] = p.z;
    } else {
        floats_[3 * s] = static_cast<float>(p.x);
        floats_[3 * s + 1] = static_cast<float>(p.y);
        floats_[3 * s + 2] = static_cast<float>(p.z);
    }
    ++positions_;
}

void SampleRing::rebase(int64_t t_us) {
    int64_t lo = t_us, hi = t_us;
    for (size_t i = 0; i < size_; ++i) {
        lo = std::min(lo, time(i));
        hi = std::max(hi, time(i));
    }
    int64_t span = 0;
    if (!__builtin_sub_overflow(hi, lo, &span) && span <= INT32_MAX) {
        for (size_t i = 0; i < size_; ++i)
            narrow_[slot(i)] = static_cast<int32_t>(time(i) - lo);
        origin_us_ = lo;
        return;
    }
    auto wide = std::make_unique<int64_t[]>(capacity_);
    for (size_t i = 0; i < size_; ++i)
        wide[slot(i)] = time(i);
    wide_ = std::move(wide);
    narrow_.reset();
}

void SampleRing::narrow_if_possible() {
    if (!wide_ || size_ == 0) return;
    int64_t min = time(0), max = time(0);
    for (size_t i = 1; i < size_; ++i) {
        min = std::min(min, time(i));
        max = std::max(max, time(i));
    }
    int64_t span = 0;
    if (__builtin_sub_overflow(max, min, &span) || span > INT32_MAX) return;
    auto narrow = std::make_unique<int32_t[]>(capacity_);
    for (size_t i = 0; i < size_; ++i)
        narrow[slot(i)] = static_cast<int32_t>(time(i) - min);
    origin_us_ = min;
    narrow_ = std::move(narrow);
    wide_.reset();
}

void SampleRing::pop_front() {
    if (size_ == 0) return;
    if (positions_forgotten() == 0) pop_position();
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    --size_;
    ++first_seq_;
    // After a long silence the oldest sample alone may have kept the times whole.
    if (wide_) narrow_if_possible();
    // A ring that held many more samples (a burst) gives the room back.
    if (capacity_ > 32 && size_ < capacity_ / 4) reserve_times(grown(size_));
}

void SampleRing::pop_position() {
    position_head_ = position_head_ + 1 == position_capacity_ ? 0 : position_head_ + 1;
    --positions_;
}

void SampleRing::clear() {
    const uint64_t seq = first_seq_ + size_;
    *this = SampleRing();
    first_seq_ = seq;
}

void SampleRing::forget_positions_before(size_t i) {
    if (!compact() || size_ == 0) return;
    i = std::min(i, size_ - size_t{1});  // the newest sample keeps its position
    while (positions_forgotten() < i)
        pop_position();
    // A ring that held many more positions (a burst) gives the room back.
    if (position_capacity_ > 32 && positions_ < position_capacity_ / 4)
        reserve_positions(grown(positions_));
}

void SampleRing::reserve_times(size_t capacity) {
    if (wide_) {
        auto wide = std::make_unique_for_overwrite<int64_t[]>(capacity);
        for (size_t i = 0; i < size_; ++i)
            wide[i] = wide_[slot(i)];
        wide_ = std::move(wide);
    } else {
        auto narrow = std::make_unique_for_overwrite<int32_t[]>(capacity);
        for (size_t i = 0; i < size_; ++i)
            narrow[i] = narrow_[slot(i)];
        narrow_ = std::move(narrow);
    }
    head_ = 0;
    capacity_ = static_cast<uint32_t>(capacity);
}

void SampleRing::reserve_positions(size_t capacity) {
    if (doubles_) {
        auto doubles = std::make_unique_for_overwrite<double[]>(3 * capacity);
        for (size_t j = 0; j < positions_; ++j)
            std::copy_n(&doubles_[3 * position_slot(j)], 3, &doubles[3 * j]);
        doubles_ = std::move(doubles);
    } else {
        auto floats = std::make_unique_for_overwrite<float[]>(3 * capacity);
        for (size_t j = 0; j < positions_; ++j)
            std::copy_n(&floats_[3 * position_slot(j)], 3, &floats[3 * j]);
        floats_ = std::move(floats);
    }
    position_head_ = 0;
    position_capacity_ = static_cast<uint32_t>(capacity);
}

}  // namespace arbiter::reference
