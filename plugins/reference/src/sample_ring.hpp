// A player's recent position updates, oldest first, in a fraction of the bytes a
// std::deque<Sample> takes (docs/performance.md, memory per tracked player).
//
// What is stored is exactly what was pushed, so every check computes what it computed on a
// deque: a receive time as 32 bits from a per-track origin (every time, while the track's
// times lie within 2^31 us of it; all of them as 64 bits otherwise), and a position as three
// floats (positions arrive as floats in the events; all of them as doubles once one is not,
// as in tests). The times and the positions are two rings, so that the owner may let go of
// the positions no check can read any more (forget_positions_before) and keep only the times.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>

namespace arbiter::reference {

struct Vec3 {
    double x = 0, y = 0, z = 0;  // x and y horizontal, z up
};

// One position update as the relay received it.
struct Sample {
    int64_t t_us = 0;  // relay receive time
    Vec3 position;
};

class SampleRing {
  public:
    SampleRing() = default;
    SampleRing(const SampleRing& other);
    SampleRing& operator=(const SampleRing& other);
    SampleRing(SampleRing&& other) noexcept { swap(other); }
    SampleRing& operator=(SampleRing&& other) noexcept;

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    int64_t time(size_t i) const {
        const size_t s = slot(i);
        return wide_ ? wide_[s] : origin_us_ + narrow_[s];
    }
    // The longest step between consecutive receive times over samples [first, last): the
    // largest time(i) - time(i - 1) for i in that range (first taken as at least 1), and 0
    // when none is larger or the range is empty. The lag look-backs ask it for every window
    // of every update, so it walks the stored times directly, a contiguous run at a time.
    int64_t longest_step(size_t first, size_t last) const;
    // The oldest position still kept for a sample whose position was let go (no check reads
    // one; see forget_positions_before).
    Vec3 position(size_t i) const;
    bool has_position(size_t i) const { return i >= size_ - positions_; }
    Sample operator[](size_t i) const { return {time(i), position(i)}; }
    Sample front() const { return (*this)[0]; }
    Sample back() const { return (*this)[size_ - 1]; }

    void push_back(const Sample& sample) {
        // Whether the position is floats is asked here, inline, where a caller that made it
        // of floats shows it: GCC 12.2 at -O2 dropped the float casts of a caller that built
        // the Sample of them and passed it to an out-of-line push_back (its SLP vectorizer;
        // the reference tests' true_max_speed_score read back positions it never cast).
        const Vec3& p = sample.position;
        const auto x = static_cast<float>(p.x), y = static_cast<float>(p.y),
                   z = static_cast<float>(p.z);
        push_time(sample.t_us);
        if (x == p.x && y == p.y && z == p.z) {
            push_floats(x, y, z);
        } else {
            push_position(p);
        }
    }
    void pop_front();
    void clear();
    // Makes this ring the `count` samples of a saved track, in one allocation per array
    // rather than a push at a time: time_at(i) gives the receive times, called for i from 0
    // up, then floats_at(i, xyz) the positions as floats. The positions before `forgotten`
    // are let go as forget_positions_before(forgotten) would (only while the times are
    // compact, and only when at least one position stays); floats_at is not asked for them
    // then. What is stored is what pushing the samples and forgetting would store.
    template <class TimeAt, class FloatsAt>
    void restore(size_t count, size_t forgotten, TimeAt time_at, FloatsAt floats_at);
    template <class It>
    void assign(It first, It last) {
        clear();
        for (; first != last; ++first)
            push_back(*first);
    }

    // Lets go of the positions of the samples before index i (their times stay): the owner
    // knows that no check will read them again. Only while every position is a float and
    // every time is 32 bits from the origin, so that the state blob can say which are gone
    // (MovementArea::save_track); otherwise it keeps them.
    void forget_positions_before(size_t i);
    // How many samples, from the oldest, have no position any more.
    size_t positions_forgotten() const { return size_ - positions_; }
    bool compact() const { return !wide_ && !doubles_; }

    // For a save, the samples of a compact ring in order at one call each: visit(t_us,
    // xyz) with the receive time and the position as three floats (for a sample whose
    // position was let go, the oldest kept, as position(i) gives it).
    template <class Visit>
    void visit_compact(Visit visit) const;

    // Asks the memory system for every stored time and position, ahead of a use that would
    // otherwise wait for each line in turn (see ReferenceAnalyzer::on_batch).
    void prefetch() const;

    // Samples ever removed from the front: sample i is the (first_seq() + i)th the track
    // ever held, a name that stays while the ring moves (SpacingMedian keeps gaps by it).
    uint64_t first_seq() const { return first_seq_; }

    // The samples in order, by value (a range-for over a track).
    class SampleIterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Sample;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Sample;

        SampleIterator() = default;
        SampleIterator(const SampleRing* ring, size_t i) : ring_(ring), i_(i) {}
        Sample operator*() const { return (*ring_)[i_]; }
        SampleIterator& operator++() {
            ++i_;
            return *this;
        }
        SampleIterator operator++(int) {
            SampleIterator old = *this;
            ++i_;
            return old;
        }
        friend bool operator==(const SampleIterator& a, const SampleIterator& b) {
            return a.i_ == b.i_;
        }

      private:
        const SampleRing* ring_ = nullptr;
        size_t i_ = 0;
    };
    SampleIterator begin() const { return {this, 0}; }
    SampleIterator end() const { return {this, size_}; }

