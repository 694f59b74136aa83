#include "isolation/messages.hpp"

#include <cmath>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"
#include "isolation/channel.hpp"

namespace arbiter::host::isolation {

namespace {

void write_identity(MessageWriter& out, const PluginIdentity& id) {
    out.text(id.name).text(id.version).text(id.contact).text(id.description);
    out.u32(id.abi_major).u32(id.abi_minor).u32(id.abi_minor_required).u32(id.abi_minor_in_use);
    out.u32(id.schema_major).u32(id.schema_minor).u32(id.schema_minor_required);
    out.u64(id.capabilities).u32(static_cast<uint32_t>(id.declared_class));
    out.text(id.config_schema.is_null() ? std::string() : id.config_schema.dump());
    out.text(id.config_schema_problem);
}

[[noreturn]] void refuse(const std::string& what) {
    throw ChannelError(ChannelError::Kind::protocol, what);
}

PluginIdentity read_identity(MessageReader& in) {
    PluginIdentity id;
    id.name = in.text(kMaxIdentityTextBytes);
    id.version = in.text(kMaxIdentityTextBytes);
    id.contact = in.text(kMaxIdentityTextBytes);
    id.description = in.text(kMaxIdentityTextBytes);
    id.abi_major = in.u32();
    id.abi_minor = in.u32();
    id.abi_minor_required = in.u32();
    id.abi_minor_in_use = in.u32();
    id.schema_major = in.u32();
    id.schema_minor = in.u32();
    id.schema_minor_required = in.u32();
    id.capabilities = in.u64();
    const uint32_t model_class = in.u32();
    // The runner negotiated; the host still refuses an answer negotiation would never give.
    if (id.abi_major != ARB_ABI_VERSION_MAJOR || id.abi_minor_in_use > ARB_ABI_VERSION_MINOR)
        refuse(fmt::format("an identity with ABI {}.{} in use", id.abi_major, id.abi_minor_in_use));
    if (id.capabilities & ~ARB_CAP_ALL_FOR_MINOR(id.abi_minor_in_use))
        refuse(fmt::format("an identity with unknown capability bits {:#x}", id.capabilities));
    if (model_class < 1 || model_class > 3)
        refuse(fmt::format("an identity with model class {}", model_class));
    id.declared_class = static_cast<ModelClass>(model_class);
    const std::string schema = in.text(kMaxConfigSchemaBytes);
    id.config_schema_problem = in.text(kMaxIdentityTextBytes);
    if (!schema.empty()) {
        const UntrustedJson parsed = parse_untrusted_json(schema, kMaxConfigSchemaBytes);
        if (!parsed.ok() || !parsed.value.is_object()) refuse("an identity whose schema is no JSON object");
        id.config_schema = parsed.value;
    }
    for (const std::string* text : {&id.name, &id.version, &id.contact, &id.description})
        if (!is_valid_utf8(*text)) refuse("an identity with text that is not UTF-8");
    return id;
}

}  // namespace

std::vector<uint8_t> encode_reply(const RunnerReply& reply) {
    MessageWriter out;
    out.u32(static_cast<uint32_t>(reply.call.status)).text(reply.call.error);
    out.u64(reply.call.signals.size());
    for (const RawSignal& signal : reply.call.signals) {
        out.u32(signal.player).text(signal.code).f64(signal.score).f64(signal.confidence);
        out.u8(signal.tripwire ? 1 : 0).text(signal.evidence_json);
    }
    out.u64(reply.call.dropped);
    out.u8(reply.blob ? 1 : 0);
    if (reply.blob) out.bytes(*reply.blob);
    out.u64(reply.logs.size());
    for (const LogLine& line : reply.logs) out.u32(line.level).text(line.text);
    out.u64(reply.logs_dropped);
    out.u64(reply.metrics.size());
    for (const MetricUpdate& metric : reply.metrics)
        out.text(metric.name).u8(metric.counter ? 1 : 0).f64(metric.value);
    out.u8(reply.identity ? 1 : 0);
    if (reply.identity) write_identity(out, *reply.identity);
    return std::move(out.data());
}

RunnerReply decode_reply(std::span<const uint8_t> bytes) {
    MessageReader in(bytes);
    RunnerReply reply;
    reply.call.status = static_cast<arb_status>(in.u32());
    reply.call.error = in.text(kMaxErrorBytes);
    const uint64_t signals = in.u64();
    if (signals > kMaxSignalsPerReply) refuse(fmt::format("{} signals in one reply", signals));
    // Each signal takes at least 45 bytes: a count past what is left is a lie.
    if (signals > bytes.size() / 45) refuse(fmt::format("{} signals in a reply of {} bytes", signals, bytes.size()));
    reply.call.signals.reserve(signals);
    for (uint64_t i = 0; i < signals; ++i) {
        RawSignal signal;
        signal.player = in.u32();
        signal.code = in.text(128);
        signal.score = in.f64();
        signal.confidence = in.f64();
        const uint8_t tripwire = in.u8();
        if (tripwire > 1) refuse("a signal whose trip-wire flag is neither 0 nor 1");
        signal.tripwire = tripwire == 1;
        signal.evidence_json = in.text(64 * 1024);
        reply.call.signals.push_back(std::move(signal));
    }
    reply.call.dropped = in.u64();
    const uint8_t has_blob = in.u8();
    if (has_blob > 1) refuse("a reply whose blob flag is neither 0 nor 1");
    if (has_blob) {
        const auto blob = in.bytes(kMaxReplyBytes);
        reply.blob.emplace(blob.begin(), blob.end());
    }
    const uint64_t logs = in.u64();
    if (logs > kMaxLogLinesPerReply) refuse(fmt::format("{} log lines in one reply", logs));
    for (uint64_t i = 0; i < logs; ++i) {
        LogLine line;
        line.level = in.u32();
        if (line.level > 5) refuse(fmt::format("a log line of level {}", line.level));
        line.text = in.text(kMaxLogLineBytes);
        reply.logs.push_back(std::move(line));
    }
    reply.logs_dropped = in.u64();
    const uint64_t metrics = in.u64();
    if (metrics > kMaxMetricsPerReply) refuse(fmt::format("{} metrics in one reply", metrics));
    for (uint64_t i = 0; i < metrics; ++i) {
        MetricUpdate metric;
        metric.name = in.text(256);
        const uint8_t counter = in.u8();
        if (counter > 1) refuse("a metric whose kind is neither 0 nor 1");
        metric.counter = counter == 1;
        metric.value = in.f64();
        if (!std::isfinite(metric.value)) refuse("a metric that is not a finite number");
        reply.metrics.push_back(std::move(metric));
    }
    const uint8_t has_identity = in.u8();
    if (has_identity > 1) refuse("a reply whose identity flag is neither 0 nor 1");
    if (has_identity) reply.identity = read_identity(in);
    in.finish();
    return reply;
}

}  // namespace arbiter::host::isolation
