#include "isolation/reply_intake.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <spdlog/spdlog.h>

#include <arbiter/arbiter_signal_rules.hpp>

#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::isolation {

CallResult take_in_reply(RunnerReply&& reply, const std::string& label, PluginBounds& bounds,
                         Metrics* metrics) {
    // Tagged by the host, not by the runner, which could write anything: a line from an
    // isolated plugin never reads as the host's own.
    for (const LogLine& line : reply.logs) {
        if (!bounds.admit_log_line(line.text.size())) continue;
        spdlog::log(static_cast<spdlog::level::level_enum>(line.level), "(isolated '{}') {}",
                    label, escape_for_message(line.text, kMaxLogLineBytes));
    }
    // Past the lines one reply holds: lost to the same bound as the rest.
    bounds.count_log_lines_lost(reply.logs_dropped);
    if (metrics) {
        // Only the plugin's own names, within its bound, and the host's count of its
        // dropped signals.
        const std::string own = label + ".";
        const std::string dropped = "host.signals_dropped." + label;
        for (const MetricUpdate& metric : reply.metrics) {
            const std::string_view name = std::string_view(metric.name).substr(
                std::min(own.size(), metric.name.size()));
            const bool ours = metric.name.starts_with(own) && valid_metric_name(name) &&
                              std::isfinite(metric.value);
            if (metric.name == dropped) {
                if (std::isfinite(metric.value)) metrics->add(metric.name, metric.value);
                continue;
            }
            if (!ours || !bounds.admit_metric(name)) continue;
            metric.counter ? metrics->add(metric.name, metric.value)
                           : metrics->set(metric.name, metric.value);
        }
    }
    CallResult result;
    result.status = reply.call.status;
    result.error = escape_for_message(reply.call.error, 4096);
    result.dropped = reply.call.dropped;
    for (RawSignal& signal : reply.call.signals) {
        // The runner checked them; the host checks again, since the runner is the plugin's.
        const arb_signal view{ARB_SIGNAL_SIZE_1_0,
                              signal.player,
                              signal.tripwire ? ARB_SIGNAL_TRIPWIRE : 0u,
                              signal.score,
                              signal.confidence,
                              {signal.code.data(), signal.code.size()},
                              {signal.evidence_json.data(), signal.evidence_json.size()}};
        if (const std::string problem = signal_rules::signal_problem(&view); !problem.empty()) {
            ++result.dropped;
            if (metrics) metrics->add("host.signals_dropped." + label, 1);
            if (bounds.admit_log_line(problem.size() + 128))
                spdlog::warn("plugin '{}': dropped a signal (code '{}', player {}): {}", label,
                             escape_for_message(signal.code, 128), signal.player, problem);
            continue;
        }
        if (!bounds.admit_signal(result.signals.size(), result.evidence_bytes,
                                   signal.evidence_json.size())) {
            ++result.dropped;
            continue;
        }
        result.evidence_bytes += signal.evidence_json.size();
        if (signal.evidence_json.empty()) signal.evidence_json = "{}";
        result.signals.push_back(std::move(signal));
    }
    return result;
}

}  // namespace arbiter::host::isolation
