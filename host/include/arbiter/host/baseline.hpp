// `arbiter baseline`: population baselines. A corpus of recorded matches runs through
// every enabled plugin that declares ARB_CAP_BASELINE; each plugin gathers its own
// statistics (the host knows nothing of them) and returns a blob, which is written to
// the plugin's `baseline` file ([plugins.NAME] baseline = "...") and handed back to the
// plugin at its next creation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arbiter/host/progress.hpp"
#include "arbiter/host/config.hpp"

namespace arbiter::host {

struct BaselineOutcome {
    std::string plugin;          // the key in server_config.toml
    std::filesystem::path file;  // where the baseline went (or should have)
    bool written = false;
    uint64_t bytes = 0;
    std::string error;  // !written: why
};

struct BaselineReport {
    std::vector<BaselineOutcome> plugins;  // one per plugin that declares the capability
    uint64_t files = 0, unreadable_files = 0, batches = 0, refused_batches = 0, damaged = 0;
    uint64_t matches = 0;
    std::vector<std::string> problems;  // input problems, one line each
    // Enabled plugins that do not declare ARB_CAP_BASELINE (skipped).
    std::vector<std::string> skipped;
};

// Runs the corpus through each baseline plugin in turn and writes each blob atomically
// (a temporary file beside the destination, then a rename), together with a sidecar
// FILE.json that records when and from what it was made. A plugin without a `baseline`
// path, one that refuses to load or to compute, or a file that cannot be written is
// reported in its outcome; the others still run. Throws PluginError only when the
// config names no enabled plugin with the capability.
// `progress` is told the bytes of the corpus read; none: silent.
BaselineReport compute_baselines(const ServerConfig& config,
                                 const std::vector<std::filesystem::path>& corpus,
                                 Progress* progress = nullptr);

}  // namespace arbiter::host
