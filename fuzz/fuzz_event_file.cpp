// The .arbev reader over any bytes: every record and damage report to the end, and each
// record through ingest as `arbiter replay` does.
#include <stdexcept>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/ingest.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        arbiter::host::EventFileReader reader({data, size}, "fuzz", 1 << 16);
        uint64_t position = 0;
        while (auto item = reader.next()) {
            if (item->offset < position) __builtin_trap();  // reading only moves forward
            position = item->offset;
            if (item->kind == arbiter::host::EventFileItem::Kind::record)
                (void)arbiter::host::ingest_batch(item->payload, 1 << 16);
        }
        // Recovery is linear: the checksum work stays a small multiple of the input.
        if (reader.bytes_checksummed() > 16 * size + (1 << 17)) __builtin_trap();
    } catch (const std::runtime_error&) {
        // Not an event file at all (the header): refused with a message, as designed.
    }
    return 0;
}
