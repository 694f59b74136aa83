#include "arbiter/host/negotiation.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

std::string c_string(const char* text) {
    return text ? std::string(text) : std::string();
}

bool valid_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

// The size of the plugin table that a given minor of major 1 defines.
uint64_t plugin_api_size_of_minor(uint32_t minor) {
    return minor >= 1 ? ARB_PLUGIN_API_SIZE_1_1 : ARB_PLUGIN_API_SIZE_1_0;
}

// A field of the 1.1 "out" part: ARB_MINOR_ABSENT (a plugin that predates it) means the
// same as the minor it was compiled against.
uint32_t required_or_compiled(uint32_t required, uint32_t compiled) {
    return required == ARB_MINOR_ABSENT ? compiled : required;
}

struct CapabilitySlot {
    uint64_t bit;
    const char* bit_name;
    const char* slot_name;
    bool present;
};

void check_version(const PluginIdentity& plugin, arb_status status) {
    if (plugin.abi_major != ARB_ABI_VERSION_MAJOR)
        throw NegotiationError(fmt::format(
            "built for ABI {}.{}, this host speaks ABI {}.{}: the major versions differ",
            plugin.abi_major, plugin.abi_minor, ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR));
    if (plugin.abi_minor_required > plugin.abi_minor)
        throw NegotiationError(fmt::format(
            "it requires ABI {}.{} but was built against the older ABI {}.{}", plugin.abi_major,
            plugin.abi_minor_required, plugin.abi_major, plugin.abi_minor));
    if (plugin.abi_minor_required > ARB_ABI_VERSION_MINOR)
        throw NegotiationError(fmt::format(
            "it needs ABI {}.{} (built against {}.{}), newer than this host's ABI {}.{}: it "
            "needs a host of ABI {}.{} or later",
            plugin.abi_major, plugin.abi_minor_required, plugin.abi_major, plugin.abi_minor,
            ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR, plugin.abi_major,
            plugin.abi_minor_required));
    if (plugin.schema_major != ARB_SCHEMA_VERSION_MAJOR)
        throw NegotiationError(fmt::format(
            "built for event schema {}.{}, this host sends schema {}.{}: the major versions "
            "differ",
            plugin.schema_major, plugin.schema_minor, ARB_SCHEMA_VERSION_MAJOR,
            ARB_SCHEMA_VERSION_MINOR));
    if (plugin.schema_minor_required > plugin.schema_minor)
        throw NegotiationError(fmt::format(
            "it requires event schema {}.{} but was built against the older schema {}.{}",
            plugin.schema_major, plugin.schema_minor_required, plugin.schema_major,
            plugin.schema_minor));
    if (plugin.schema_minor_required > ARB_SCHEMA_VERSION_MINOR)
        throw NegotiationError(fmt::format(
            "it needs event schema {}.{} (built against {}.{}), newer than the schema {}.{} this "
            "host sends",
            plugin.schema_major, plugin.schema_minor_required, plugin.schema_major,
            plugin.schema_minor, ARB_SCHEMA_VERSION_MAJOR, ARB_SCHEMA_VERSION_MINOR));
    if (status != ARB_OK)
        throw NegotiationError(
            fmt::format("the entry function failed with {}", status_name(status)));
}

void check_table(NegotiatedPlugin& negotiated, const arb_plugin_api* table) {
    const PluginIdentity& plugin = negotiated.identity;
    if (!table) throw NegotiationError("it returned no function table");
    constexpr uint64_t minimum = offsetof(arb_plugin_api, on_batch) + sizeof(table->on_batch);
    if (table->struct_size < minimum)
        throw NegotiationError(
            fmt::format("its function table has {} bytes, fewer than the {} of the required slots",
                        table->struct_size, minimum));
    // Never read past the size the plugin declared (docs/abi-rules.md, rule 3), nor past
    // the slots of the minor both sides use: a slot of a newer minor is not ours to call.
    const uint64_t readable =
        std::min<uint64_t>({table->struct_size, sizeof(arb_plugin_api),
                            plugin_api_size_of_minor(plugin.abi_minor_in_use)});
    std::memcpy(&negotiated.api, table, readable);
    negotiated.api.struct_size = readable;
    const arb_plugin_api& api = negotiated.api;
    if (!api.create || !api.destroy || !api.last_error || !api.on_batch)
        throw NegotiationError("a required slot (create, destroy, last_error, on_batch) is NULL");

    const uint64_t known = ARB_CAP_ALL_FOR_MINOR(plugin.abi_minor_in_use);
    if (plugin.capabilities & ~known)
        throw NegotiationError(fmt::format(
            "it declares capability bits {:#x} that ABI {}.{} does not define",
            plugin.capabilities & ~known, ARB_ABI_VERSION_MAJOR, plugin.abi_minor_in_use));
    const CapabilitySlot slots[] = {
        {ARB_CAP_STATE, "ARB_CAP_STATE", "save_state", api.save_state != nullptr},
        {ARB_CAP_STATE, "ARB_CAP_STATE", "restore_state", api.restore_state != nullptr},
        {ARB_CAP_RECONFIGURE, "ARB_CAP_RECONFIGURE", "configure", api.configure != nullptr},
        {ARB_CAP_MATCH_END, "ARB_CAP_MATCH_END", "on_match_end", api.on_match_end != nullptr},
        {ARB_CAP_BASELINE, "ARB_CAP_BASELINE", "baseline_begin", api.baseline_begin != nullptr},
        {ARB_CAP_BASELINE, "ARB_CAP_BASELINE", "baseline_end", api.baseline_end != nullptr},
        {ARB_CAP_DESCRIBE_CONFIG, "ARB_CAP_DESCRIBE_CONFIG", "describe_config",
         api.describe_config != nullptr},
    };
    for (const auto& slot : slots) {
        const bool declared = (plugin.capabilities & slot.bit) != 0;
        if (declared && !slot.present)
            throw NegotiationError(
                fmt::format("capability bits disagree with the slots: {} is set but {} is NULL{}",
                            slot.bit_name, slot.slot_name,
                            readable < table->struct_size ? " (or past the minor in use)" : ""));
        if (!declared && slot.present)
            throw NegotiationError(fmt::format(
                "capability bits disagree with the slots: {} is implemented but {} is not declared",
                slot.slot_name, slot.bit_name));
    }
}

}  // namespace

