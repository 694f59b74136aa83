// What the runner answers the host, as bytes: a call's result with its signals, a saved
// blob, the log lines and metrics the plugin wrote during the call, and after a load the
// plugin's identity. Written by the runner (encode_reply), read by the host
// (decode_reply), which trusts none of it: every field is bounded, every enum checked,
// every signal checked again as if the plugin had emitted it in process.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arbiter/host/analyzer_instance.hpp"
#include "arbiter/host/negotiation.hpp"

namespace arbiter::host::isolation {

// Bounds on what a reply may hold; past them the reply is refused whole.
inline constexpr uint64_t kMaxErrorBytes = 64 * 1024;
inline constexpr uint64_t kMaxSignalsPerReply = 1u << 20;
inline constexpr uint64_t kMaxLogLinesPerReply = 256;
inline constexpr uint64_t kMaxLogLineBytes = 4096;
inline constexpr uint64_t kMaxMetricsPerReply = 4096;
inline constexpr uint64_t kMaxIdentityTextBytes = 4096;
inline constexpr uint64_t kMaxConfigSchemaBytes = 1u << 20;
// A whole reply; a saved state larger than this cannot cross (the plugin's save fails).
inline constexpr uint64_t kMaxReplyBytes = 2ull << 30;

struct LogLine {
    uint32_t level = 0;  // spdlog's level numbers, trace (0) to critical (5)
    std::string text;
};

struct MetricUpdate {
    std::string name;  // as the host publishes it: "<plugin>.<name>"
    bool counter = true;
    double value = 0;  // a counter's increase since the last reply, or a gauge's value
};

struct RunnerReply {
    CallResult call;
    std::optional<std::vector<uint8_t>> blob;  // save_state
    std::vector<LogLine> logs;
    uint64_t logs_dropped = 0;
    std::vector<MetricUpdate> metrics;
    std::optional<PluginIdentity> identity;  // load
};

std::vector<uint8_t> encode_reply(const RunnerReply& reply);
// Throws ChannelError (protocol) on anything malformed. Signals are decoded as sent: the
// caller checks them (signal_problem) as it would a plugin's.
RunnerReply decode_reply(std::span<const uint8_t> bytes);

}  // namespace arbiter::host::isolation
