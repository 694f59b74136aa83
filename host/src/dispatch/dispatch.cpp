#include "arbiter/host/dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/file_trust.hpp"
#include "arbiter/host/isolated_instance.hpp"
#include "arbiter/host/sharded_instance.hpp"
#include "arbiter/host/suggest.hpp"

namespace arbiter::host {

std::vector<uint8_t> read_plugin_baseline(const PluginSettings& settings) {
    if (settings.baseline.empty()) return {};
    try {
        return read_trusted_file(settings.baseline, kBaselineRules);
    } catch (const std::exception& error) {
        throw PluginError(fmt::format("{}: plugin '{}': {}", settings.position.str(), settings.name,
                                      error.what()));
    }
}

namespace {

// Logs the first few failures of a plugin, then every power of two, so that a plugin
// failing on every batch cannot flood the log.
bool worth_logging(double count) {
    auto n = static_cast<uint64_t>(count);
    return n <= 5 || (n & (n - 1)) == 0;
}

uint64_t elapsed_ns(std::chrono::steady_clock::time_point start) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
}

// Counts a call's time against the plugin, and one past its deadline as such: logged (the
// first few, then every power of two) and counted. The call has returned by now: a plugin
// in the host's process cannot be stopped safely, so all the host can do is say so.
void timed(PluginSlot& slot, uint64_t ns, const char* call) {
    slot.stats.busy_ns += ns;
    slot.stats.slowest_ns = std::max(slot.stats.slowest_ns, ns);
    if (ns <= slot.settings.deadline_ms * 1'000'000) return;
    ++slot.stats.over_deadline;
    // An isolated plugin past its deadline was killed and has said so already.
    if (slot.settings.isolation.process) return;
    if (worth_logging(static_cast<double>(slot.stats.over_deadline)))
        spdlog::warn(
            "plugin '{}': {} took {} ms, past its deadline of {} ms ({} call(s) so far); it "
            "runs in the host's process, so the stream waited for it (isolation = \"process\" "
            "would stop it at its deadline)",
            slot.settings.name, call, ns / 1'000'000, slot.settings.deadline_ms,
            slot.stats.over_deadline);
}

}  // namespace

namespace {

// A bundled name with no file behind it is a slip or a broken install: say which names
// there are, and which one was probably meant, rather than only "file not found".
void check_bundled_plugin_exists(const PluginSettings& settings) {
    std::error_code error;
    if (!settings.bundled || std::filesystem::exists(settings.library, error)) return;
    const auto dir = settings.library.parent_path();
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string file = entry.path().filename().string();
        if (file.starts_with("arbiter-") && file.ends_with(".so"))
            names.push_back(file.substr(8, file.size() - 11));
    }
    std::sort(names.begin(), names.end());
    std::string wanted = settings.library.filename().string();
    wanted = wanted.substr(8, wanted.size() - 11);
    std::string listed;
    for (const auto& name : names)
        listed += (listed.empty() ? "" : ", ") + name;
    throw PluginError(fmt::format(
        "{}: plugin '{}': no bundled plugin '{}' in {}{}{}", settings.position.str(), settings.name,
        wanted, dir.string(),
        names.empty() ? std::string(" (the folder holds none: is Arbiter installed whole?)")
                      : " (bundled: " + listed + ")",
        did_you_mean(wanted, names)));
}

}  // namespace

PluginSlot load_plugin_slot(const PluginSettings& settings, PluginCopies& copies, Metrics& metrics,
                            const std::filesystem::path& plugin_runner, uint32_t shards) {
    PluginSlot slot;
    slot.settings = settings;
    // One set of bounds for the generation, whichever process and however many shards.
    auto bounds = std::make_shared<PluginBounds>(settings.name, settings.limits, &metrics);
    try {
        check_bundled_plugin_exists(settings);
        auto baseline = read_plugin_baseline(settings);
        std::shared_ptr<PluginLibrary> library;
        if (settings.isolation.process) {
            // Nothing of the plugin runs here: the child loads the copy and negotiates.
            library = PluginLibrary::copy_for_isolation(settings.library, settings.name, copies,
                                                        settings.pin());
            slot.instance = std::make_unique<IsolatedInstance>(
                library, settings, baseline,
                plugin_runner.empty() ? default_plugin_runner() : plugin_runner, &metrics,
                bounds);
        } else {
            library = PluginLibrary::load(settings.library, settings.name, copies, &metrics,
                                          settings.pin());
            if (shards > 1 && library->has(ARB_CAP_SHARD_BY_MATCH)) {
                std::vector<std::unique_ptr<AnalyzerInstance>> instances;
                for (uint32_t k = 0; k < shards; ++k)
                    instances.push_back(std::make_unique<PluginInstance>(
                        library, settings, baseline, k, shards, &metrics, bounds));
                auto sharded = std::make_unique<ShardedInstance>(std::move(instances));
                sharded->remember_config(settings, baseline);
                sharded->set_remake([library, settings, baseline, shards, metrics = &metrics,
                                     bounds](uint32_t shard) {
                    return std::make_unique<PluginInstance>(library, settings, baseline, shard,
                                                            shards, metrics, bounds);
                });
                slot.instance = std::move(sharded);
            } else {
                slot.instance = std::make_unique<PluginInstance>(library, settings, baseline, 0,
                                                                 1, &metrics, bounds);
            }
        }
        slot.model_class = settings.model_class.value_or(library->identity().declared_class);
        slot.library = std::move(library);
        slot.bounds = std::move(bounds);
        const auto& id = slot.library->identity();
        spdlog::info("plugin '{}': loaded {} {} (ABI {}, schema {}, capabilities {}, class {}{})",
                     settings.name, id.name, id.version,
                     describe_version(id.abi_major, id.abi_minor, id.abi_minor_required),
                     describe_version(id.schema_major, id.schema_minor, id.schema_minor_required),
                     describe_capabilities(id.capabilities), to_string(slot.model_class),
                     settings.isolation.process
                         ? fmt::format(", isolated in process {}", slot.instance->isolation().pid)
                     : slot.instance->shard_count() > 1
                         ? fmt::format(", {} shards", slot.instance->shard_count())
                         : std::string());
    } catch (const PluginError& error) {
        slot.instance.reset();
        slot.library.reset();
        slot.error = error.what();
        // Like every other config error, with the place in the file that named the plugin
        // (most refusals say it already; a missing file, a bad ABI, a pin do not).
        const SourcePosition& where = settings.position;
        if (!where.file.empty() && !slot.error.starts_with(where.file + ":"))
            slot.error = where.str() + ": " + slot.error;
        spdlog::error("{}", slot.error);
    }
    return slot;
}