NegotiatedPlugin negotiate(arb_entry_fn entry, const arb_host_services* services, arb_host* host) {
    arb_negotiation negotiation{};
    negotiation.struct_size = sizeof negotiation;
    negotiation.host_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation.host_abi_minor = ARB_ABI_VERSION_MINOR;
    negotiation.host_services = services;
    negotiation.host = host;
    negotiation.plugin_abi_minor_required = ARB_MINOR_ABSENT;
    negotiation.schema_minor_required = ARB_MINOR_ABSENT;
    negotiation.host_schema_major = ARB_SCHEMA_VERSION_MAJOR;
    negotiation.host_schema_minor = ARB_SCHEMA_VERSION_MINOR;
    const arb_status status = entry(&negotiation);

    NegotiatedPlugin negotiated;
    PluginIdentity& plugin = negotiated.identity;
    plugin.abi_major = negotiation.plugin_abi_major;
    plugin.abi_minor = negotiation.plugin_abi_minor;
    plugin.abi_minor_required =
        required_or_compiled(negotiation.plugin_abi_minor_required, plugin.abi_minor);
    plugin.abi_minor_in_use = std::min<uint32_t>(plugin.abi_minor, ARB_ABI_VERSION_MINOR);
    plugin.schema_major = negotiation.schema_major;
    plugin.schema_minor = negotiation.schema_minor;
    plugin.schema_minor_required =
        required_or_compiled(negotiation.schema_minor_required, plugin.schema_minor);
    check_version(plugin, status);

    plugin.name = c_string(negotiation.name);
    plugin.version = c_string(negotiation.version);
    plugin.contact = c_string(negotiation.contact);
    plugin.description = c_string(negotiation.description);
    plugin.capabilities = negotiation.capabilities;
    if (!valid_name(plugin.name))
        throw NegotiationError("its name '" + escape_for_message(plugin.name) +
                               "' is not 1 to 64 of [a-z0-9_-]");
    if (plugin.version.empty()) throw NegotiationError("it gives no version of its own");
    if (negotiation.model_class < ARB_CLASS_VALIDATION ||
        negotiation.model_class > ARB_CLASS_STATISTICAL)
        throw NegotiationError(fmt::format("unknown model class {}", negotiation.model_class));
    plugin.declared_class = static_cast<ModelClass>(negotiation.model_class);
    check_table(negotiated, negotiation.plugin_api);
    return negotiated;
}

std::string describe_version(uint32_t major, uint32_t minor, uint32_t required) {
    return required < minor ? fmt::format("{}.{} (requires {}.{})", major, minor, major, required)
                            : fmt::format("{}.{}", major, minor);
}

const char* status_name(arb_status status) {
    switch (status) {
        case ARB_OK:
            return "ARB_OK";
        case ARB_ERR_INVALID_ARGUMENT:
            return "ARB_ERR_INVALID_ARGUMENT";
        case ARB_ERR_CONFIG:
            return "ARB_ERR_CONFIG";
        case ARB_ERR_STATE:
            return "ARB_ERR_STATE";
        case ARB_ERR_UNSUPPORTED:
            return "ARB_ERR_UNSUPPORTED";
        case ARB_ERR_INTERNAL:
            return "ARB_ERR_INTERNAL";
        case ARB_ERR_OUT_OF_MEMORY:
            return "ARB_ERR_OUT_OF_MEMORY";
        case ARB_ERR_VERSION:
            return "ARB_ERR_VERSION";
        default:
            return "an unknown status";
    }
}

std::string describe_capabilities(uint64_t bits) {
    static const std::pair<uint64_t, const char*> names[] = {
        {ARB_CAP_STATE, "state"},
        {ARB_CAP_RECONFIGURE, "reconfigure"},
        {ARB_CAP_MATCH_END, "match-end"},
        {ARB_CAP_BASELINE, "baseline"},
        {ARB_CAP_SHARD_BY_MATCH, "shard-by-match"},
        {ARB_CAP_DESCRIBE_CONFIG, "describe-config"},
    };
    std::string text;
    for (const auto& [bit, name] : names)
        if (bits & bit) text += (text.empty() ? "" : ",") + std::string(name);
    return text.empty() ? "-" : text;
}

}  // namespace arbiter::host
