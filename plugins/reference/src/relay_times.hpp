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

// Drops the times older than `horizon_us` before the newest.
inline void trim(std::deque<int64_t>& times, int64_t horizon_us) {
    while (!times.empty() && times.front() < times.back() - horizon_us)
        times.pop_front();
}

// One list per weapon or item, by its name.
using TimesByName = std::map<std::string, std::deque<int64_t>>;

void put_times(StateWriter& out, const std::deque<int64_t>& times);
std::deque<int64_t> get_times(StateReader& in);
void put_times_by_name(StateWriter& out, const TimesByName& map);
TimesByName get_times_by_name(StateReader& in);

}  // namespace arbiter::reference
