/* The required slots of a plugin that does nothing, for the hand-written test plugins.
 * Each of those writes its own table and entry function: the table is what it breaks.
 * static inline, so that a plugin that leaves a slot out draws no unused warning. */
#ifndef ARBITER_TEST_C_STUB_H
#define ARBITER_TEST_C_STUB_H

#include <stddef.h>

#include <arbiter/arbiter_plugin.h>

/* One instance for everyone: these plugins keep no state. */
struct arb_instance {
    int unused;
};
static struct arb_instance stub_the_instance;

static inline arb_status stub_create(const arb_create_args* args, arb_instance** out) {
    (void)args;
    if (!out) return ARB_ERR_INVALID_ARGUMENT;
    *out = &stub_the_instance;
    return ARB_OK;
}

static inline void stub_destroy(arb_instance* instance) {
    (void)instance;
}

static inline const char* stub_last_error(arb_instance* instance) {
    (void)instance;
    return "";
}

static inline arb_status stub_on_batch(arb_instance* instance, arb_bytes batch,
                                       const arb_signal_sink* sink) {
    (void)instance;
    (void)batch;
    (void)sink;
    return ARB_OK;
}

static inline arb_status stub_configure(arb_instance* instance, const arb_create_args* args) {
    (void)instance;
    (void)args;
    return ARB_OK;
}

static inline arb_status stub_restore_state(arb_instance* instance, arb_bytes state) {
    (void)instance;
    (void)state;
    return ARB_OK;
}

/* Fills the negotiation as a well-behaved 1.0 plugin would; the caller then breaks it. */
static inline void stub_negotiate(arb_negotiation* negotiation, const arb_plugin_api* api,
                                  const char* name) {
    negotiation->plugin_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation->plugin_abi_minor = ARB_ABI_VERSION_MINOR;
    negotiation->schema_major = ARB_SCHEMA_VERSION_MAJOR;
    negotiation->schema_minor = ARB_SCHEMA_VERSION_MINOR;
    negotiation->plugin_api = api;
    negotiation->name = name;
    negotiation->version = "0.0.1";
    negotiation->contact = "tests@arbiter.invalid";
    negotiation->description = "a deliberately broken plugin for the integration tests";
    negotiation->capabilities = 0;
    negotiation->model_class = ARB_CLASS_VALIDATION;
    negotiation->reserved0 = 0;
}

#endif
