// The serve messages that carry JSON or text: the hello (with and without a required
// token), the sync's reply and the control line. The first byte picks which.
#include "arbiter/host/serve_protocol.hpp"
#include "fuzz_input.hpp"

namespace protocol = arbiter::host::serve_protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::span<const uint8_t> rest(data + 1, size - 1);
    switch (data[0] % 4) {
        case 0:
            (void)protocol::read_hello(rest, "");
            break;
        case 1:
            (void)protocol::read_hello(rest, "the-token");
            break;
        case 2:
            (void)protocol::sync_reply(rest, {1, 2, 3});
            break;
        default:
            (void)protocol::parse_control_line(arbiter::fuzz::as_text(rest.data(), rest.size()));
    }
    (void)protocol::error_json(arbiter::fuzz::as_text(rest.data(), rest.size()), 7, false);
    return 0;
}
