// The kaladin plugin's state restore: any blob is refused with an error or restored into an
// instance that goes on working (fuzz/plugin_state.hpp).
#include "fuzz_input.hpp"
#include "kaladin_analyzer.hpp"
#include "plugin_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return arbiter::fuzz::restore_and_go_on<arbiter::kaladin::KaladinAnalyzer>(data, size);
}