PluginSlot* Dispatcher::find(const std::string& name) {
    for (auto& slot : slots_)
        if (slot.settings.name == name) return &slot;
    return nullptr;
}

void Dispatcher::collect(PluginSlot& slot, CallResult&& result, const std::string& relay_id,
                         uint64_t match_id, int64_t relay_time_us, const char* call,
                         std::vector<SignalRecord>& out) {
    const std::string& name = slot.settings.name;
    ++slot.stats.calls;
    if (!result.ok()) {
        ++slot.stats.errors;
        metrics_.add("host.plugin_errors." + name, 1);
        if (worth_logging(metrics_.get("host.plugin_errors." + name)))
            spdlog::error("plugin '{}': {} failed for match {}/{} with {}: {}", name, call,
                          relay_id, match_id, status_name(result.status),
                          result.error.empty() ? "(no detail)" : result.error);
    }
    for (auto& raw : result.signals) {
        SignalRecord record;
        record.plugin = name;
        record.model_class = slot.model_class;
        record.weight = slot.settings.weight;
        record.tripwires_allowed = slot.settings.tripwires;
        record.player = {relay_id, match_id, raw.player};
        record.code = std::move(raw.code);
        record.score = raw.score;
        record.confidence = raw.confidence;
        record.tripwire = raw.tripwire;
        record.evidence_json = std::move(raw.evidence_json);
        record.reported_at_us = relay_time_us;
        out.push_back(std::move(record));
    }
}

bool Dispatcher::takes(size_t index, uint32_t min_schema_minor) const {
    const PluginSlot& slot = slots_[index];
    return slot.active() && slot.instance->takes_calls() &&
           slot.library->identity().schema_minor >= min_schema_minor;
}

std::vector<SignalRecord> Dispatcher::gather(std::vector<PluginCall>& calls,
                                             const std::string& relay_id, uint64_t match_id,
                                             int64_t relay_time_us, const char* call) {
    std::vector<SignalRecord> out;
    for (size_t i = 0; i < calls.size() && i < slots_.size(); ++i) {
        if (!calls[i].made) continue;
        timed(slots_[i], calls[i].ns, call);
        collect(slots_[i], std::move(calls[i].result), relay_id, match_id, relay_time_us, call,
                out);
    }
    return out;
}

std::vector<SignalRecord> Dispatcher::dispatch(const VerifiedBatch& batch,
                                               uint32_t min_schema_minor) {
    std::vector<PluginCall> calls(slots_.size());
    // Isolated plugins get the batch first and work on it in their own processes while the
    // ones in the host's process run; the answers are still taken in the config's order.
    for (size_t i = 0; i < slots_.size(); ++i)
        if (takes(i, min_schema_minor)) slots_[i].instance->start_batch(batch);
    for (size_t i = 0; i < slots_.size(); ++i) {
        if (!takes(i, min_schema_minor)) continue;
        const auto start = std::chrono::steady_clock::now();
        calls[i].result = slots_[i].instance->on_batch(batch);
        calls[i].ns = elapsed_ns(start);
        calls[i].made = true;
    }
    return gather(calls, batch.relay_id, batch.match_id, batch.last_relay_time_us, "on_batch");
}

std::vector<SignalRecord> Dispatcher::end_match(const std::string& relay_id, uint64_t match_id,
                                                int64_t relay_time_us) {
    std::vector<PluginCall> calls(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
        if (!takes(i)) continue;
        const auto start = std::chrono::steady_clock::now();
        calls[i].result = slots_[i].instance->on_match_end(relay_id, match_id);
        calls[i].ns = elapsed_ns(start);
        calls[i].made = true;
    }
    return gather(calls, relay_id, match_id, relay_time_us, "on_match_end");
}

}  // namespace arbiter::host
