#include "arbiter/host/baseline.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/input_lost.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "arbiter/host/sequence_ledger.hpp"
#include "core/admission.hpp"

namespace arbiter::host {

namespace {

// Writes bytes under a temporary name beside `path`, then renames: a reader never sees a
// half-written baseline, and a failed run leaves the previous one in place.
void write_atomically(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
    const auto temporary = path.parent_path() / (path.filename().string() + ".tmp");
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) {
            std::error_code ignored;
            std::filesystem::remove(temporary, ignored);
            throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
        }
    }
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) {
        std::error_code ignored;
        std::filesystem::remove(temporary, ignored);
        throw std::runtime_error(
            fmt::format("cannot move {} into place: {}", path.string(), error.message()));
    }
}

std::string utc_now() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// The corpus, read once and kept: every verified batch in file order, and where each
// match ends (the batch holding its MatchEnd, or its last batch).
struct Corpus {
    std::vector<VerifiedBatch> batches;
    std::vector<bool> last_of_match;  // after this batch, the match is over
    std::vector<bool> input_lost;     // the host's InputLost batch for a gap (schema 1.1)
};

Corpus read_corpus(const ServerConfig& config, const std::vector<std::filesystem::path>& files,
                   BaselineReport& report, Progress& progress) {
    FileSetProgress reading(progress, "baseline", files);
    Corpus corpus;
    std::map<std::pair<std::string, uint64_t>, size_t> last;  // match -> its last batch
    // As for a replay: a duplicate batch (the same file named twice, say) is counted once,
    // and a gap is told to the plugins that can be told, so no baseline measures across it.
    // (No assessment comes of a baseline run, so damage is not reported to the ledger:
    // its only use is to name the cause of a lost stretch in an assessment.)
    SequenceLedger ledger;
    for (size_t index = 0; index < files.size(); ++index) {
        const auto& file = files[index];
        ++report.files;
        std::unique_ptr<EventFileReader> reader;
        try {
            reader = std::make_unique<EventFileReader>(file);
        } catch (const std::exception& error) {
            ++report.unreadable_files;
            report.problems.push_back(error.what());
            continue;
        }
        while (auto item = reader->next()) {
            reading.at(index, item->offset);
            if (item->kind == EventFileItem::Kind::damage) {
                ++report.damaged;
                report.problems.push_back(
                    fmt::format("{}: offset {}: {}", file.string(), item->offset, item->problem));
                continue;
            }
            Admission admission = admit_batch(item->payload, config.host.max_batch_bytes, ledger);
            if (admission.problem) {
                ++report.refused_batches;
                report.problems.push_back(fmt::format("{}: offset {}: batch refused: {}",
                                                      file.string(), item->offset, *admission.problem));
                continue;
            }
            if (admission.lost) {
                corpus.batches.push_back(std::move(*admission.lost));
                corpus.input_lost.push_back(true);
            }
            ++report.batches;
            const auto key = std::make_pair(admission.batch.relay_id, admission.batch.match_id);
            last[key] = corpus.batches.size();
            corpus.batches.push_back(std::move(admission.batch));
            corpus.input_lost.push_back(false);
        }
    }
    corpus.last_of_match.assign(corpus.batches.size(), false);
    for (const auto& [key, index] : last)
        corpus.last_of_match[index] = true;
    // A MatchEnd ends a match too, even when batches of it follow (they start it afresh).
    for (size_t i = 0; i < corpus.batches.size(); ++i)
        if (corpus.batches[i].ends_match) corpus.last_of_match[i] = true;
    report.matches = last.size();
    return corpus;
}

