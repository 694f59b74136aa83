/* A model of the ABI 1.0 host, for the compatibility tests: its negotiation and signal
 * checks as the 1.0 host (b9b94b3's plugin_library.cpp and plugin_instance.cpp) made
 * them, compiled against the frozen 1.0 header. A plugin that a newer SDK or header
 * builds must still load and report on it whenever it does not require a newer minor.
 * Plain C types only: the callers include the current header, this model the old one. */
#ifndef ARBITER_TEST_HOST_1_0_H
#define ARBITER_TEST_HOST_1_0_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct host_1_0_result {
    int loaded;                    /* negotiated and created */
    char message[512];             /* the refusal, worded as the 1.0 host words it */
    unsigned abi_major, abi_minor; /* what the plugin reported */
    unsigned long long capabilities;
    unsigned signals;              /* signals the 1.0 host took */
    unsigned dropped;              /* signals it refused */
    double first_score;            /* of the first signal taken */
} host_1_0_result;

/* Loads the library, negotiates, creates an instance with `config` (a FlexBuffers map),
 * feeds it `batch` once, ends the match, and unloads it. */
void host_1_0_run(const char* library, const unsigned char* config, size_t config_size,
                  const unsigned char* batch, size_t batch_size, host_1_0_result* out);

#ifdef __cplusplus
}
#endif

#endif
