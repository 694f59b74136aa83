// Hot reload of one plugin (docs/abi-rules.md, rules 12 to 14); a new config is
// apply_config.cpp.
//
// Everything slow (copying the file, loading, negotiating, creating) happens before the
// swap; the swap itself is the old instance saving its state and the new one restoring
// it, and is the only time the stream is held. Destroying the old instance and releasing
// its library come after.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/elf_symbols.hpp"
#include "arbiter/host/host.hpp"
#include "arbiter/host/sharded_instance.hpp"

namespace arbiter::host {

std::string ReloadReport::describe() const {
    if (!ok)
        return fmt::format("plugin '{}': {} refused, the running generation stays: {}", plugin,
                           change, error);
    if (change == "reload" && forked)
        return fmt::format(
            "plugin '{}': reloaded {} -> {}; state {}; the stream went on: a forked copy saved "
            "the state in {:.0f} ms, the new version restored it in {:.0f} ms and made again "
            "the {} calls made meanwhile ({:.1f} MiB kept at most) in {:.0f} ms; the stream "
            "was held {:.0f} us (the fork {:.0f} us, waiting for room among the calls kept "
            "{:.0f} us), {:.0f} ms from start to end{}{}",
            plugin, from_version.empty() ? "(none)" : from_version, to_version, state,
            save_us / 1000.0, restore_us / 1000.0, calls_made_again,
            static_cast<double>(most_kept_bytes) / (1 << 20), catch_up_us / 1000.0, pause_us,
            pause_us - waited_us, waited_us, elapsed_us / 1000.0,
            throttled_us > 0 ? fmt::format("; the stream slowed for the catch-up {:.0f} ms",
                                           throttled_us / 1000.0)
                             : "",
            old_library_left ? "" : "; WARNING: the old library is still in memory");
    if (change == "reload" && staged)
        return fmt::format(
            "plugin '{}': reloaded {} -> {}; state {}; the stream went on: {} shards went over "
            "one at a time in {:.0f} ms, each holding its own matches at most {:.0f} us (saves "
            "{:.0f} us, restores {:.0f} us in all){}{}{}",
            plugin, from_version.empty() ? "(none)" : from_version, to_version, state,
            shard_pause_us.size(), elapsed_us / 1000.0, pause_us, save_us, restore_us,
            forked_shards == 0
                ? ""
                : fmt::format("; {} of them, with many players, forked: their new shards made "
                              "again the {} calls made meanwhile in {:.0f} ms ({:.1f} MiB kept "
                              "at most){}",
                              forked_shards, calls_made_again, catch_up_us / 1000.0,
                              static_cast<double>(most_kept_bytes) / (1 << 20),
                              throttled_us > 0
                                  ? fmt::format(", the stream slowed for them {:.0f} ms",
                                                throttled_us / 1000.0)
                                  : ""),
            fork_problem.empty() ? "" : "; carried instead of forked: " + fork_problem,
            old_library_left ? "" : "; WARNING: the old library is still in memory");
    if (change == "reload")
        return fmt::format(
            "plugin '{}': reloaded {} -> {}; state {}; stream paused {:.0f} us{}{}{}", plugin,
            from_version.empty() ? "(none)" : from_version, to_version, state, pause_us,
            save_us + restore_us > 0
                ? fmt::format(" (save {:.0f} us, restore {:.0f} us{})", save_us, restore_us,
                              shard_pause_us.size() > 1 ? ", over the shards" : "")
                : "",
            shard_pause_us.empty()
                ? ""
                : fmt::format(" (largest shard {:.0f} us)",
                              *std::max_element(shard_pause_us.begin(), shard_pause_us.end())),
            old_library_left ? "" : "; WARNING: the old library is still in memory");
    if (change == "added") return fmt::format("plugin '{}': added, version {}", plugin, to_version);
    if (change == "removed")
        return fmt::format("plugin '{}': removed (was version {})", plugin, from_version);
    if (change == "reconfigured")
        return fmt::format("plugin '{}': took its new config without a reload (version {})", plugin,
                           to_version);
    if (plugin == "(sinks)")
        return "sinks: the security-event log now follows the new [sinks] settings";
    return fmt::format("plugin '{}': new weight, class, trip-wire or deadline setting applied",
                       plugin);
}

ReloadReport refused_reload(const std::string& plugin, std::string error) {
    ReloadReport report;
    report.plugin = plugin;
    report.change = "reload";
    report.error = std::move(error);
    return report;
}

double Host::catch_up_timed() {
    // The batches pushed before the swap reach the old generation. The pushing thread
    // waits for them, so the wait is part of the pause the stream sees.
    const auto start = std::chrono::steady_clock::now();
    catch_up();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
        .count();
}

ReloadReport Host::swap_in(PluginSlot& slot, PluginSlot&& fresh, PluginSlot* retired) {
    ReloadReport report;
    report.plugin = slot.settings.name;
    report.change = "reload";
    report.from_version = slot.active() ? slot.library->identity().version : "";
    if (!fresh.active()) {
        report.error = fresh.error;
        return report;
    }
    report.to_version = fresh.library->identity().version;

    const auto start = std::chrono::steady_clock::now();
    if (!slot.active()) {
        report.state = "started fresh (there was no running instance)";
    } else if (!slot.library->has(ARB_CAP_STATE)) {
        report.state = "started fresh (the old version keeps no state: no ARB_CAP_STATE)";
    } else if (!fresh.library->has(ARB_CAP_STATE)) {
        report.state = "started fresh (the new version keeps no state: no ARB_CAP_STATE)";
    } else if (auto* sharded_from = dynamic_cast<ShardedInstance*>(slot.instance.get()),
               *sharded_to = dynamic_cast<ShardedInstance*>(fresh.instance.get());
               sharded_from && sharded_to &&
               sharded_from->shard_count() == sharded_to->shard_count()) {
        // Shard by shard, as many at once as there are threads: the pause is the largest
        // shard's, not the sum.
        const ShardCarry carry = sharded_to->carry_state_from(*sharded_from, threads_);
        report.shard_pause_us = carry.shard_us;
        report.save_us = carry.save_us;
        report.restore_us = carry.restore_us;
        if (!carry.saved)
            report.state = "started fresh (the old instance could not save its state: " +
                           carry.save_error + ")";
        else if (!carry.restored.ok())
            report.state = fmt::format(
                "started fresh (the new version refused the old state with {}: {})",
                status_name(carry.restored.status), carry.restored.error);
        else
            report.state = fmt::format("carried ({} bytes in {} shards)", carry.bytes,
                                       sharded_to->shard_count());
    } else {
        std::string error;
        const auto save_start = std::chrono::steady_clock::now();
        auto blob = slot.instance->save_state(error);
        const auto saved_at = std::chrono::steady_clock::now();
        report.save_us = std::chrono::duration<double, std::micro>(saved_at - save_start).count();
        if (blob) {
            auto restored = fresh.instance->restore_state(*blob);
            report.restore_us = std::chrono::duration<double, std::micro>(
                                    std::chrono::steady_clock::now() - saved_at)
                                    .count();
            report.state = restored.ok() ? fmt::format("carried ({} bytes)", blob->size())
                                         : fmt::format(
                                               "started fresh (the new version refused the old "
                                               "state with {}: {})",
                                               status_name(restored.status), restored.error);
        } else {
            report.state =
                "started fresh (the old instance could not save its state: " + error + ")";
        }
    }
    std::swap(slot, fresh);
    slot.stats = fresh.stats;  // the plugin's call counts go on across versions
    report.pause_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();

    // Off the event path: the old generation goes, and must leave memory.
    if (retired) {
        *retired = std::move(fresh);
        report.old_library_left = true;  // checked by release_retired
    } else {
        report.old_library_left = release_retired(std::move(fresh));
    }
    report.ok = true;
    metrics_.add("host.reloads", 1);
    metrics_.set("host.reload_pause_us." + report.plugin, report.pause_us);
    return report;
}

std::optional<ReloadReport> Host::begin_install(PluginSlot fresh, PluginSlot* retired) {
    refuse_inside_take_in("install a plugin");
    settle_install();
    PluginSlot* slot = dispatcher_.find(fresh.settings.name);
    auto* live =
        slot && slot->active() ? dynamic_cast<ShardedInstance*>(slot->instance.get()) : nullptr;
    auto* next = fresh.active() ? dynamic_cast<ShardedInstance*>(fresh.instance.get()) : nullptr;
    const bool carries = slot && slot->active() && fresh.active() &&
                         slot->library->has(ARB_CAP_STATE) && fresh.library->has(ARB_CAP_STATE) &&
                         slot->settings.makes_what(fresh.settings);
    const bool stageable = carries && parallel_ && live && next &&
                           live->shard_count() == parallel_->shards() &&
                           next->shard_count() == parallel_->shards();
    // With one thread, the handover: the stream is held for a fork, not for the save.
    // An isolated plugin keeps its state in its own child, which a fork does not copy; a
    // new version of another event schema would take batches the old one does not.
    const bool forks = carries && !parallel_ && slot->instance->in_process() &&
                       fresh.instance->in_process() &&
                       slot->instance->schema_minor() == fresh.instance->schema_minor();
    // Anything else (an unsharded plugin on several threads, a stale or failed load, no
    // state to carry) is installed whole, as before.
    if (!stageable && !forks) return install_plugin(std::move(fresh), retired);

    auto staged = std::make_unique<StagedInstall>();
    staged->report.plugin = slot->settings.name;
    staged->report.change = "reload";
    staged->report.from_version = slot->library->identity().version;
    staged->report.to_version = fresh.library->identity().version;
    staged->report.staged = true;
    fresh.settings = slot->settings;
    fresh.model_class =
        fresh.settings.model_class.value_or(fresh.library->identity().declared_class);
    if (forks) {
        staged->report.forked = true;
        staged->started = std::chrono::steady_clock::now();
        std::string error;
        auto handover = SnapshotHandover::begin(slot->instance, fresh.instance, error);
        if (!handover) {
            spdlog::warn("plugin '{}': {}; the reload holds the stream instead",
                         fresh.settings.name, error);
            return install_plugin(std::move(fresh), retired);
        }
        staged->handover = handover.get();
        slot->instance = std::move(handover);
        staged->fresh = std::move(fresh);
        staged_ = std::move(staged);
        spdlog::info(
            "plugin '{}': reloading; a forked copy saves the state while the stream "
            "goes on",
            staged_->report.plugin);
        return std::nullopt;
    }
    staged->fresh = std::move(fresh);
    const uint32_t count = live->shard_count();
    // The shards that hold many players are forked (as one thread forks), the others
    // carried: a carry's hold grows with the shard, a fork's with the whole host.
    const bool can_fork =
        live->in_process() && next->in_process() && live->schema_minor() == next->schema_minor();
    staged->steps.resize(count);
    std::vector<ParallelDispatch::Step> steps;
    steps.reserve(count);
    ShardStep* outcomes = staged->steps.data();
    for (uint32_t k = 0; k < count; ++k) {
        if (can_fork && forks_shard(shard_players_[k], open_players_))
            steps.push_back({k, [next, live, outcomes, k]() noexcept {
                                 outcomes[k] = next->fork_shard_into(k, *live);
                             }});
        else
            steps.push_back({k, [next, live, outcomes, k]() noexcept {
                                 outcomes[k] = next->carry_shard_into(k, *live);
                             }});
    }
    staged->started = std::chrono::steady_clock::now();
    staged_ = std::move(staged);
    try {
        parallel_->run_in_turn(std::move(steps));
    } catch (...) {
        // Nothing was queued: the host is as it was.
        staged_.reset();
        throw;
    }
    spdlog::info("plugin '{}': reloading shard by shard ({} shards) while the stream goes on",
                 staged_->report.plugin, count);
    return std::nullopt;
}

std::optional<ReloadReport> Host::finished_install(PluginSlot* retired) {
    if (installs_done_.empty()) {
        if (!staged_) return std::nullopt;
        if (staged_->handover) {
            if (!staged_->handover->done()) return std::nullopt;
            end_handover();
        } else {
            if (!shards_across(false)) return std::nullopt;
            end_staged_install();
        }
    }
    auto [report, replaced] = std::move(installs_done_.front());
    installs_done_.erase(installs_done_.begin());
    if (retired) {
        *retired = std::move(replaced);
    } else {
        report.old_library_left = release_retired(std::move(replaced));
    }
    return report;
}

void Host::settle_install() {
    if (!staged_) return;
    if (staged_->handover) {
        staged_->handover->wait_done();
        end_handover();
        return;
    }
    shards_across(true);
    end_staged_install();
}

bool Host::shards_across(bool wait) {
    StagedInstall& staged = *staged_;
    if (wait)
        parallel_->wait_for_steps();
    else if (parallel_->steps_pending())
        return false;
    if (staged.handovers_ended) return true;
    // No step runs now, and only this thread posts them: the shards may be looked at.
    auto& live = dynamic_cast<ShardedInstance&>(*dispatcher_.find(staged.report.plugin)->instance);
    auto* next = &dynamic_cast<ShardedInstance&>(*staged.fresh.instance);
    std::vector<ParallelDispatch::Step> ends;
    for (uint32_t k = 0; k < staged.steps.size(); ++k) {
        if (!staged.steps[k].forked) continue;
        if (live.handover_running(k)) {
            if (!wait) return false;
            live.wait_for_handover(k);
        }
        ShardStep* step = &staged.steps[k];
        ends.push_back({k, [next, live = &live, step, k]() noexcept {
                            next->end_shard_handover(k, *live, *step);
                        }});
    }
    const bool posted = !ends.empty();
    if (posted) parallel_->run_in_turn(std::move(ends));
    staged.handovers_ended = true;
    if (!wait) return !posted;
    parallel_->wait_for_steps();
    return true;
}

void Host::staged_done(ReloadReport report, PluginSlot replaced) {
    installs_done_.emplace_back(std::move(report), std::move(replaced));  // room made before
    staged_.reset();
    const ReloadReport& done = installs_done_.back().first;
    metrics_.add("host.reloads", 1);
    metrics_.set("host.reload_pause_us." + done.plugin, done.pause_us);
    spdlog::info("{}", done.describe());
}

void Host::end_handover() {
    const auto start = std::chrono::steady_clock::now();
    StagedInstall& staged = *staged_;
    PluginSlot* slot = dispatcher_.find(staged.report.plugin);
    SnapshotHandover& handover = *staged.handover;
    const SnapshotHandover::Result result = handover.result();
    std::unique_ptr<AnalyzerInstance> old = handover.take_old();
    std::unique_ptr<AnalyzerInstance> fresh = handover.take_fresh();
    installs_done_.reserve(installs_done_.size() + 1);

    if (result.outcome == SnapshotHandover::Outcome::snapshot_failed) {
        // The old instance answered throughout: it goes back in its slot, and the reload is
        // made whole, as install_plugin makes it.
        slot->instance = std::move(old);
        staged.fresh.instance = std::move(fresh);
        PluginSlot next = std::move(staged.fresh);
        staged_.reset();
        spdlog::warn(
            "plugin '{}': the forked copy gave no state ({}); the reload holds the "
            "stream instead",
            slot->settings.name, result.error);
        PluginSlot replaced;
        ReloadReport report = swap_in(*slot, std::move(next), &replaced);
        report.pause_us += result.fork_us + result.waited_us;
        report.state += " (the forked copy failed: " + result.error + ")";
        report.ok ? spdlog::info("{}", report.describe()) : spdlog::error("{}", report.describe());
        installs_done_.emplace_back(std::move(report), std::move(replaced));
        return;
    }

    slot->instance = std::move(fresh);  // and the handover, done, goes
    staged.fresh.instance = std::move(old);
    std::swap(slot->library, staged.fresh.library);
    std::swap(slot->model_class, staged.fresh.model_class);

    ReloadReport report = staged.report;
    report.ok = true;
    report.pause_us =
        result.fork_us + result.waited_us +
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    report.waited_us = result.waited_us;
    report.shard_pause_us = {report.pause_us};
    report.elapsed_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - staged.started)
            .count();
    report.save_us = result.save_us;
    report.restore_us = result.restore_us;
    report.catch_up_us = result.catch_up_us;
    report.calls_made_again = result.calls_made_again;
    report.most_kept_bytes = result.most_kept_bytes;
    report.throttled_us = result.throttled_us;
    switch (result.outcome) {
        case SnapshotHandover::Outcome::carried:
            report.state = fmt::format("carried ({} bytes)", result.bytes);
            break;
        case SnapshotHandover::Outcome::save_refused:
            report.state =
                "started fresh (the old instance could not save its state: " + result.error + ")";
            break;
        default:
            report.state =
                fmt::format("started fresh (the new version refused the old state with {}: {})",
                            status_name(result.restored.status), result.restored.error);
            break;
    }
    staged_done(std::move(report), std::move(staged.fresh));
}

