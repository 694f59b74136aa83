/* The plugin header must compile as strict C99 with every warning an error: plugins in C
 * (and bindings generated from C) depend on it. This file only has to compile. */
#include <arbiter/arbiter_plugin.h>

int arbiter_c99_header_check(void);

int arbiter_c99_header_check(void) {
    arb_signal signal = {0};
    signal.struct_size = sizeof(arb_signal);
    return (int)signal.struct_size + ARB_OK;
}
