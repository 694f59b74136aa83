// The serve messages that carry JSON or text: the hello (with and without a required
// token), the sync's reply, the control line and the metrics listener's HTTP request head
// (the last two share a branch, so that the committed corpus keeps its meaning). The first
// byte picks which.
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
        default: {
            const auto text = arbiter::fuzz::as_text(rest.data(), rest.size());
            (void)protocol::parse_control_line(text);
            const auto request = protocol::parse_http_request(text);
            (void)protocol::http_response(request.ok ? 200 : request.status, "text/plain",
                                          request.problem, request.head);
        }
    }
    (void)protocol::error_json(arbiter::fuzz::as_text(rest.data(), rest.size()), 7, false);
    return 0;
}
