// How fast a token may be guessed. Every hello refused where a token is needed (a wrong or
// missing token, a relay nobody configured, a hello that is not one) counts against the
// address it came from and against all addresses together, each in a window of
// serve.token_failure_window_ms. Past serve.token_failures_per_address, that address's
// hellos are refused unchecked until its window ends; past serve.token_failures_overall,
// so are those of every address that has not given a right token, so that a guesser with
// many addresses gets no further than one with a few. What is remembered per address is
// bounded (serve.token_failure_addresses): the least recently seen address is forgotten.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

namespace arbiter::host::serve {

class TokenThrottle {
  public:
    using Clock = std::chrono::steady_clock;
    struct Limits {
        uint64_t per_address = 5;
        uint64_t overall = 100;
        std::chrono::milliseconds window{60'000};
        size_t addresses = 4096;  // remembered, of those that failed; as many that succeeded
    };

    explicit TokenThrottle(Limits limits);

    // Before a hello from `address` is checked: "" when it may be, else why not, fit to
    // send back. A hello refused here is tallied, but is not a failure: it does not make
    // the wait longer.
    std::string refusal(const std::string& address, Clock::time_point now);
    // A hello from `address` was checked and refused. True when it is the first since the
    // last tally, so that the log can show one in full and count the rest.
    bool failed(const std::string& address, Clock::time_point now);
    // A hello from `address` gave a right token: the address is exempt from the overall
    // bound (not from its own).
    void succeeded(const std::string& address, Clock::time_point now);

    // What happened since the last tally, for one log line a period instead of one a try.
    struct Tally {
        uint64_t failures = 0;             // hellos checked and refused
        uint64_t refused_unchecked = 0;    // hellos refused here, past a bound
        uint64_t addresses_throttled = 0;  // addresses past their bound now
        bool overall_throttled = false;    // past the overall bound now
        bool empty() const { return failures == 0 && refused_unchecked == 0; }
    };
    Tally take_tally(Clock::time_point now);

    // Addresses remembered, failed and succeeded (each at most Limits::addresses).
    size_t remembered() const { return failures_.size() + successes_.size(); }

  private:
    // Keyed by address, the least recently touched forgotten first once full.
    template <typename Value>
    class RecentTable {
      public:
        explicit RecentTable(size_t capacity) : capacity_(capacity) {}
        Value* find(const std::string& key) {
            const auto it = index_.find(key);
            if (it == index_.end()) return nullptr;
            order_.splice(order_.begin(), order_, it->second);
            return &it->second->second;
        }
        // The entry for `key`, made (from Value{}) when there is none.
        Value& touch(const std::string& key) {
            if (Value* found = find(key)) return *found;
            if (order_.size() >= capacity_) {
                index_.erase(order_.back().first);
                order_.pop_back();
            }
            order_.emplace_front(key, Value{});
            index_.emplace(key, order_.begin());
            return order_.front().second;
        }
        size_t size() const { return order_.size(); }
        template <typename Visit>
        void for_each(Visit visit) const {
            for (const auto& [key, value] : order_)
                visit(value);
        }

      private:
        size_t capacity_;
        std::list<std::pair<std::string, Value>> order_;  // the most recent first
        std::unordered_map<std::string, typename std::list<std::pair<std::string, Value>>::iterator>
            index_;
    };
    struct Window {
        Clock::time_point start{};
        uint64_t failures = 0;
    };

    // Starts `window` again once its time is up.
    void roll(Window& window, Clock::time_point now) const;
    // True while `window` is past `bound`.
    bool over(Window& window, uint64_t bound, Clock::time_point now) const;
    uint64_t seconds_left(const Window& window, Clock::time_point now) const;

    Limits limits_;
    RecentTable<Window> failures_;
    RecentTable<bool> successes_;
    Window overall_;
    Tally tally_;
};

}  // namespace arbiter::host::serve
