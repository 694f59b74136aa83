// What one plugin may take of the host, whatever its code does: new metric names, log
// bytes a second, signals and evidence in one call. A plugin in the host's process and an
// isolated one are held to the same bounds, here, on the host's side (a child's runner
// could say anything). What a plugin loses past a bound is counted, shown by `arbiter ctl
// status` and the metrics, and said in the log as a count now and then, never a line per
// refusal: a bound that logged each refusal would hand the flood on to the log.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "arbiter/host/config.hpp"

namespace arbiter::host {

class Metrics;

class PluginBounds {
  public:
    // `metrics` may be null (then names are not bounded here, and nothing is published).
    PluginBounds(std::string plugin, PluginLimits limits, Metrics* metrics);

    // Whether a log line of `bytes` bytes may be written now, within log_bytes_per_s (a
    // bucket that holds one second's worth and fills at that rate). Any thread.
    bool admit_log_line(size_t bytes);
    // Whether the plugin may record the metric `name` (its own, without the "PLUGIN."
    // before it): a name it has used before, or a new one within max_metric_names.
    bool admit_metric(std::string_view name);
    // Whether one more signal, with `evidence_bytes` of evidence, may be kept in a call
    // that has kept `kept` signals with `kept_evidence_bytes` already: within
    // max_signals_per_call and kMaxEvidenceBytesPerCall.
    bool admit_signal(size_t kept, size_t kept_evidence_bytes, size_t evidence_bytes);
    // Log lines lost before they reached the host (an isolated reply holds so many).
    void count_log_lines_lost(uint64_t lines);
    // A signal about a player the match never had (the host drops it; ABI: a plugin
    // reports on players of the batch in hand).
    void count_signal_about_a_stranger();

    // What has been refused so far, for `arbiter ctl status`.
    struct Refused {
        uint64_t log_lines = 0;
        uint64_t log_bytes = 0;
        uint64_t metric_names = 0;
        uint64_t signals_over_bound = 0;
        uint64_t signals_about_strangers = 0;
        bool any() const {
            return log_lines || metric_names || signals_over_bound || signals_about_strangers;
        }
    };
    Refused refused() const;

    // Evidence a call may bring in all, whatever the count: what one isolated reply holds.
    static constexpr uint64_t kMaxEvidenceBytesPerCall = 64ull << 20;
    // How often the log says what was refused (the first refusal is said at once).
    static constexpr std::chrono::seconds kSayEvery{10};
    // Limits that bound nothing: for an isolated plugin's runner, whose host holds the
    // plugin to its real ones.
    static constexpr PluginLimits kUnbounded{UINT64_MAX, UINT64_MAX, UINT64_MAX};

  private:
    void refused_now();  // says what was refused since it last did, at most every kSayEvery

    const std::string plugin_;
    const PluginLimits limits_;
    Metrics* const metrics_;

    std::mutex log_mutex_;
    double log_tokens_;
    std::chrono::steady_clock::time_point log_refilled_;

    std::atomic<uint64_t> log_lines_{0}, log_bytes_{0}, metric_names_{0}, signals_over_bound_{0},
        signals_about_strangers_{0};
    std::mutex say_mutex_;
    std::chrono::steady_clock::time_point last_said_{};
    Refused said_;  // what the log has been told of
};

}  // namespace arbiter::host
