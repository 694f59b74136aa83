/* A plugin built for ABI 1.7, newer than the host's 1.0: it may use slots the host does
 * not have, so the host must refuse it and say which host version it needs. */
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
    stub_negotiate(negotiation, &api, "test-newer-minor");
    negotiation->plugin_abi_minor = 7;
    return ARB_OK;
}
