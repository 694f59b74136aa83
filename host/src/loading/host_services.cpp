#include "arbiter/host/host_services.hpp"

#include <cmath>
#include <string_view>

#include <spdlog/spdlog.h>

#include "arbiter/host/plugin_bounds.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

void Metrics::add(const std::string& name, double value) {
    std::lock_guard lock(mutex_);
    values_[name].value += value;
}

void Metrics::set(const std::string& name, double value) {
    std::lock_guard lock(mutex_);
    values_[name] = {value, false};
}

double Metrics::get(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = values_.find(name);
    return it == values_.end() ? 0.0 : it->second.value;
}

std::map<std::string, double> Metrics::snapshot() const {
    std::lock_guard lock(mutex_);
    std::map<std::string, double> values;
    for (const auto& [name, value] : values_) values.emplace(name, value.value);
    return values;
}

std::map<std::string, Metrics::Value> Metrics::entries() const {
    std::lock_guard lock(mutex_);
    return values_;
}

bool Metrics::admit_name(const std::string& owner, std::string_view name, uint64_t limit) {
    std::lock_guard lock(mutex_);
    auto owned = names_by_owner_.find(owner);
    if (owned == names_by_owner_.end()) owned = names_by_owner_.emplace(owner, std::set<std::string, std::less<>>{}).first;
    if (owned->second.contains(name)) return true;
    if (owned->second.size() >= limit) return false;
    owned->second.emplace(name);
    return true;
}

bool valid_metric_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
    return true;
}

namespace {

std::atomic<bool> in_forked_copy{false};

// Whether a service drops what it is given: in a forked copy, or for a quiet instance.
bool dropped(arb_host* host) {
    return !host || in_forked_copy.load(std::memory_order_relaxed) ||
           reinterpret_cast<ServiceContext*>(host)->quiet.load(std::memory_order_relaxed);
}

ServiceContext* context_of(arb_host* host) {
    return reinterpret_cast<ServiceContext*>(host);
}

std::string_view view(arb_string text) {
    return text.data ? std::string_view(text.data, static_cast<size_t>(text.size))
                     : std::string_view();
}

// Every service is noexcept and catches everything: an exception (bad_alloc in a log
// line, say) must never unwind through the plugin's C frames.
void service_log(arb_host* host, uint32_t level, arb_string message) noexcept try {
    if (dropped(host)) return;
    auto spd_level = spdlog::level::info;
    switch (level) {
        case ARB_LOG_TRACE:
            spd_level = spdlog::level::trace;
            break;
        case ARB_LOG_DEBUG:
            spd_level = spdlog::level::debug;
            break;
        case ARB_LOG_INFO:
            spd_level = spdlog::level::info;
            break;
        case ARB_LOG_WARN:
            spd_level = spdlog::level::warn;
            break;
        default:
            spd_level = spdlog::level::err;
            break;
    }
    ServiceContext* context = context_of(host);
    if (context->bounds && !context->bounds->admit_log_line(view(message).size())) return;
    spdlog::log(spd_level, "[plugin {}] {}", context->plugin_name, view(message));
} catch (...) {
    // The line is lost; nothing better can be done without allocating.
}

int64_t service_relay_time(arb_host* host) noexcept {
    return host ? context_of(host)->relay_time_us.load(std::memory_order_relaxed) : 0;
}

void record_metric(arb_host* host, arb_string name, double value, bool set) noexcept try {
    if (dropped(host)) return;
    ServiceContext* context = context_of(host);
    std::string_view metric = view(name);
    if (!valid_metric_name(metric) || !std::isfinite(value)) {
        // Said within the plugin's log budget: the warning is the plugin's doing.
        if (!context->bounds || context->bounds->admit_log_line(metric.size() + 80))
            spdlog::warn("[plugin {}] ignored metric '{}' = {}: a name is 1 to 64 of [a-z0-9_.] "
                         "and a value is finite",
                         context->plugin_name, escape_for_message(metric, 80), value);
        return;
    }
    if (!context->metrics) return;
    if (context->bounds && !context->bounds->admit_metric(metric)) return;
    std::string full = context->plugin_name + "." + std::string(metric);
    if (set) full += context->gauge_suffix;
    set ? context->metrics->set(full, value) : context->metrics->add(full, value);
} catch (...) {
    // The metric is lost (out of memory); the plugin goes on.
}

void service_metric_add(arb_host* host, arb_string name, double value) noexcept {
    record_metric(host, name, value, false);
}
void service_metric_set(arb_host* host, arb_string name, double value) noexcept {
    record_metric(host, name, value, true);
}

}  // namespace

void services_in_forked_copy() {
    in_forked_copy.store(true, std::memory_order_relaxed);
}

const arb_host_services* host_services_table() {
    static const arb_host_services table = {
        sizeof(arb_host_services), &service_log,        &service_relay_time,
        &service_metric_add,       &service_metric_set,
    };
    return &table;
}

}  // namespace arbiter::host
