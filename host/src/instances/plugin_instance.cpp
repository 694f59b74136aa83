#include "arbiter/host/plugin_instance.hpp"

#include <arbiter/arbiter_signal_rules.hpp>

#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/config_schema_check.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

// The C sink handed to the plugin; forwards to the instance's checks.
struct SinkAdapter {
    PluginInstance* instance;
    CallResult* result;

    static arb_status emit(void* context, const arb_signal* signal) {
        auto* self = static_cast<SinkAdapter*>(context);
        try {
            return self->instance->check_signal_and_keep(signal, *self->result)
                       ? ARB_OK
                       : ARB_ERR_INVALID_ARGUMENT;
        } catch (...) {
            return ARB_ERR_OUT_OF_MEMORY;  // nothing may unwind into the plugin
        }
    }
};

CallResult reconfigure_unsupported() {
    CallResult result;
    result.status = ARB_ERR_UNSUPPORTED;
    result.error = "the plugin cannot take a new config without a reload (no ARB_CAP_RECONFIGURE)";
    return result;
}

namespace {

// What create and configure are handed: the same table, so a plugin reads one shape.
arb_create_args create_args(arb_host* host, const PluginSettings& settings,
                            std::span<const uint8_t> baseline, uint32_t shard_index,
                            uint32_t shard_count) {
    arb_create_args args{};
    args.struct_size = sizeof args;
    args.host = host;
    args.services = host_services_table();
    args.config = {settings.config.data(), settings.config.size()};
    args.baseline = {baseline.data(), baseline.size()};
    args.shard_index = shard_index;
    args.shard_count = shard_count;
    return args;
}

}  // namespace

bool PluginInstance::check_signal_and_keep(const arb_signal* signal, CallResult& result) {
    std::string problem = signal_rules::signal_problem(signal);
    if (!problem.empty()) {
        ++result.dropped;
        if (context_->quiet.load(std::memory_order_relaxed)) return false;
        if (metrics_) metrics_->add("host.signals_dropped." + label(), 1);
        // Within the plugin's log budget: a flood of bad signals is the plugin's flood.
        if (context_->bounds->admit_log_line(problem.size() + 128)) {
            std::string code =
                signal && signal->code.data
                    ? std::string(signal->code.data, std::min<uint64_t>(signal->code.size, 128))
                    : "";
            spdlog::warn("plugin '{}': dropped a signal (code '{}', player {}): {}", label(),
                         escape_for_message(code, 128), signal ? signal->player : 0, problem);
        }
        return false;
    }
    const uint64_t evidence_bytes = signal->evidence_json.size;
    if (!context_->bounds->admit_signal(result.signals.size(), result.evidence_bytes,
                                        evidence_bytes)) {
        ++result.dropped;
        return false;
    }
    result.evidence_bytes += evidence_bytes;
    RawSignal raw;
    raw.player = signal->player;
    raw.code.assign(signal->code.data, signal->code.size);
    raw.score = signal->score;
    raw.confidence = signal->confidence;
    raw.tripwire = (signal->flags & ARB_SIGNAL_TRIPWIRE) != 0;
    raw.evidence_json = signal->evidence_json.size
                            ? std::string(signal->evidence_json.data, signal->evidence_json.size)
                            : std::string("{}");
    result.signals.push_back(std::move(raw));
    return true;
}

namespace {

std::string place_config_problem(const PluginSettings& settings, const std::string& detail,
                                 const char* verb) {
    // The SDK's form is "key.path: problem", and a quoted TOML key may hold spaces or
    // even ": ". Prefer the longest prefix before a ": " that names a key of the table.
    std::string key;
    for (auto colon = detail.find(": "); colon != std::string::npos;
         colon = detail.find(": ", colon + 1)) {
        std::string candidate = detail.substr(0, colon);
        if (settings.config_positions.count(candidate)) key = candidate;
    }
    // A key the table does not have (one the plugin requires, say): take the first word.
    if (key.empty()) {
        auto colon = detail.find(": ");
        if (colon != std::string::npos && detail.find(' ') > colon) key = detail.substr(0, colon);
    }
    if (key.empty())
        return fmt::format("{}: plugin '{}' {}: {}", settings.position.str(), settings.name, verb,
                           detail.empty() ? "(no detail given)" : detail);
    return fmt::format("{}: plugin '{}' {}: plugins.{}.config.{}: {}", settings.locate(key).str(),
                       settings.name, verb, settings.name, key, detail.substr(key.size() + 2));
}

}  // namespace

std::string describe_config_refusal(const PluginSettings& settings, const std::string& detail) {
    return place_config_problem(settings, detail, "refused its config");
}

std::string describe_create_failure(const PluginSettings& settings, arb_status status,
                                    const std::string& detail) {
    if (status == ARB_OK)
        return fmt::format("{}: plugin '{}' ({}): create returned ARB_OK but no instance",
                           settings.position.str(), settings.name, settings.library.string());
    if (status == ARB_ERR_CONFIG) return describe_config_refusal(settings, detail);
    return fmt::format("{}: plugin '{}' ({}): create failed with {}{}{}", settings.position.str(),
                       settings.name, settings.library.string(), status_name(status),
                       detail.empty() ? "" : ": ", detail);
}

std::string check_config_schema(const PluginLibrary& library, const PluginSettings& settings) {
    const nlohmann::json& schema = library.identity().config_schema;
    if (schema.is_null()) return "";
    const std::string problem = check_against_schema(flexbuffer_to_json(settings.config), schema);
    if (problem.empty()) return "";
    return place_config_problem(settings, problem + " (by the schema it describes)",
                                "refused its config");
}

