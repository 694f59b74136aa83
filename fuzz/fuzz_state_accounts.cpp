// The accounts plugin's state restore: any blob is refused with an error or restored into an
// instance that goes on working (fuzz/plugin_state.hpp).
#include "accounts_analyzer.hpp"
#include "fuzz_input.hpp"
#include "plugin_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return arbiter::fuzz::restore_and_go_on<arbiter::reference::AccountsAnalyzer>(data, size);
}
