// What an isolated plugin's runner does to itself before it loads the plugin: resource
// limits, and a seccomp-bpf filter that allows what an analyzer needs (memory, threads,
// clocks, reading files, the link to the host) and nothing else: no sockets, no exec, no
// process of its own, no file opened for writing. A call outside the filter raises
// SIGSYS, whose handler tells the host the call's number and ends the process.
#pragma once

#include <cstdint>
#include <string>

#include <sys/types.h>

namespace arbiter::runner {

struct Limits {
    uint64_t memory_mb = 0;    // RLIMIT_AS; 0 = none
    uint64_t cpu_seconds = 0;  // RLIMIT_CPU; 0 = none
    // This process's threads, its first included; 0 = none. RLIMIT_NPROC counts every task
    // of the real user, so the limit is set to what the user has now plus these.
    uint64_t max_threads = 0;
};

// Becomes `uid` and `gid` for good (no supplementary groups, no way back to root); false
// when any step fails or root can still be had again.
bool become_user(uid_t uid, gid_t gid);

// Applies the limits and loads the filter; "" when done, else what failed (the runner
// then runs no plugin). Call once, before the plugin is loaded, with the socket to the
// host open at `socket_fd` (the SIGSYS handler writes to it).
std::string confine(const Limits& limits, int socket_fd);

}  // namespace arbiter::runner
