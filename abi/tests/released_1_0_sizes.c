/* The sizes of ABI 1.0's structs, read off the frozen 1.0 header itself (this file
 * includes nothing else of ours), so that the ARB_*_SIZE_1_0 constants of every later
 * header can be checked against what 1.0 plugins and hosts were really compiled with. */
#include <stddef.h>

#include "arbiter_plugin-1.0.h"

size_t released_1_0_sizeof(const char* name);

size_t released_1_0_sizeof(const char* name) {
    struct entry {
        const char* name;
        size_t size;
    };
    static const struct entry sizes[] = {
        {"arb_signal", sizeof(arb_signal)},
        {"arb_signal_sink", sizeof(arb_signal_sink)},
        {"arb_host_services", sizeof(arb_host_services)},
        {"arb_create_args", sizeof(arb_create_args)},
        {"arb_plugin_api", sizeof(arb_plugin_api)},
        {"arb_negotiation", sizeof(arb_negotiation)},
        {"frozen_prefix", offsetof(arb_negotiation, plugin_abi_minor) + sizeof(uint32_t)},
    };
    size_t i;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const char* a = sizes[i].name;
        const char* b = name;
        while (*a && *a == *b) ++a, ++b;
        if (*a == *b) return sizes[i].size;
    }
    return 0;
}
