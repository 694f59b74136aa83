// The server_config.toml reader on any text: a ConfigError with positions, never a crash.
#include "arbiter/host/config.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    arbiter::host::ConfigLoadOptions options;
    options.bundled_plugin_dir = "/nonexistent/plugins";
    try {
        (void)arbiter::host::parse_config(arbiter::fuzz::as_text(data, size), "fuzz.toml",
                                          "/nonexistent", options);
    } catch (const arbiter::host::ConfigError&) {
    }
    return 0;
}
