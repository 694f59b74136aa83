/* Provides configure but does not declare ARB_CAP_RECONFIGURE: bits and slots disagree,
 * so the host cannot tell which of the two the author meant. */
#include "c_stub.h"

static const arb_plugin_api api = {
    sizeof(arb_plugin_api),
    stub_create,
    stub_destroy,
    stub_last_error,
    stub_on_batch,
    NULL,           /* on_match_end */
    stub_configure, /* configure: present, though no bit says so */
    NULL,
    NULL,
    NULL,
    NULL,
    NULL, /* describe_config (1.1) */
};

arb_status arbiter_plugin_entry(arb_negotiation* negotiation) {
    if (!negotiation || negotiation->struct_size < sizeof(arb_negotiation))
        return ARB_ERR_INVALID_ARGUMENT;
    stub_negotiate(negotiation, &api, "test-configure-without-bit");
    negotiation->capabilities = 0;
    return ARB_OK;
}
