/* A model of the host as it was at ABI 1.1 with event schema 1.1 (before schema 1.2): its
 * negotiation checks and their wording as host/src/negotiation.cpp made them, sending
 * schema 1.1. ABI 1.1 is still the current ABI, so it is compiled against the current
 * header; only the schema minor it sends differs. A plugin that requires schema 1.2 must be
 * refused by it with both versions named; any other plugin of this SDK must run on it. */
#ifndef ARBITER_TEST_HOST_1_1_H
#define ARBITER_TEST_HOST_1_1_H

#include <stddef.h>

#include "host_1_0.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As host_1_0_run, on the 1.1 host model (the same result struct). */
void host_1_1_run(const char* library, const unsigned char* config, size_t config_size,
                  const unsigned char* batch, size_t batch_size, host_1_0_result* out);

#ifdef __cplusplus
}
#endif

#endif
