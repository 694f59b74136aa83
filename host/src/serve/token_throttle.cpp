#include "serve/token_throttle.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace arbiter::host::serve {

TokenThrottle::TokenThrottle(Limits limits)
    : limits_(limits), failures_(limits.addresses), successes_(limits.addresses) {}

void TokenThrottle::roll(Window& window, Clock::time_point now) const {
    if (window.failures > 0 && now - window.start >= limits_.window) window = {};
}

bool TokenThrottle::over(Window& window, uint64_t bound, Clock::time_point now) const {
    roll(window, now);
    return window.failures >= bound;
}

uint64_t TokenThrottle::seconds_left(const Window& window, Clock::time_point now) const {
    const auto left = window.start + limits_.window - now;
    const auto seconds = std::chrono::ceil<std::chrono::seconds>(left).count();
    return static_cast<uint64_t>(std::max<int64_t>(1, seconds));
}

std::string TokenThrottle::refusal(const std::string& address, Clock::time_point now) {
    if (Window* mine = failures_.find(address); mine && over(*mine, limits_.per_address, now)) {
        ++tally_.refused_unchecked;
        return fmt::format(
            "too many failed hellos from {} ({} within {} ms, serve.token_failures_per_address): "
            "its hellos are refused unchecked for {} s more",
            address, limits_.per_address, limits_.window.count(), seconds_left(*mine, now));
    }
    if (over(overall_, limits_.overall, now) && !successes_.find(address)) {
        ++tally_.refused_unchecked;
        return fmt::format(
            "too many failed hellos from all addresses ({} within {} ms, "
            "serve.token_failures_overall): hellos from an address that has given no right "
            "token are refused unchecked for {} s more",
            limits_.overall, limits_.window.count(), seconds_left(overall_, now));
    }
    return {};
}

bool TokenThrottle::failed(const std::string& address, Clock::time_point now) {
    for (Window* window : {&failures_.touch(address), &overall_}) {
        roll(*window, now);
        if (window->failures == 0) window->start = now;
        ++window->failures;
    }
    return tally_.failures++ == 0;
}

void TokenThrottle::succeeded(const std::string& address, Clock::time_point) {
    successes_.touch(address) = true;
}

TokenThrottle::Tally TokenThrottle::take_tally(Clock::time_point now) {
    Tally tally = std::exchange(tally_, Tally{});
    auto throttled = [&](const Window& window, uint64_t bound) {
        return window.failures >= bound && now - window.start < limits_.window;
    };
    failures_.for_each([&](const Window& window) {
        tally.addresses_throttled += throttled(window, limits_.per_address);
    });
    tally.overall_throttled = throttled(overall_, limits_.overall);
    return tally;
}

}  // namespace arbiter::host::serve