void Host::end_staged_install() {
    StagedInstall& staged = *staged_;
    // Nothing changes the slots while shards go over (settle_install comes first).
    PluginSlot* slot = dispatcher_.find(staged.report.plugin);
    auto& live = dynamic_cast<ShardedInstance&>(*slot->instance);
    auto& old = dynamic_cast<ShardedInstance&>(*staged.fresh.instance);

    // The report first, and room for it: what can fail comes before the swap, so that a
    // failure (out of memory) leaves the install to be ended again, not half ended.
    ReloadReport report = staged.report;
    report.ok = true;
    report.elapsed_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - staged.started)
            .count();
    size_t carried = 0;
    size_t bytes = 0;
    std::string first_failure;
    for (size_t k = 0; k < staged.steps.size(); ++k) {
        const ShardStep& step = staged.steps[k];
        report.shard_pause_us.push_back(step.us);
        report.shard_cpu_us.push_back(step.cpu_us);
        report.save_us += step.save_us;
        report.restore_us += step.restore_us;
        report.pause_us = std::max(report.pause_us, step.us);
        bytes += step.bytes;
        if (step.forked) {
            ++report.forked_shards;
            report.shard_fork_us.push_back(step.fork_us);
            report.catch_up_us += step.catch_up_us;
            report.calls_made_again += step.calls_made_again;
            report.most_kept_bytes += step.most_kept_bytes;
            report.throttled_us += step.throttled_us;
        }
        if (!step.fork_problem.empty() && report.fork_problem.empty())
            report.fork_problem = fmt::format("shard {}: {}", k, step.fork_problem);
        if (step.ok()) {
            ++carried;
        } else if (first_failure.empty()) {
            first_failure =
                !step.saved
                    ? fmt::format("shard {}: the old instance could not save its state: {}", k,
                                  step.save_error)
                    : fmt::format("shard {}: the new version refused the old state with {}: {}{}",
                                  k, status_name(step.restored.status), step.restored.error,
                                  step.remake_problem);
        }
    }
    const size_t count = staged.steps.size();
    if (carried == count)
        report.state = fmt::format("carried ({} bytes in {} shards)", bytes, count);
    else if (carried == 0)
        report.state = fmt::format("started fresh in every shard ({})", first_failure);
    else
        report.state = fmt::format(
            "carried in {} of {} shards ({} bytes); the others started "
            "fresh ({})",
            carried, count, bytes, first_failure);
    installs_done_.reserve(installs_done_.size() + 1);

    old.exchange_making(live);
    std::swap(slot->library, staged.fresh.library);
    std::swap(slot->model_class, staged.fresh.model_class);
    staged_done(std::move(report), std::move(staged.fresh));
}

