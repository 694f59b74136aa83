// The embedding C API with any bytes as a batch, pushed twice (the second time a
// duplicate), then the assessments listed, a match ended and a reload begun. The host is made once,
// from a config without plugins or file sinks: a fuzzed config could name any path to write, and
// the config reader has a harness of its own (partial_start: a host with no plugin starts only when
// told to).
#include <algorithm>
#include <string>

#include <arbiter/arbiter_host.h>

#include "fuzz_input.hpp"

namespace {

arbiter_host* shared_host() {
    static arbiter_host* host = [] {
        arbiter_host* made = nullptr;
        const char config[] = "[host]\nserver_id = \"fuzz\"\npartial_start = true\n";
        if (arbiter_host_create_from_text(config, sizeof config - 1, "/nonexistent", &made) !=
            ARBITER_OK)
            __builtin_trap();
        return made;
    }();
    return host;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    arbiter_host* host = shared_host();
    arbiter_host_push(host, data, size);
    arbiter_host_push(host, data, size);
    (void)arbiter_host_last_error(host);
    const arbiter_assessment* all = nullptr;
    uint64_t count = 0;
    arbiter_host_assessments(host, &all, &count);
    if (size >= 1 && data[0] % 16 == 0) arbiter_host_end_match(host, "fuzz", size);
    // The reload begun beside the stream, of a plugin named by the input: the host has
    // none, so every name is refused and no reload is under way to ask about.
    if (size >= 2 && data[1] % 8 == 0) {
        const std::string name(reinterpret_cast<const char*>(data), std::min<size_t>(size, 64));
        arbiter_host_begin_reload(host, name.c_str());
        arbiter_host_reload_outcome(host);
    }
    return 0;
}
