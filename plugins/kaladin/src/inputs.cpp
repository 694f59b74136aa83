#include "inputs.hpp"

namespace arbiter::kaladin {

bool InputStream::add(int64_t t_us, uint64_t tick, bool repeat) {
    // A repeat carries no new decision; an order in the tick of the previous input is
    // part of the same input (a selection and its command, a burst after a lag spike).
    if (repeat || (last_tick_ && tick == *last_tick_)) {
        ++merged_;
        return false;
    }
    last_tick_ = tick;
    recent_.push_back({t_us, tick});
    ++distinct_;
    return true;
}

void InputStream::prune(int64_t now_us, int64_t keep_us, size_t keep_count) {
    // The front may go when the window that remains still covers keep_us and keep_count.
    while (recent_.size() > keep_count && recent_[1].t_us <= now_us - keep_us)
        recent_.pop_front();
}

}  // namespace arbiter::kaladin
