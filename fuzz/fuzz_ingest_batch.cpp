// Batch verification: the gate every batch from outside passes. The input is also tried
// at an odd address, as a record in a damaged file or a frame in a socket buffer sits.
#include <vector>

#include "arbiter/host/ingest.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto result = arbiter::host::ingest_batch({data, size}, 1 << 20);
    std::vector<uint8_t> shifted(size + 1);
    std::copy(data, data + size, shifted.begin() + 1);
    auto again = arbiter::host::ingest_batch(std::span(shifted).subspan(1), 1 << 20);
    if (result.ok != again.ok) __builtin_trap();  // the address must not change the verdict
    if (result.ok) (void)result.batch.root().events();
    return 0;
}
