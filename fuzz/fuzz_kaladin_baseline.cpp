// The kaladin baseline file, resealed (plugin_state.hpp; `arbiter baseline` writes it, the operator
// names it in the config, so it may be damaged or hand-edited): any bytes are refused at creation
// with an error, or give an instance whose limits come from them and that goes on working over a
// match with players of two tiers.
#include "baseline.hpp"
#include "fuzz_input.hpp"
#include "kaladin_analyzer.hpp"
#include "plugin_state.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<std::vector<uint8_t>> batches =
        arbiter::fuzz::state_exercise_batches();
    const std::vector<uint8_t> bytes = arbiter::fuzz::resealed(data, size);
    bool readable = true;
    try {
        (void)arbiter::kaladin::BaselineFile::read(bytes);
    } catch (const std::exception&) {
        readable = false;
    }
    arbiter::testing::Harness<arbiter::kaladin::KaladinAnalyzer> harness(
        arbiter::ConfigValue::table({}), bytes);
    // No bytes is no baseline; any other file is used exactly when it reads.
    if (!bytes.empty() && harness.ok() != readable) __builtin_trap();
    if (!harness.ok()) return 0;
    for (const auto& batch : batches)
        (void)harness.feed(batch);
    (void)harness.end_match("fuzz-relay", 1);
    return 0;
}
