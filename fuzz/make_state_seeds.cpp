// Writes the seed corpora of the state-restore and baseline harnesses: what each bundled
// plugin saves part-way through and at the end of the harnesses' match, and kaladin
// baseline files of one and of several tiers. Run once when a state format changes:
//
//   cmake --build build/release --target fuzz_make_state_seeds
//   build/release/bin/fuzz_make_state_seeds fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "accounts_analyzer.hpp"
#include "baseline.hpp"
#include "kaladin_analyzer.hpp"
#include "lagpool_analyzer.hpp"
#include "luanti_analyzer.hpp"
#include "luanti_exercise.hpp"
#include "plugin_state.hpp"
#include "reference_analyzer.hpp"

namespace {

void write(const std::filesystem::path& file, const std::vector<uint8_t>& bytes) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    std::printf("%s: %zu bytes\n", file.c_str(), bytes.size());
}

// Saves after the first batch, half-way, and after the last batch (before the match ends).
template <class T>
void state_seeds(
    const std::filesystem::path& dir,
    const std::vector<std::vector<uint8_t>>& batches = arbiter::fuzz::state_exercise_batches()) {
    arbiter::testing::Harness<T> harness;
    for (size_t i = 0; i < batches.size(); ++i) {
        (void)harness.feed(batches[i]);
        if (i == 0 || i == batches.size() / 2 || i + 1 == batches.size())
            if (auto blob = harness.save_state())
                write(dir / ("after-batch-" + std::to_string(i)), *blob);
    }
}

void baseline_seeds(const std::filesystem::path& dir) {
    using arbiter::kaladin::BaselineCollector;
    using arbiter::kaladin::Metric;
    for (const int tiers : {1, 3}) {
        BaselineCollector collector;
        for (int tier = 0; tier < tiers; ++tier) {
            const std::string name = tier == 0 ? "gold" : tier == 1 ? "bronze" : "master";
            for (int player = 0; player < 120; ++player) {
                collector.add_player(name);
                collector.add(name, Metric::min_cv, 0.1 + player * 0.01);
                collector.add(name, Metric::min_entropy, 1.5 + player * 0.02);
                collector.add(name, Metric::peak_rate, 200.0 + player);
            }
        }
        write(dir / ("tiers-" + std::to_string(tiers)), collector.finish().write());
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_make_state_seeds CORPUS_DIR (fuzz/corpus)\n");
        return 1;
    }
    const std::filesystem::path corpus = argv[1];
    state_seeds<arbiter::reference::ReferenceAnalyzer>(corpus / "state_reference");
    state_seeds<arbiter::reference::AccountsAnalyzer>(corpus / "state_accounts");
    state_seeds<arbiter::kaladin::KaladinAnalyzer>(corpus / "state_kaladin");
    state_seeds<arbiter::lagpool::LagpoolAnalyzer>(corpus / "state_lagpool");
    state_seeds<arbiter::luanti::LuantiAnalyzer>(corpus / "state_luanti",
                                                 arbiter::fuzz::luanti_exercise_batches());
    baseline_seeds(corpus / "kaladin_baseline");
    return 0;
}
