// The serve messages that carry JSON or text: the hello (with and without a required
// token), the sync's reply, the control line and the metrics listener's HTTP request head
// (the last two share a branch, so that the committed corpus keeps its meaning). The first
// byte picks which. Every input is also read as a run of hellos for the token throttle,
// whose order, addresses and times a guesser chooses.
#include <chrono>
#include <string>

#include "serve/serve_protocol.hpp"
#include "fuzz_input.hpp"
#include "serve/token_throttle.hpp"

namespace protocol = arbiter::host::serve_protocol;
using arbiter::host::serve::TokenThrottle;

namespace {

// Each byte is one hello: bits 1-5 pick one of 32 addresses (twice what the throttle may
// remember), bit 0 whether its token was right, bits 6-7 how long after the last it came.
// Whatever the run, the throttle remembers no more addresses than it is allowed.
void throttle_hellos(std::span<const uint8_t> hellos) {
    constexpr size_t kAddresses = 16;
    TokenThrottle throttle({.per_address = 2,
                            .overall = 5,
                            .window = std::chrono::milliseconds(1000),
                            .addresses = kAddresses});
    TokenThrottle::Clock::time_point now{};
    for (const uint8_t hello : hellos) {
        const std::string address = "10.0.0." + std::to_string((hello >> 1) & 0x1f);
        now += std::chrono::milliseconds(300 * (hello >> 6));
        if (throttle.refusal(address, now).empty()) {
            if (hello & 1)
                throttle.succeeded(address, now);
            else
                (void)throttle.failed(address, now);
        }
        if (throttle.remembered() > 2 * kAddresses) __builtin_trap();
    }
    (void)throttle.take_tally(now);
}

}  // namespace

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
    throttle_hellos(rest);
    return 0;
}
