// What a hot reload or a config change did to one plugin, for logs, `arbiter ctl` and
// tests.
#pragma once

#include <string>
#include <vector>

namespace arbiter::host {

// Added to the error of each refusal that refused a whole config change.
inline constexpr const char* kConfigNotAppliedNote =
    " (the config was not applied: every change in it waits until this is mended; the running "
    "config stays)";

struct ReloadReport {
    std::string plugin;          // the plugin's key in the config
    std::string change;          // "reload", "added", "removed", "reconfigured", "settings"
    bool ok = false;
    std::string error;           // why it was refused; the old generation keeps running
    std::string from_version;    // the plugin's own versions, before and after
    std::string to_version;
    std::string state;           // what happened to the plugin's state
    double pause_us = 0.0;       // how long the stream was held for the swap
    // Of pause_us, the wait for the batches pushed before the reload to finish on the
    // worker threads (0 with one thread): they run meanwhile, the pushing thread waits.
    double waited_us = 0.0;
    // A plugin run in shards ([host] threads): each shard's save and restore (wall), run
    // as many at once as there are threads, so pause_us follows the largest. Empty for
    // an unsharded plugin.
    std::vector<double> shard_pause_us;
    // Staged: of each shard's pause, the time its step's thread was on a core (in shard
    // order, beside shard_pause_us); the rest of a pause is the step waiting for a core.
    std::vector<double> shard_cpu_us;
    // Host::begin_install carried the shards one at a time, each on its own lane between
    // two of its batches, while the other shards and the pushing thread went on. Then
    // pause_us is the longest any shard's matches were held (its step in shard_pause_us),
    // waited_us is 0, and elapsed_us is the time from the start to the last shard across.
    bool staged = false;
    double elapsed_us = 0.0;
    // With one thread, Host::begin_install forked (SnapshotHandover): a copy of the host
    // saved the old state while the old instance went on answering, and the new one
    // restored it and made again the calls made meanwhile. Then staged is set too,
    // pause_us is the fork and any wait for room among the kept calls (that wait alone in
    // waited_us), save_us the copy's save, and these say what the catch-up took.
    bool forked = false;
    double catch_up_us = 0.0;
    uint64_t calls_made_again = 0;
    uint64_t most_kept_bytes = 0;  // the batches kept for the catch-up, at their most
    // A catch-up that outran its patience slowed the stream to half its own pace
    // (SnapshotHandover::kCatchUpPatience): the time calls waited so, summed. Not in
    // pause_us: no call waited longer than a call or two of the new instance.
    double throttled_us = 0.0;
    // On several threads, staged: the shards forked rather than carried, for holding many
    // players (Host::forks_shard). catch_up_us, calls_made_again, most_kept_bytes
    // and throttled_us are then their sums; each one's pause is in shard_pause_us.
    uint32_t forked_shards = 0;
    // The fork() of each forked shard, in shard order: the part of its pause that is the
    // kernel copying the host's page tables (the rest is waiting for a core, and the end).
    std::vector<double> shard_fork_us;
    // A shard that was to be forked and was carried (the fork, or its copy, failed): the
    // first, and why.
    std::string fork_problem;
    // Of the carry: the old generation's save_state and the new one's restore_state, wall
    // time, summed over the shards (0 when nothing was carried).
    double save_us = 0.0;
    double restore_us = 0.0;
    bool old_library_left = true;  // the old copy left memory after release
    // install_plugin refused a prepared version made from settings the config has since
    // changed: prepare it again from the current settings.
    bool stale = false;

    std::string describe() const;
};

// A reload of `plugin` refused before anything was loaded (no such plugin is configured).
ReloadReport refused_reload(const std::string& plugin, std::string error);

}  // namespace arbiter::host
