/* See host_1_0.h. The checks and their wording follow the 1.0 host, in its order. */
#include "host_1_0.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "arbiter_plugin-1.0.h"

static void quiet_log(arb_host* host, uint32_t level, arb_string message) {
    (void)host;
    (void)level;
    (void)message;
}
static int64_t zero_clock(arb_host* host) {
    (void)host;
    return 0;
}
static void ignore_metric(arb_host* host, arb_string name, double value) {
    (void)host;
    (void)name;
    (void)value;
}
static const arb_host_services services = {sizeof(arb_host_services), quiet_log, zero_clock,
                                           ignore_metric, ignore_metric};

struct sink_state {
    host_1_0_result* out;
};

static arb_status take_signal(void* context, const arb_signal* signal) {
    host_1_0_result* out = ((struct sink_state*)context)->out;
    /* The 1.0 host's rule: anything smaller than its own arb_signal is malformed. */
    if (!signal || signal->struct_size < sizeof(arb_signal) || signal->player == 0 ||
        !(signal->score >= 0.0 && signal->score <= 1.0)) {
        ++out->dropped;
        return ARB_ERR_INVALID_ARGUMENT;
    }
    if (out->signals++ == 0) out->first_score = signal->score;
    return ARB_OK;
}

static int valid_name(const char* name) {
    size_t n = 0;
    if (!name) return 0;
    for (; name[n]; ++n) {
        char c = name[n];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
    }
    return n > 0 && n <= 64;
}

static int refuse(host_1_0_result* out, const char* text) {
    snprintf(out->message, sizeof out->message, "%s", text);
    return 0;
}

static int negotiate(void* library, arb_plugin_api* api, host_1_0_result* out) {
    arb_entry_fn entry;
    arb_negotiation negotiation;
    const arb_plugin_api* table;
    arb_status status;
    char text[256];
    size_t size;
    *(void**)(&entry) = dlsym(library, ARB_ENTRY_SYMBOL);
    if (!entry) return refuse(out, "no entry symbol " ARB_ENTRY_SYMBOL);
    memset(&negotiation, 0, sizeof negotiation);
    negotiation.struct_size = sizeof negotiation;
    negotiation.host_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation.host_abi_minor = ARB_ABI_VERSION_MINOR;
    negotiation.host_services = &services;
    negotiation.host = NULL;
    status = entry(&negotiation);
    out->abi_major = negotiation.plugin_abi_major;
    out->abi_minor = negotiation.plugin_abi_minor;
    if (negotiation.plugin_abi_major != ARB_ABI_VERSION_MAJOR) {
        snprintf(text, sizeof text,
                 "built for ABI %u.%u, this host speaks ABI 1.0: the major versions differ",
                 negotiation.plugin_abi_major, negotiation.plugin_abi_minor);
        return refuse(out, text);
    }
    if (negotiation.plugin_abi_minor > ARB_ABI_VERSION_MINOR) {
        snprintf(text, sizeof text,
                 "built for ABI %u.%u, newer than this host's ABI 1.0: it needs a host of ABI "
                 "%u.%u or later",
                 negotiation.plugin_abi_major, negotiation.plugin_abi_minor,
                 negotiation.plugin_abi_major, negotiation.plugin_abi_minor);
        return refuse(out, text);
    }
    if (status != ARB_OK) {
        snprintf(text, sizeof text, "the entry function failed with status %d", (int)status);
        return refuse(out, text);
    }
    if (!valid_name(negotiation.name)) return refuse(out, "its name is not 1 to 64 of [a-z0-9_-]");
    if (!negotiation.version || !*negotiation.version) return refuse(out, "it gives no version");
    if (negotiation.schema_major != ARB_SCHEMA_VERSION_MAJOR)
        return refuse(out, "built for another event schema major");
    if (negotiation.model_class < ARB_CLASS_VALIDATION ||
        negotiation.model_class > ARB_CLASS_STATISTICAL)
        return refuse(out, "unknown model class");
    table = negotiation.plugin_api;
    if (!table) return refuse(out, "it returned no function table");
    if (table->struct_size < offsetof(arb_plugin_api, on_batch) + sizeof(table->on_batch))
        return refuse(out, "its function table is smaller than the required slots");
    size = table->struct_size < sizeof(arb_plugin_api) ? (size_t)table->struct_size
                                                       : sizeof(arb_plugin_api);
    memset(api, 0, sizeof *api);
    memcpy(api, table, size);
    if (!api->create || !api->destroy || !api->last_error || !api->on_batch)
        return refuse(out, "a required slot is NULL");
    out->capabilities = negotiation.capabilities;
    if (negotiation.capabilities & ~ARB_CAP_ALL_1_0) {
        snprintf(text, sizeof text,
                 "it declares capability bits %#llx that ABI 1.0 does not define",
                 (unsigned long long)(negotiation.capabilities & ~ARB_CAP_ALL_1_0));
        return refuse(out, text);
    }
    if (!(negotiation.capabilities & ARB_CAP_STATE) != !(api->save_state && api->restore_state))
        return refuse(out, "capability bits disagree with the slots: ARB_CAP_STATE");
    if (!(negotiation.capabilities & ARB_CAP_RECONFIGURE) != !api->configure)
        return refuse(out, "capability bits disagree with the slots: ARB_CAP_RECONFIGURE");
    if (!(negotiation.capabilities & ARB_CAP_MATCH_END) != !api->on_match_end)
        return refuse(out, "capability bits disagree with the slots: ARB_CAP_MATCH_END");
    if (!(negotiation.capabilities & ARB_CAP_BASELINE) != !(api->baseline_begin && api->baseline_end))
        return refuse(out, "capability bits disagree with the slots: ARB_CAP_BASELINE");
    return 1;
}

void host_1_0_run(const char* library_path, const unsigned char* config, size_t config_size,
                  const unsigned char* batch, size_t batch_size, host_1_0_result* out) {
    void* library;
    arb_plugin_api api;
    arb_create_args args;
    arb_instance* instance = NULL;
    arb_signal_sink sink;
    struct sink_state state;
    arb_bytes bytes;
    arb_status status;
    memset(out, 0, sizeof *out);
    library = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        refuse(out, "not a loadable shared library");
        return;
    }
    if (!negotiate(library, &api, out)) {
        dlclose(library);
        return;
    }
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.host = NULL;
    args.services = &services;
    args.config.data = config;
    args.config.size = config_size;
    args.shard_index = 0;
    args.shard_count = 1;
    status = api.create(&args, &instance);
    if (status != ARB_OK || !instance) {
        refuse(out, instance ? api.last_error(instance) : "create failed");
        if (instance) api.destroy(instance);
        dlclose(library);
        return;
    }
    out->loaded = 1;
    state.out = out;
    sink.struct_size = sizeof sink;
    sink.context = &state;
    sink.emit = take_signal;
    bytes.data = batch;
    bytes.size = batch_size;
    if (api.on_batch(instance, bytes, &sink) != ARB_OK)
        snprintf(out->message, sizeof out->message, "on_batch failed: %s", api.last_error(instance));
    if (api.on_match_end) {
        arb_string relay = {"compat", 6};
        api.on_match_end(instance, relay, 1, &sink);
    }
    api.destroy(instance);
    dlclose(library);
}
