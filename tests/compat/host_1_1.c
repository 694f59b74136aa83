/* See host_1_1.h. The checks and their wording follow host/src/negotiation.cpp as it was
 * with schema 1.1, in its order; the capability and slot checks are the 1.0 model's. */
#include "host_1_1.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <arbiter/arbiter_plugin.h>

#define HOST_SCHEMA_MINOR 1u /* what this model sends: schema 1.1 */

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

static arb_status take_signal(void* context, const arb_signal* signal) {
    host_1_0_result* out = (host_1_0_result*)context;
    if (!signal || signal->struct_size < ARB_SIGNAL_SIZE_1_0 || signal->player == 0 ||
        !(signal->score >= 0.0 && signal->score <= 1.0)) {
        ++out->dropped;
        return ARB_ERR_INVALID_ARGUMENT;
    }
    if (out->signals++ == 0) out->first_score = signal->score;
    return ARB_OK;
}

static int refuse(host_1_0_result* out, const char* text) {
    snprintf(out->message, sizeof out->message, "%s", text);
    return 0;
}

static uint32_t required_or_compiled(uint32_t required, uint32_t compiled) {
    return required == ARB_MINOR_ABSENT ? compiled : required;
}

static int negotiate(void* library, arb_plugin_api* api, host_1_0_result* out) {
    arb_entry_fn entry;
    arb_negotiation n;
    const arb_plugin_api* table;
    arb_status status;
    uint32_t abi_required, schema_required;
    size_t size;
    *(void**)(&entry) = dlsym(library, ARB_ENTRY_SYMBOL);
    if (!entry) return refuse(out, "no entry symbol " ARB_ENTRY_SYMBOL);
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.host_abi_major = 1;
    n.host_abi_minor = 1;
    n.host_services = &services;
    n.plugin_abi_minor_required = ARB_MINOR_ABSENT;
    n.schema_minor_required = ARB_MINOR_ABSENT;
    n.host_schema_major = 1;
    n.host_schema_minor = HOST_SCHEMA_MINOR;
    status = entry(&n);
    out->abi_major = n.plugin_abi_major;
    out->abi_minor = n.plugin_abi_minor;
    abi_required = required_or_compiled(n.plugin_abi_minor_required, n.plugin_abi_minor);
    schema_required = required_or_compiled(n.schema_minor_required, n.schema_minor);
    if (n.plugin_abi_major != 1 || abi_required > 1) {
        snprintf(out->message, sizeof out->message,
                 "it needs ABI %u.%u (built against %u.%u), newer than this host's ABI 1.1",
                 n.plugin_abi_major, abi_required, n.plugin_abi_major, n.plugin_abi_minor);
        return 0;
    }
    if (n.schema_major != 1) return refuse(out, "built for another event schema major");
    if (schema_required > n.schema_minor) {
        snprintf(out->message, sizeof out->message,
                 "it requires event schema %u.%u but was built against the older schema %u.%u",
                 n.schema_major, schema_required, n.schema_major, n.schema_minor);
        return 0;
    }
    if (schema_required > HOST_SCHEMA_MINOR) {
        snprintf(out->message, sizeof out->message,
                 "it needs event schema %u.%u (built against %u.%u), newer than the schema "
                 "1.%u this host sends",
                 n.schema_major, schema_required, n.schema_major, n.schema_minor,
                 HOST_SCHEMA_MINOR);
        return 0;
    }
    if (status != ARB_OK) {
        snprintf(out->message, sizeof out->message, "the entry function failed with %d",
                 (int)status);
        return 0;
    }
    if (!n.version || !*n.version) return refuse(out, "it gives no version of its own");
    table = n.plugin_api;
    if (!table) return refuse(out, "it returned no function table");
    if (table->struct_size < offsetof(arb_plugin_api, on_batch) + sizeof(table->on_batch))
        return refuse(out, "its function table is smaller than the required slots");
    size = table->struct_size < ARB_PLUGIN_API_SIZE_1_1 ? (size_t)table->struct_size
                                                        : ARB_PLUGIN_API_SIZE_1_1;
    memset(api, 0, sizeof *api);
    memcpy(api, table, size);
    if (!api->create || !api->destroy || !api->last_error || !api->on_batch)
        return refuse(out, "a required slot is NULL");
    out->capabilities = n.capabilities;
    if (n.capabilities & ~ARB_CAP_ALL_FOR_MINOR(1))
        return refuse(out, "it declares capability bits that ABI 1.1 does not define");
    return 1;
}

void host_1_1_run(const char* library_path, const unsigned char* config, size_t config_size,
                  const unsigned char* batch, size_t batch_size, host_1_0_result* out) {
    void* library;
    arb_plugin_api api;
    arb_create_args args;
    arb_instance* instance = NULL;
    arb_signal_sink sink;
    arb_bytes bytes;
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
    args.services = &services;
    args.config.data = config;
    args.config.size = config_size;
    args.shard_index = 0;
    args.shard_count = 1;
    if (api.create(&args, &instance) != ARB_OK || !instance) {
        refuse(out, instance ? api.last_error(instance) : "create failed");
        if (instance) api.destroy(instance);
        dlclose(library);
        return;
    }
    out->loaded = 1;
    sink.struct_size = sizeof sink;
    sink.context = out;
    sink.emit = take_signal;
    bytes.data = batch;
    bytes.size = batch_size;
    if (api.on_batch(instance, bytes, &sink) != ARB_OK)
        snprintf(out->message, sizeof out->message, "on_batch failed: %s",
                 api.last_error(instance));
    api.destroy(instance);
    dlclose(library);
}
