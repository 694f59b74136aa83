// The serve wire decoder, fed in chunks whose sizes come from the input itself, as a
// socket hands them over; every frame and problem is drained.
#include "arbiter/host/wire.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const size_t chunk = 1 + data[0] % 64;
    arbiter::host::wire::FrameDecoder decoder(1 << 16);
    for (size_t at = 1; at < size; at += chunk) {
        decoder.feed({data + at, std::min(chunk, size - at)});
        while (auto decoded = decoder.next())
            if (decoded->frame) (void)decoded->frame->payload.size();
    }
    return 0;
}