void run_plugin(const PluginSettings& settings, std::shared_ptr<PluginLibrary> library,
                const Corpus& corpus, const std::vector<std::filesystem::path>& files,
                Metrics& metrics, BaselineOutcome& outcome) {
    // A fresh instance with no baseline: the one being computed must not shape itself.
    PluginInstance instance(library, settings, {}, 0, 1, &metrics);
    auto begun = instance.baseline_begin();
    if (!begun.ok())
        throw PluginError(fmt::format("plugin '{}' refused baseline_begin with {}: {}",
                                      settings.name, status_name(begun.status), begun.error));
    const bool told_of_gaps = library->identity().schema_minor >= kInputLostSchemaMinor;
    for (size_t i = 0; i < corpus.batches.size(); ++i) {
        const VerifiedBatch& batch = corpus.batches[i];
        if (corpus.input_lost[i] && !told_of_gaps) continue;
        auto result = instance.on_batch(batch);
        if (!result.ok())
            throw PluginError(fmt::format("plugin '{}' failed on match {}/{} batch {} with {}: {}",
                                          settings.name, batch.relay_id, batch.match_id,
                                          batch.sequence, status_name(result.status),
                                          result.error));
        if (corpus.last_of_match[i]) {
            auto ended = instance.on_match_end(batch.relay_id, batch.match_id);
            if (!ended.ok())
                throw PluginError(fmt::format("plugin '{}' failed at the end of match {}/{}: {}",
                                              settings.name, batch.relay_id, batch.match_id,
                                              ended.error));
        }
    }
    std::string error;
    auto blob = instance.baseline_end(error);
    if (!blob)
        throw PluginError(
            fmt::format("plugin '{}' refused baseline_end: {}", settings.name, error));
    write_atomically(outcome.file, *blob);
    nlohmann::json sidecar = {
        {"plugin", settings.name},          {"plugin_version", library->identity().version},
        {"written_utc", utc_now()},         {"bytes", blob->size()},
        {"batches", corpus.batches.size()},
    };
    nlohmann::json corpus_files = nlohmann::json::array();
    for (const auto& file : files)
        corpus_files.push_back(file.string());
    sidecar["corpus"] = corpus_files;
    const std::string text = sidecar.dump(2) + "\n";
    write_atomically(outcome.file.string() + ".json",
                     {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    outcome.written = true;
    outcome.bytes = blob->size();
}

}  // namespace

BaselineReport compute_baselines(const ServerConfig& config,
                                 const std::vector<std::filesystem::path>& files,
                                 Progress* progress) {
    BaselineReport report;
    PluginCopies store(config.host.work_dir);
    Metrics metrics;
    std::vector<std::pair<const PluginSettings*, std::shared_ptr<PluginLibrary>>> chosen;
    for (const auto& settings : config.plugins) {
        if (!settings.enabled) continue;
        std::shared_ptr<PluginLibrary> library;
        try {
            library = PluginLibrary::load(settings.library, settings.name, store, &metrics,
                                          settings.pin());
        } catch (const PluginError& error) {
            // A plugin that cannot load cannot say whether it computes baselines.
            report.plugins.push_back({settings.name, settings.baseline, false, 0, error.what()});
            continue;
        }
        if (!library->has(ARB_CAP_BASELINE)) {
            report.skipped.push_back(settings.name);
            continue;
        }
        chosen.emplace_back(&settings, std::move(library));
    }
    if (chosen.empty() && report.plugins.empty())
        throw PluginError(fmt::format("{}: no enabled plugin declares the baseline capability",
                                      config.file.string()));
    if (chosen.empty()) return report;

    NoProgress silent;
    const Corpus corpus = read_corpus(config, files, report, progress ? *progress : silent);
    for (auto& [settings, library] : chosen) {
        BaselineOutcome outcome{settings->name, settings->baseline, false, 0, ""};
        if (settings->baseline.empty()) {
            outcome.error = fmt::format(
                "{}: plugin '{}' has no baseline file: add baseline = \"FILE\" to [plugins.{}]",
                settings->position.str(), settings->name, settings->name);
        } else {
            try {
                run_plugin(*settings, library, corpus, files, metrics, outcome);
            } catch (const std::exception& error) {
                outcome.error = error.what();
            }
        }
        if (!outcome.error.empty()) spdlog::error("{}", outcome.error);
        report.plugins.push_back(std::move(outcome));
    }
    return report;
}

}  // namespace arbiter::host