bool Host::release_retired(PluginSlot retired) {
    if (!retired.library) return true;
    const std::filesystem::path copy = retired.library->private_copy();
    const std::string name = retired.settings.name;
    retired.instance.reset();
    retired.library.reset();
    const bool left = !library_still_resident(copy);
    if (!left)
        spdlog::warn(
            "plugin '{}': the old version's library {} is still in memory after its release "
            "(a thread or a unique symbol of its own keeps it)",
            name, copy.filename().string());
    return left;
}

PluginSlot Host::prepare_plugin(const PluginSettings& settings) {
    // A fork (one thread, or a shard with many players) is cheaper with less mapped. A
    // carried shard is not: a trimmed heap is memory its save and restore fault back in
    // (about 400 faults, 0.5 ms, for a shard of 500 players), so a host whose shards
    // would all be carried keeps its heap.
    try {
        if (!parallel_ || a_shard_would_fork_.load(std::memory_order_relaxed))
            SnapshotHandover::make_the_next_fork_cheaper();
        return load_plugin_slot(settings, plugin_copies_, metrics_, config_.host.plugin_runner,
                                shards_);
    } catch (const std::exception& error) {
        // A plugin's refusal is already a refused slot; this is the rest (out of memory, a
        // file system error), which must not end the loader thread that called it.
        PluginSlot refused;
        refused.settings = settings;
        refused.error = fmt::format("plugin '{}': {}", settings.name, error.what());
        return refused;
    }
}

