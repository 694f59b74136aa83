/* A plugin as it was built for ABI 1.0: compiled against the frozen 1.0 header
 * (abi/released/arbiter_plugin-1.0.h) and nothing else of ours. Every later host must load
 * it, take its 1.0-sized signals and call its 1.0 slots. It emits one signal per batch and
 * one at match end. */
#include <stddef.h>

#include "arbiter_plugin-1.0.h"

struct arb_instance {
    int batches;
};
static struct arb_instance the_instance;

static arb_status old_create(const arb_create_args* args, arb_instance** out) {
    if (!args || !out || args->struct_size < sizeof(arb_create_args)) return ARB_ERR_INVALID_ARGUMENT;
    the_instance.batches = 0;
    *out = &the_instance;
    return ARB_OK;
}

static void old_destroy(arb_instance* instance) {
    (void)instance;
}

static const char* old_last_error(arb_instance* instance) {
    (void)instance;
    return "";
}

static arb_status emit(const arb_signal_sink* sink, const char* code, size_t code_size) {
    arb_signal signal;
    signal.struct_size = sizeof(arb_signal); /* 64: ABI 1.0's size */
    signal.player = 1;
    signal.flags = 0;
    signal.score = 0.5;
    signal.confidence = 0.75;
    signal.code.data = code;
    signal.code.size = code_size;
    signal.evidence_json.data = "{\"built_for\":\"1.0\"}";
    signal.evidence_json.size = 19;
    return sink->emit(sink->context, &signal);
}

static arb_status old_on_batch(arb_instance* instance, arb_bytes batch, const arb_signal_sink* sink) {
    (void)batch;
    ++instance->batches;
    return emit(sink, "compat.old", 10);
}

static arb_status old_on_match_end(arb_instance* instance, arb_string relay_id, uint64_t match_id,
                                   const arb_signal_sink* sink) {
    (void)instance;
    (void)relay_id;
    (void)match_id;
    return emit(sink, "compat.old.end", 14);
}

static const arb_plugin_api api = {
    sizeof(arb_plugin_api), old_create, old_destroy, old_last_error, old_on_batch,
    old_on_match_end, NULL, NULL, NULL, NULL, NULL,
};

/* The 1.0 SDK's rule, kept as it was: a negotiation smaller than its own is refused. */
arb_status arbiter_plugin_entry(arb_negotiation* negotiation) {
    if (!negotiation || negotiation->struct_size < sizeof(arb_negotiation))
        return ARB_ERR_INVALID_ARGUMENT;
    negotiation->plugin_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation->plugin_abi_minor = ARB_ABI_VERSION_MINOR;
    negotiation->schema_major = ARB_SCHEMA_VERSION_MAJOR;
    negotiation->schema_minor = ARB_SCHEMA_VERSION_MINOR;
    negotiation->plugin_api = &api;
    negotiation->name = "compat-1-0";
    negotiation->version = "1.0.0";
    negotiation->contact = "tests@arbiter.invalid";
    negotiation->description = "built against the released ABI 1.0 header";
    negotiation->capabilities = ARB_CAP_MATCH_END;
    negotiation->model_class = ARB_CLASS_VALIDATION;
    negotiation->reserved0 = 0;
    if (negotiation->host_abi_major != ARB_ABI_VERSION_MAJOR) return ARB_ERR_VERSION;
    return ARB_OK;
}
