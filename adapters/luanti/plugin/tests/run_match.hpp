// Runs a Luanti match through the analyzer in the SDK's harness, and reads the result.
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <arbiter/sdk/testing.hpp>

#include "luanti_analyzer.hpp"
#include "luanti_script.hpp"

namespace luanti_test {

using Harness = arbiter::testing::Harness<arbiter::luanti::LuantiAnalyzer>;

inline std::unique_ptr<Harness> run(
    const std::vector<std::vector<uint8_t>>& batches,
    const arbiter::ConfigValue& config = arbiter::ConfigValue::table({})) {
    auto harness = std::make_unique<Harness>(config);
    if (!harness->ok())
        throw std::runtime_error("the analyzer was not created: " + harness->error());
    for (const auto& batch : batches)
        harness->feed(batch);
    return harness;
}

// The highest score x confidence a player reached on a check (what the host weighs).
inline double weighted(const Harness& harness, uint32_t player, const std::string& code) {
    double best = 0.0;
    for (const auto& s : harness.signals())
        if (s.player == player && s.code == code) best = std::max(best, s.score * s.confidence);
    return best;
}

inline double metric(Harness& harness, const std::string& name) {
    auto it = harness.host().metrics.find(name);
    return it == harness.host().metrics.end() ? 0.0 : it->second;
}

}  // namespace luanti_test
