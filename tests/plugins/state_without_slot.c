/* Declares ARB_CAP_STATE but leaves save_state NULL: a host that trusted the bit would
 * call through a NULL pointer at the first hot reload. */
#include "c_stub.h"

static const arb_plugin_api api = {
    sizeof(arb_plugin_api),
    stub_create,
    stub_destroy,
    stub_last_error,
    stub_on_batch,
    NULL,               /* on_match_end */
    NULL,               /* configure */
    NULL,               /* save_state: missing, though the bit says it is there */
    stub_restore_state, /* restore_state */
    NULL,
    NULL,
    NULL, /* describe_config (1.1) */
};

arb_status arbiter_plugin_entry(arb_negotiation* negotiation) {
    if (!negotiation || negotiation->struct_size < sizeof(arb_negotiation))
        return ARB_ERR_INVALID_ARGUMENT;
    stub_negotiate(negotiation, &api, "test-state-without-slot");
    negotiation->capabilities = ARB_CAP_STATE;
    return ARB_OK;
}
