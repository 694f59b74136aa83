#include "review_page/login_throttle.hpp"

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::review_page {

void LoginThrottle::roll_overall_window(Clock::time_point now) {
    if (now < overall_until_) return;
    overall_count_ = 0;
    refused_in_window_ = 0;
    overall_until_ = now + limits_.window;
}

LoginThrottle::Decision LoginThrottle::check(const std::string& address, Clock::time_point now) {
    if (now < overall_until_ && overall_count_ >= limits_.overall) {
        ++refused_in_window_;
        return Decision::all_held;
    }
    const auto found = by_address_.find(address);
    if (found != by_address_.end() && now < found->second.until &&
        found->second.count >= limits_.per_address) {
        ++refused_in_window_;
        return Decision::address_held;
    }
    return Decision::allowed;
}

std::string LoginThrottle::record_failure(const std::string& address, Clock::time_point now) {
    std::string line;
    if (now >= overall_until_ && overall_count_ > 0)
        line = fmt::format("{} failed login(s) in the last window, {} refused while held; ",
                           overall_count_, refused_in_window_);
    roll_overall_window(now);
    ++overall_count_;

    std::erase_if(by_address_, [&](const auto& item) { return item.second.until <= now; });
    auto found = by_address_.find(address);
    if (found == by_address_.end()) {
        if (by_address_.size() >= limits_.addresses) {
            // The address that failed least recently makes room; a held one has failed
            // within its window, so it goes only after `addresses` newer ones did too.
            auto stalest = by_address_.begin();
            for (auto it = by_address_.begin(); it != by_address_.end(); ++it)
                if (it->second.latest < stalest->second.latest) stalest = it;
            by_address_.erase(stalest);
        }
        found = by_address_.emplace(address, Failures{0, now + limits_.window, now}).first;
    }
    Failures& failures = found->second;
    ++failures.count;
    failures.latest = now;

    if (overall_count_ == 1)
        line += fmt::format("a failed login from {}", escape_for_message(address, 64));
    if (failures.count == limits_.per_address)
        line += fmt::format("{}{} failed logins from {}: refusing it until its window ends",
                            line.empty() ? "" : "; ", failures.count,
                            escape_for_message(address, 64));
    if (overall_count_ == limits_.overall)
        line += fmt::format(
            "{}{} failed logins from {} address(es) within {} s: refusing every login until the "
            "window ends",
            line.empty() ? "" : "; ", overall_count_, by_address_.size(),
            limits_.window.count());
    return line;
}

}  // namespace arbiter::host::review_page
