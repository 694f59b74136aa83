#include "arbiter/host/plugin_bounds.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/host_services.hpp"

namespace arbiter::host {

using Clock = std::chrono::steady_clock;

PluginBounds::PluginBounds(std::string plugin, PluginLimits limits, Metrics* metrics)
    : plugin_(std::move(plugin)),
      limits_(limits),
      metrics_(metrics),
      log_tokens_(static_cast<double>(limits.log_bytes_per_s)),
      log_refilled_(Clock::now()) {}

bool PluginBounds::admit_log_line(size_t bytes) {
    {
        std::lock_guard lock(log_mutex_);
        const auto now = Clock::now();
        const double rate = static_cast<double>(limits_.log_bytes_per_s);
        log_tokens_ = std::min(
            rate, log_tokens_ + rate * std::chrono::duration<double>(now - log_refilled_).count());
        log_refilled_ = now;
        // An empty line costs something too: a flood of them is still a flood.
        const double cost = static_cast<double>(std::max<size_t>(bytes, 16));
        if (log_tokens_ >= cost) {
            log_tokens_ -= cost;
            return true;
        }
    }
    log_lines_.fetch_add(1, std::memory_order_relaxed);
    log_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    refused_now();
    return false;
}

bool PluginBounds::admit_metric(std::string_view name) {
    if (!metrics_ || metrics_->admit_name(plugin_, name, limits_.max_metric_names)) return true;
    metric_names_.fetch_add(1, std::memory_order_relaxed);
    refused_now();
    return false;
}

bool PluginBounds::admit_signal(size_t kept, size_t kept_evidence_bytes, size_t evidence_bytes) {
    if (kept < limits_.max_signals_per_call &&
        kept_evidence_bytes + evidence_bytes <= kMaxEvidenceBytesPerCall)
        return true;
    signals_over_bound_.fetch_add(1, std::memory_order_relaxed);
    refused_now();
    return false;
}

void PluginBounds::count_log_lines_lost(uint64_t lines) {
    if (lines == 0) return;
    log_lines_.fetch_add(lines, std::memory_order_relaxed);
    refused_now();
}

void PluginBounds::count_signal_about_a_stranger() {
    signals_about_strangers_.fetch_add(1, std::memory_order_relaxed);
    refused_now();
}

PluginBounds::Refused PluginBounds::refused() const {
    return {log_lines_.load(std::memory_order_relaxed), log_bytes_.load(std::memory_order_relaxed),
            metric_names_.load(std::memory_order_relaxed),
            signals_over_bound_.load(std::memory_order_relaxed),
            signals_about_strangers_.load(std::memory_order_relaxed)};
}

void PluginBounds::refused_now() {
    std::unique_lock lock(say_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;  // another thread is saying it
    const auto now = Clock::now();
    if (last_said_ != Clock::time_point{} && now - last_said_ < kSayEvery) return;
    last_said_ = now;
    const Refused total = refused();
    const Refused since{total.log_lines - said_.log_lines,
                        total.log_bytes - said_.log_bytes,
                        total.metric_names - said_.metric_names,
                        total.signals_over_bound - said_.signals_over_bound,
                        total.signals_about_strangers - said_.signals_about_strangers};
    said_ = total;
    std::vector<std::string> parts;
    if (since.log_lines)
        parts.push_back(fmt::format("{} log line(s) ({} bytes) over log_bytes_per_s = {}",
                                    since.log_lines, since.log_bytes, limits_.log_bytes_per_s));
    if (since.metric_names)
        parts.push_back(fmt::format("{} metric(s) under a new name past max_metric_names = {}",
                                    since.metric_names, limits_.max_metric_names));
    if (since.signals_over_bound)
        parts.push_back(fmt::format(
            "{} signal(s) past max_signals_per_call = {} (or {} MiB of evidence in one call)",
            since.signals_over_bound, limits_.max_signals_per_call,
            kMaxEvidenceBytesPerCall >> 20));
    if (since.signals_about_strangers)
        parts.push_back(fmt::format("{} signal(s) about players its match never had",
                                    since.signals_about_strangers));
    if (parts.empty()) return;
    std::string text;
    for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
    spdlog::warn("plugin '{}': dropped, past its bounds: {} (counted in `arbiter ctl status`; "
                 "said at most every {} s)",
                 plugin_, text, kSayEvery.count());
}

}  // namespace arbiter::host
