// Lists of relay times, oldest first, as the rate checks of several areas keep them (shots,
// kills, acquisitions, hits taken, reconnects): the microseconds their windows are counted
// in, the trimming that keeps a list to its window, and the list's form in the saved state.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include <arbiter/sdk.hpp>

namespace arbiter::reference {

inline constexpr int64_t kSecondUs = 1'000'000;

inline int64_t micros(double seconds) {
    return static_cast<int64_t>(seconds * 1e6);
}

// Drops the times older than `horizon_us` before the newest. Times: a std::deque<int64_t>
// or an arbiter::Ring<int64_t>.
template <class Times>
void trim(Times& times, int64_t horizon_us) {
    while (!times.empty() && times.front() < times.back() - horizon_us)
        times.pop_front();
}

// One list per weapon or item, by its name.
using TimesByName = std::map<std::string, std::deque<int64_t>>;

// A list's form in the saved state, whichever of the two holds it: the count, then each
// time, oldest first.
template <class Times>
void put_times(StateWriter& out, const Times& times) {
    out.put<uint64_t>(times.size());
    for (int64_t t : times)
        out.put<int64_t>(t);
}
template <class Times = std::deque<int64_t>>
Times get_times(StateReader& in) {
    Times times;
    for (uint64_t n = in.get_count(8); n > 0; --n)
        times.push_back(in.get_relay_time("relay time"));
    return times;
}
void put_times_by_name(StateWriter& out, const TimesByName& map);
TimesByName get_times_by_name(StateReader& in);

}  // namespace arbiter::reference
