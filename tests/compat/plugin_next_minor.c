/* A plugin built against the next minor (next_minor.h), written by hand the way the
 * header's "Versions" rules tell an author to, without the SDK. It emits one signal per
 * batch, through the next minor's larger arb_signal, and implements the next minor's slot.
 *
 * Built twice: NEXT_REQUIRED=0 needs nothing of the next minor (it uses the new slot and
 * field only where the host has them), NEXT_REQUIRED=1 requires the next minor. */
#include <stddef.h>

#include "next_minor.h"

#ifndef NEXT_REQUIRED
#error "build with -DNEXT_REQUIRED=0 or 1"
#endif

#if NEXT_REQUIRED
#define PLUGIN_NAME "compat-next-required"
#define REQUIRED_MINOR NEXT_ABI_VERSION_MINOR
#else
#define PLUGIN_NAME "compat-next-optional"
#define REQUIRED_MINOR 0u
#endif

struct arb_instance {
    int unused;
};
static struct arb_instance the_instance;

static arb_status next_create(const arb_create_args* args, arb_instance** out) {
    if (!args || !out || args->struct_size < ARB_CREATE_ARGS_SIZE_1_0) return ARB_ERR_INVALID_ARGUMENT;
    *out = &the_instance;
    return ARB_OK;
}

static void next_destroy(arb_instance* instance) {
    (void)instance;
}

static const char* next_last_error(arb_instance* instance) {
    (void)instance;
    return "";
}

static arb_status next_on_batch(arb_instance* instance, arb_bytes batch, const arb_signal_sink* sink) {
    next_signal signal;
    (void)instance;
    (void)batch;
    signal.current.struct_size = sizeof(next_signal);
    signal.current.player = 1;
    signal.current.flags = 0;
    signal.current.score = 0.25;
    signal.current.confidence = 0.5;
    signal.current.code.data = "compat.next";
    signal.current.code.size = 11;
    signal.current.evidence_json.data = "{\"built_for\":\"next minor\"}";
    signal.current.evidence_json.size = 26;
    signal.suggested_weight = 2.0;
    return sink->emit(sink->context, &signal.current);
}

static arb_status next_summary(arb_instance* instance, arb_string* out_text) {
    (void)instance;
    out_text->data = "nothing to report";
    out_text->size = 17;
    return ARB_OK;
}

static const next_plugin_api api = {
    {
        sizeof(next_plugin_api), next_create, next_destroy, next_last_error, next_on_batch,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    },
    next_summary,
};

/* A function, so that REQUIRED_MINOR = 0 draws no "always false" warning. */
static int older_than(uint32_t minor, uint32_t required) {
    return minor < required;
}

arb_status arbiter_plugin_entry(arb_negotiation* negotiation) {
    uint32_t host_minor, in_use;
    int host_has_required_field;
    if (!negotiation || negotiation->struct_size < ARB_NEGOTIATION_FROZEN_SIZE)
        return ARB_ERR_INVALID_ARGUMENT;
    host_has_required_field = negotiation->struct_size >= ARB_NEGOTIATION_SIZE_1_1;
    negotiation->plugin_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation->plugin_abi_minor = host_has_required_field ? NEXT_ABI_VERSION_MINOR : REQUIRED_MINOR;
    if (negotiation->host_abi_major != ARB_ABI_VERSION_MAJOR) return ARB_ERR_VERSION;
    if (negotiation->struct_size < ARB_NEGOTIATION_SIZE_1_0) return ARB_ERR_INVALID_ARGUMENT;

    host_minor = negotiation->host_abi_minor;
    in_use = host_minor < NEXT_ABI_VERSION_MINOR ? host_minor : NEXT_ABI_VERSION_MINOR;
    negotiation->schema_major = ARB_SCHEMA_VERSION_MAJOR;
    negotiation->schema_minor = ARB_SCHEMA_VERSION_MINOR;
    negotiation->plugin_api = &api.current;
    negotiation->name = PLUGIN_NAME;
    negotiation->version = "0.1.0";
    negotiation->contact = "tests@arbiter.invalid";
    negotiation->description = "built against the next ABI minor, for the compatibility tests";
    negotiation->capabilities =
        in_use >= NEXT_ABI_VERSION_MINOR ? NEXT_CAP_SUMMARY : 0u; /* only where the host has it */
    negotiation->model_class = ARB_CLASS_BEHAVIOURAL;
    negotiation->reserved0 = 0;
    if (host_has_required_field) {
        negotiation->plugin_abi_minor_required = REQUIRED_MINOR;
        negotiation->schema_minor_required = 0;
    }
    if (older_than(host_minor, REQUIRED_MINOR)) return ARB_ERR_VERSION;
    return ARB_OK;
}