ReloadReport Host::install_plugin(PluginSlot fresh, PluginSlot* retired) {
    refuse_inside_take_in("install a plugin");
    settle_install();
    const double waited_us = catch_up_timed();
    PluginSlot* slot = dispatcher_.find(fresh.settings.name);
    // The config may have changed while the new version loaded. What the new instance was
    // made from (its library, its own table, its baseline) must still be what the config
    // says, or it is stale and the caller prepares it again; the host's own settings for it
    // (weight, class, trip-wires) are taken as they are now, never as they were.
    const bool stale = slot && !slot->settings.makes_what(fresh.settings);
    if (!slot || stale) {
        ReloadReport report;
        report.plugin = fresh.settings.name;
        report.change = "reload";
        report.stale = stale;
        report.error =
            slot ? "the config changed the plugin's library, table or baseline while the new "
                   "version loaded; it is loaded again with the config as it is now"
                 : "no plugin '" + fresh.settings.name + "' is configured any more";
        spdlog::warn("{}", report.describe());
        // Not installed: destroyed off the event path like a replaced generation, if asked.
        if (retired) *retired = std::move(fresh);
        return report;
    }
    fresh.settings = slot->settings;
    if (fresh.active())
        fresh.model_class =
            fresh.settings.model_class.value_or(fresh.library->identity().declared_class);
    ReloadReport report = swap_in(*slot, std::move(fresh), retired);
    report.pause_us += waited_us;
    report.waited_us = waited_us;
    if (report.ok) metrics_.set("host.reload_pause_us." + report.plugin, report.pause_us);
    report.ok ? spdlog::info("{}", report.describe()) : spdlog::error("{}", report.describe());
    return report;
}

ReloadReport Host::reload_plugin(const std::string& name) {
    refuse_inside_take_in("reload a plugin");
    const PluginSlot* slot = dispatcher_.find(name);
    if (!slot) return refused_reload(name, "no plugin '" + name + "' is configured");
    return install_plugin(prepare_plugin(slot->settings));
}

}  // namespace arbiter::host
