// How often the review page lets anyone guess its token. Failed logins are held per
// address and over all addresses together: a guesser who spreads tries over many
// addresses (a /64 of IPv6, a botnet, 127.0.0.0/8 on the host itself) meets the overall
// bound, where a table per address alone would let each address start afresh.
//
// The table per address is bounded: past its capacity the entry that failed least
// recently goes, never the whole table, so flooding it with new addresses does not free an
// address that is held. With a capacity above the overall bound, nobody can push a held
// address out within its window at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace arbiter::host::review_page {

class LoginThrottle {
  public:
    using Clock = std::chrono::steady_clock;

    struct Limits {
        int per_address = 10;   // failed logins an address may make per window
        int overall = 60;       // failed logins all addresses together may make per window
        std::chrono::seconds window{60};
        size_t addresses = 1024;  // addresses remembered at once (keep above `overall`)
    };

    enum class Decision {
        allowed,
        address_held,  // this address failed per_address times within its window
        all_held,      // all addresses together failed `overall` times within the window
    };

    LoginThrottle() : LoginThrottle(Limits{}) {}
    explicit LoginThrottle(Limits limits) : limits_(limits) {}

    // Whether a login from `address` may be tried now.
    Decision check(const std::string& address, Clock::time_point now);
    // A login from `address` failed. Returns a line for the log when there is one to
    // write: when an address or all of them become held, and, at the first failure of a
    // new window, how many failed in the one before. Never a line per try.
    std::string record_failure(const std::string& address, Clock::time_point now);

    size_t addresses_held_in_memory() const { return by_address_.size(); }

  private:
    struct Failures {
        int count = 0;
        Clock::time_point until;  // the end of this address's window
        Clock::time_point latest;
    };
    // Starts a new overall window when the last one has passed; `now` is its start.
    void roll_overall_window(Clock::time_point now);

    Limits limits_;
    std::map<std::string, Failures> by_address_;
    int overall_count_ = 0;
    Clock::time_point overall_until_{};
    // What the window before this one held, for the log line at the start of a new one.
    uint64_t refused_in_window_ = 0;
};

}  // namespace arbiter::host::review_page
