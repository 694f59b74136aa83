#include "relay_times.hpp"

namespace arbiter::reference {

void put_times_by_name(StateWriter& out, const TimesByName& map) {
    out.put<uint64_t>(map.size());
    for (const auto& [name, times] : map) {
        out.put_string(name);
        put_times(out, times);
    }
}

TimesByName get_times_by_name(StateReader& in) {
    TimesByName map;
    for (uint64_t n = in.get_count(16); n > 0; --n) {
        std::string name = in.get_string();
        map[name] = get_times(in);
    }
    return map;
}

}  // namespace arbiter::reference