    // The receive times as a random-access range, for the binary searches of the checks.
    class TimeIterator {
      public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = int64_t;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = int64_t;

        TimeIterator() = default;
        TimeIterator(const SampleRing* ring, difference_type i) : ring_(ring), i_(i) {}
        int64_t operator*() const { return ring_->time(static_cast<size_t>(i_)); }
        int64_t operator[](difference_type n) const {
            return ring_->time(static_cast<size_t>(i_ + n));
        }
        size_t index() const { return static_cast<size_t>(i_); }
        TimeIterator& operator++() {
            ++i_;
            return *this;
        }
        TimeIterator operator++(int) {
            TimeIterator old = *this;
            ++i_;
            return old;
        }
        TimeIterator& operator--() {
            --i_;
            return *this;
        }
        TimeIterator operator--(int) {
            TimeIterator old = *this;
            --i_;
            return old;
        }
        TimeIterator& operator+=(difference_type n) {
            i_ += n;
            return *this;
        }
        TimeIterator& operator-=(difference_type n) {
            i_ -= n;
            return *this;
        }
        friend TimeIterator operator+(TimeIterator it, difference_type n) { return it += n; }
        friend TimeIterator operator+(difference_type n, TimeIterator it) { return it += n; }
        friend TimeIterator operator-(TimeIterator it, difference_type n) { return it -= n; }
        friend difference_type operator-(const TimeIterator& a, const TimeIterator& b) {
            return a.i_ - b.i_;
        }
        friend bool operator==(const TimeIterator& a, const TimeIterator& b) {
            return a.i_ == b.i_;
        }
        friend auto operator<=>(const TimeIterator& a, const TimeIterator& b) {
            return a.i_ <=> b.i_;
        }

      private:
        const SampleRing* ring_ = nullptr;
        difference_type i_ = 0;
    };
    TimeIterator times_begin() const { return {this, 0}; }
    TimeIterator times_end() const { return {this, static_cast<std::ptrdiff_t>(size_)}; }

  private:
    size_t slot(size_t i) const {
        const size_t s = head_ + i;
        return s >= capacity_ ? s - capacity_ : s;
    }
    size_t position_slot(size_t j) const {
        const size_t s = position_head_ + j;
        return s >= position_capacity_ ? s - position_capacity_ : s;
    }
    void swap(SampleRing& other) noexcept;
    void push_time(int64_t t_us);
    void push_position(const Vec3& p);
    void push_floats(float x, float y, float z);
    void pop_position();
    // A time that is not within 32 bits of the origin: the origin moves to the earliest
    // time, or every time is kept whole when the track spans more than 32 bits.
    void rebase(int64_t t_us);
    // t - origin as 32 bits, if it fits.
    static bool offset_of(int64_t t, int64_t origin, int64_t& offset) {
        return !__builtin_sub_overflow(t, origin, &offset) && offset >= INT32_MIN &&
               offset <= INT32_MAX;
    }
    void narrow_if_possible();
    void reserve_times(size_t capacity);
    void reserve_positions(size_t capacity);

    std::unique_ptr<int32_t[]> narrow_;  // time - origin_us_, while each fits
    std::unique_ptr<int64_t[]> wide_;    // the times whole, otherwise
    int64_t origin_us_ = 0;
    uint64_t first_seq_ = 0;
    uint32_t head_ = 0, size_ = 0, capacity_ = 0;
    // The positions of the last positions_ samples: x, y, z each.
    uint32_t position_head_ = 0, positions_ = 0, position_capacity_ = 0;
    std::unique_ptr<float[]> floats_;    // while every position is a float
    std::unique_ptr<double[]> doubles_;  // otherwise
};

template <class Visit>
void SampleRing::visit_compact(Visit visit) const {
    static constexpr float kNone[3] = {0, 0, 0};
    const size_t forgotten = positions_forgotten();
    for (size_t i = 0; i < size_; ++i) {
        const float* xyz = positions_ == 0
                               ? kNone
                               : &floats_[3 * position_slot(i < forgotten ? 0 : i - forgotten)];
        visit(origin_us_ + narrow_[slot(i)], xyz);
    }
}

template <class TimeAt, class FloatsAt>
void SampleRing::restore(size_t count, size_t forgotten, TimeAt time_at, FloatsAt floats_at) {
    clear();
    if (count == 0) return;
    reserve_times(count);  // from slot 0 on, as narrow times (wide_ is not set)
    // What push_time stores while every time is within 32 bits of the first (the origin),
    // written straight; from the first that is not, push_time itself (it rebases).
    size_t i = 0;
    origin_us_ = time_at(0);
    for (; i < count; ++i) {
        const int64_t t_us = i == 0 ? origin_us_ : time_at(i);
        int64_t offset = 0;
        if (!offset_of(t_us, origin_us_, offset)) {
            push_time(t_us);
            ++i;
            break;
        }
        narrow_[i] = static_cast<int32_t>(offset);
        ++size_;
    }
    for (; i < count; ++i)
        push_time(time_at(i));
    if (!(forgotten > 0 && forgotten < count && !wide_)) forgotten = 0;
    reserve_positions(count - forgotten);  // from slot 0 on, as floats (doubles_ is not set)
    for (size_t k = forgotten; k < count; ++k)
        floats_at(k, &floats_[3 * (k - forgotten)]);
    positions_ = static_cast<uint32_t>(count - forgotten);
}

}  // namespace arbiter::reference