PluginInstance::PluginInstance(std::shared_ptr<PluginLibrary> library,
                               const PluginSettings& settings, std::span<const uint8_t> baseline,
                               uint32_t shard_index, uint32_t shard_count, Metrics* metrics,
                               std::shared_ptr<PluginBounds> bounds)
    : library_(std::move(library)),
      context_(std::make_unique<ServiceContext>()),
      metrics_(metrics),
      shard_index_(shard_index),
      shard_count_(shard_count) {
    context_->plugin_name = library_->label();
    context_->metrics = metrics;
    context_->bounds = bounds ? std::move(bounds)
                              : std::make_shared<PluginBounds>(library_->label(), settings.limits,
                                                               metrics);
    if (shard_count > 1) context_->gauge_suffix = "#" + std::to_string(shard_index);
    if (std::string problem = check_config_schema(*library_, settings); !problem.empty())
        throw PluginError(problem);
    const arb_create_args args =
        create_args(context_->handle(), settings, baseline, shard_index, shard_count);

    arb_instance* created = nullptr;
    arb_status status = library_->api().create(&args, &created);
    if (status == ARB_OK && created) {
        handle_ = created;
        return;
    }
    const char* last = created ? library_->api().last_error(created) : nullptr;
    std::string detail = last ? std::string(last) : std::string();
    if (created) library_->api().destroy(created);
    throw CreateError(describe_create_failure(settings, status, detail), status, detail);
}

PluginInstance::~PluginInstance() {
    if (handle_) library_->api().destroy(handle_);
}

std::string PluginInstance::last_error() {
    const char* text = library_->api().last_error(handle_);
    return text ? std::string(text) : std::string();
}

CallResult PluginInstance::on_batch(const VerifiedBatch& batch) {
    return on_batch_bytes(batch.bytes, batch.last_relay_time_us);
}

CallResult PluginInstance::on_batch_bytes(std::span<const uint8_t> bytes,
                                          int64_t last_relay_time_us) {
    CallResult result;
    context_->relay_time_us.store(last_relay_time_us, std::memory_order_relaxed);
    SinkAdapter adapter{this, &result};
    arb_signal_sink sink{sizeof(arb_signal_sink), &adapter, &SinkAdapter::emit};
    result.status = library_->api().on_batch(handle_, {bytes.data(), bytes.size()}, &sink);
    if (result.status != ARB_OK) result.error = last_error();
    return result;
}

CallResult PluginInstance::on_match_end(const std::string& relay_id, uint64_t match_id) {
    CallResult result;
    if (!library_->api().on_match_end) return result;
    SinkAdapter adapter{this, &result};
    arb_signal_sink sink{sizeof(arb_signal_sink), &adapter, &SinkAdapter::emit};
    result.status =
        library_->api().on_match_end(handle_, {relay_id.data(), relay_id.size()}, match_id, &sink);
    if (result.status != ARB_OK) result.error = last_error();
    return result;
}

std::optional<std::vector<uint8_t>> PluginInstance::take_blob(
    arb_status (*slot)(arb_instance*, arb_bytes*), const char* slot_name, const char* missing,
    std::string& error) {
    if (!slot) {
        error = missing;
        return std::nullopt;
    }
    arb_bytes out{};
    arb_status status = slot(handle_, &out);
    if (status != ARB_OK) {
        error = std::string(status_name(status)) + ": " + last_error();
        return std::nullopt;
    }
    if (!out.data && out.size) {
        error = std::string(slot_name) + " returned a NULL blob of non-zero size";
        return std::nullopt;
    }
    return std::vector<uint8_t>(out.data, out.data + out.size);
}

std::optional<std::vector<uint8_t>> PluginInstance::save_state(std::string& error) {
    return take_blob(library_->api().save_state, "save_state",
                     "the plugin keeps no state across reloads (no ARB_CAP_STATE)", error);
}

CallResult PluginInstance::configure(const PluginSettings& settings,
                                     std::span<const uint8_t> baseline) {
    if (!library_->api().configure) return reconfigure_unsupported();
    // Refused before the plugin sees it, placed already: thrown, as create's refusals are.
    if (std::string problem = check_config_schema(*library_, settings); !problem.empty())
        throw PluginError(problem);
    CallResult result;
    const arb_create_args args =
        create_args(context_->handle(), settings, baseline, shard_index_, shard_count_);
    result.status = library_->api().configure(handle_, &args);
    if (result.status != ARB_OK) result.error = last_error();
    return result;
}

CallResult PluginInstance::baseline_begin() {
    CallResult result;
    if (!library_->api().baseline_begin) {
        result.status = ARB_ERR_UNSUPPORTED;
        result.error = "the plugin computes no baselines (no ARB_CAP_BASELINE)";
        return result;
    }
    result.status = library_->api().baseline_begin(handle_);
    if (result.status != ARB_OK) result.error = last_error();
    return result;
}

std::optional<std::vector<uint8_t>> PluginInstance::baseline_end(std::string& error) {
    return take_blob(library_->api().baseline_end, "baseline_end",
                     "the plugin computes no baselines (no ARB_CAP_BASELINE)", error);
}

CallResult PluginInstance::restore_state(std::span<const uint8_t> blob) {
    CallResult result;
    if (!library_->api().restore_state) {
        result.status = ARB_ERR_UNSUPPORTED;
        result.error = "the plugin keeps no state across reloads (no ARB_CAP_STATE)";
        return result;
    }
    result.status = library_->api().restore_state(handle_, {blob.data(), blob.size()});
    if (result.status != ARB_OK) result.error = last_error();
    return result;
}

}  // namespace arbiter::host
