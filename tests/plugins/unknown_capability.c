/* Declares a capability bit (1 << 40) that ABI 1.0 does not define: it expects
 * something of the host that this host cannot know about. */
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
    stub_negotiate(negotiation, &api, "test-unknown-capability");
    negotiation->capabilities = 1ull << 40;
    return ARB_OK;
}
