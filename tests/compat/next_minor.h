/* A stand-in for the next minor of the ABI, for the compatibility tests: what a header of
 * ABI 1.(current + 1) would add, written as extensions of the current header's structs
 * (a struct whose first member is the old struct has the old layout as its prefix, which
 * is exactly what appending fields does). It adds one slot to the plugin table, one field
 * to arb_signal, one field to arb_negotiation and one capability bit. */
#ifndef ARBITER_TEST_NEXT_MINOR_H
#define ARBITER_TEST_NEXT_MINOR_H

#include <arbiter/arbiter_plugin.h>

#define NEXT_ABI_VERSION_MINOR (ARB_ABI_VERSION_MINOR + 1u)

/* The new capability and the slot it stands for. */
#define NEXT_CAP_SUMMARY (1ull << 40)
#define NEXT_CAP_ALL (ARB_CAP_ALL_FOR_MINOR(ARB_ABI_VERSION_MINOR) | NEXT_CAP_SUMMARY)

typedef struct next_signal {
    arb_signal current;
    /* The new field: a weight the plugin suggests. A host of the current minor never
     * reads it. */
    double suggested_weight;
} next_signal;

typedef struct next_plugin_api {
    arb_plugin_api current;
    /* The new slot (NEXT_CAP_SUMMARY). */
    arb_status (*summary)(arb_instance* instance, arb_string* out_text);
} next_plugin_api;

typedef struct next_negotiation {
    arb_negotiation current;
    /* The new "in" field: none of the tests' hosts has it. */
    uint64_t host_features;
} next_negotiation;

#define NEXT_NEGOTIATION_SIZE ((uint64_t)sizeof(next_negotiation))

#endif
