// What an isolated plugin's runner sends the host: the runner shares its address space
// with a plugin the operator does not trust, so every byte of it is hostile. Three ways
// in: the reply itself (decode_reply: bounded fields, enums, identity, or a ChannelError),
// what the host then takes of it (take_in_reply: log lines, metric names and signals
// through tight bounds, so that the fuzzer reaches past them), and the frames that carry
// it (Channel::receive over a real socket pair, with chunks, acks and the shared memory).
// Never a crash, never more than the limit allocated, a reply that decodes encodes back to
// bytes that decode the same, and nothing past a bound is kept.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include "fuzz_input.hpp"
#include "isolation/channel.hpp"
#include "isolation/messages.hpp"
#include "isolation/reply_intake.hpp"

namespace {

using namespace arbiter::host::isolation;

void decode(std::span<const uint8_t> bytes) {
    try {
        RunnerReply reply = decode_reply(bytes);
        const std::vector<uint8_t> again = encode_reply(reply);
        const RunnerReply twice = decode_reply(again);
        if (twice.call.signals.size() != reply.call.signals.size() ||
            twice.logs.size() != reply.logs.size() || twice.metrics.size() != reply.metrics.size() ||
            twice.identity.has_value() != reply.identity.has_value())
            __builtin_trap();
        // Bounds small enough that a short input crosses them.
        static arbiter::host::Metrics metrics;
        const arbiter::host::PluginLimits limits{.max_signals_per_call = 3,
                                                 .max_metric_names = 4,
                                                 .log_bytes_per_s = 1024};
        arbiter::host::PluginBounds bounds("fuzzed", limits, &metrics);
        const arbiter::host::CallResult result =
            take_in_reply(std::move(reply), "fuzzed", bounds, &metrics);
        if (result.signals.size() > limits.max_signals_per_call) __builtin_trap();
        size_t names = 0;
        for (const auto& [name, value] : metrics.snapshot())
            names += name.starts_with("fuzzed.") ? 1 : 0;
        if (names > limits.max_metric_names) __builtin_trap();
    } catch (const ChannelError&) {
    }
}

// The input as frames: the first byte picks how much goes into the reply area before
// each frame, the rest is cut into 24-byte frames written to the host's socket.
void frames(std::span<const uint8_t> bytes) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
    static std::array<uint8_t, 2 * 4096> memory;
    const SharedAreas areas{memory.data(), 4096, 4096};
    std::memset(memory.data() + 4096, 0x5a, 4096);
    size_t at = 0;
    int written = 0;
    while (at + sizeof(Frame) <= bytes.size() && written < 64) {
        (void)::send(pair[1], bytes.data() + at, sizeof(Frame), MSG_DONTWAIT | MSG_NOSIGNAL);
        at += sizeof(Frame);
        ++written;
    }
    ::shutdown(pair[1], SHUT_WR);
    Channel host(pair[0], areas, Channel::Side::host);
    try {
        for (int i = 0; i < written; ++i) {
            const auto message = host.receive(std::chrono::steady_clock::now() +
                                                  std::chrono::milliseconds(50),
                                              64 * 1024);
            if (message.payload.size() > 64 * 1024) __builtin_trap();
        }
    } catch (const ChannelError&) {
    }
    ::close(pair[0]);
    ::close(pair[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> bytes(data, size);
    decode(bytes);
    frames(bytes);
    return 0;
}
