/* A plugin built for ABI 2.0: the host (1.0) must refuse it and name both versions. */
#include "c_stub.h"

static const arb_plugin_api api = {
    sizeof(arb_plugin_api),
    stub_create,
    stub_destroy,
    stub_last_error,
    stub_on_batch,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL, /* describe_config (1.1) */
};

arb_status arbiter_plugin_entry(arb_negotiation* negotiation) {
    if (!negotiation || negotiation->struct_size < sizeof(arb_negotiation))
        return ARB_ERR_INVALID_ARGUMENT;
    stub_negotiate(negotiation, &api, "test-wrong-major");
    negotiation->plugin_abi_major = 2;
    negotiation->plugin_abi_minor = 0;
    /* As the header asks: the out fields are filled, and the status says why. */
    return negotiation->host_abi_major == 2 ? ARB_OK : ARB_ERR_VERSION;
}
