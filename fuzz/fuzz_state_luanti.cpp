// The luanti plugin's state restore: any blob is refused with an error or restored into an
// instance that goes on working through a Luanti match (fuzz/plugin_state.hpp).
#include "fuzz_input.hpp"
#include "luanti_analyzer.hpp"
#include "luanti_exercise.hpp"
#include "plugin_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<std::vector<uint8_t>> batches =
        arbiter::fuzz::luanti_exercise_batches();
    return arbiter::fuzz::restore_and_go_on<arbiter::luanti::LuantiAnalyzer>(data, size, batches);
}
