#include "confinement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "isolation/channel.hpp"

namespace arbiter::runner {

namespace {

int g_socket_fd = -1;

// Async-signal-safe: one frame to the host, then out. The host names the call.
void on_forbidden_call(int, siginfo_t* info, void*) {
    host::isolation::Frame frame;
    frame.op = static_cast<uint32_t>(host::isolation::Op::forbidden_call);
    frame.total = static_cast<uint64_t>(info->si_syscall);
    (void)::send(g_socket_fd, &frame, sizeof frame, MSG_NOSIGNAL);
    ::_exit(host::isolation::kExitForbiddenCall);
}

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

std::string set_limit(int resource, rlim_t value, const char* name) {
    const rlimit limit{value, value};
    if (::setrlimit(resource, &limit) != 0)
        return std::string("setrlimit(") + name + "): " + std::strerror(errno);
    return "";
}

// Calls an analyzer may make. Everything else traps.
const char* const kAllowed[] = {
    // memory
    "brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "membarrier",
    // threads and waiting
    "futex", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "sched_yield",
    "sched_getaffinity", "sched_getparam", "sched_getscheduler", "nanosleep", "clock_nanosleep",
    "exit", "exit_group", "restart_syscall",
    // signals (rt_sigaction is below: SIGSYS is the runner's)
    "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
    // time, identity, randomness
    "clock_gettime", "clock_getres", "gettimeofday", "time", "getpid", "gettid", "getppid",
    "getuid", "geteuid", "getgid", "getegid", "getrandom", "uname", "sysinfo", "getrusage",
    "times", "getrlimit", "getcwd",
    // descriptors already open (the link to the host, files opened to read)
    "read", "readv", "pread64", "preadv", "write", "writev", "close", "lseek", "fstat",
    "newfstatat", "stat", "lstat", "statx", "getdents64", "dup", "poll", "ppoll",
    "recvfrom", "sendto", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
};

std::string load_filter() {
    scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_TRAP);
    if (!filter) return "seccomp_init failed";
    int failed = 0;
    auto rule = [&](uint32_t action, const char* name, unsigned count,
                    const scmp_arg_cmp* args) {
        const int number = ::seccomp_syscall_resolve_name(name);
        if (number == __NR_SCMP_ERROR) return;  // not a call of this architecture
        const int result = ::seccomp_rule_add_array(filter, action, number, count, args);
        // -EDOM, -EOPNOTSUPP: a pseudo-call this architecture does not have.
        if (result != 0 && result != -EDOM && result != -EOPNOTSUPP && !failed) failed = result;
    };
    for (const char* name : kAllowed) rule(SCMP_ACT_ALLOW, name, 0, nullptr);

    // Files open to read only: no write access, no creating, truncating or appending.
    const scmp_datum_t write_flags =
        O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | 020000000 /* __O_TMPFILE */;
    const scmp_arg_cmp openat_read_only = SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, 0);
    rule(SCMP_ACT_ALLOW, "openat", 1, &openat_read_only);
    const scmp_arg_cmp open_read_only = SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, 0);
    rule(SCMP_ACT_ALLOW, "open", 1, &open_read_only);
    // Threads, never processes.
    const scmp_arg_cmp thread_only = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    rule(SCMP_ACT_ALLOW, "clone", 1, &thread_only);
    rule(SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, nullptr);  // glibc then uses clone
    // Signals of its own process alone (abort raises SIGABRT with tgkill).
    const scmp_arg_cmp own_process = SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(::getpid()));
    rule(SCMP_ACT_ALLOW, "tgkill", 1, &own_process);
    const scmp_arg_cmp not_sigsys = SCMP_A0(SCMP_CMP_NE, SIGSYS);
    rule(SCMP_ACT_ALLOW, "rt_sigaction", 1, &not_sigsys);
    // Reading a limit, never setting one.
    const scmp_arg_cmp read_limit = SCMP_A2(SCMP_CMP_EQ, 0);
    rule(SCMP_ACT_ALLOW, "prlimit64", 1, &read_limit);
    // A thread's name; other prctl calls are refused, not fatal.
    const scmp_arg_cmp set_name = SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME);
    const scmp_arg_cmp get_name = SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME);
    rule(SCMP_ACT_ALLOW, "prctl", 1, &set_name);
    rule(SCMP_ACT_ALLOW, "prctl", 1, &get_name);
    // Terminal queries (isatty) answer "not a terminal".
    rule(SCMP_ACT_ERRNO(ENOTTY), "ioctl", 0, nullptr);
    // fcntl's harmless commands alone: F_SETOWN and F_SETSIG would let the plugin send any
    // signal to any process of the host's user through O_ASYNC, and locks and leases on
    // files it may read would stall their writers (the review store's).
    for (const scmp_datum_t command :
         {scmp_datum_t{F_GETFD}, scmp_datum_t{F_SETFD}, scmp_datum_t{F_GETFL},
          scmp_datum_t{F_DUPFD}, scmp_datum_t{F_DUPFD_CLOEXEC}}) {
        const scmp_arg_cmp is = SCMP_A1(SCMP_CMP_EQ, command);
        rule(SCMP_ACT_ALLOW, "fcntl", 1, &is);
    }
    // F_SETFL, without O_ASYNC.
    const scmp_arg_cmp set_flags[] = {SCMP_A1(SCMP_CMP_EQ, F_SETFL),
                                      SCMP_A2(SCMP_CMP_MASKED_EQ, O_ASYNC, 0)};
    {
        const int number = ::seccomp_syscall_resolve_name("fcntl");
        const int result = ::seccomp_rule_add_array(filter, SCMP_ACT_ALLOW, number, 2, set_flags);
        if (result != 0 && !failed) failed = result;
    }

    std::string problem;
    if (failed) problem = std::string("seccomp_rule_add: ") + std::strerror(-failed);
    if (problem.empty()) {
        const int loaded = ::seccomp_load(filter);
        if (loaded != 0) problem = std::string("seccomp_load: ") + std::strerror(-loaded);
    }
    ::seccomp_release(filter);
    return problem;
}

// Tasks (threads) the real user `uid` has on the machine now: what RLIMIT_NPROC counts.
// Read before the filter is loaded, from every /proc/PID/status.
uint64_t tasks_of_user(uid_t uid) {
    uint64_t tasks = 0;
    DIR* proc = ::opendir("/proc");
    if (!proc) return 0;
    while (const dirent* entry = ::readdir(proc)) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
        const std::string path = std::string("/proc/") + entry->d_name + "/status";
        std::FILE* status = std::fopen(path.c_str(), "re");
        if (!status) continue;  // gone meanwhile
        char line[256];
        long real_uid = -1, threads = 0;
        while (std::fgets(line, sizeof line, status)) {
            if (std::strncmp(line, "Uid:", 4) == 0) real_uid = std::strtol(line + 4, nullptr, 10);
            else if (std::strncmp(line, "Threads:", 8) == 0) threads = std::strtol(line + 8, nullptr, 10);
        }
        std::fclose(status);
        if (real_uid == static_cast<long>(uid) && threads > 0) tasks += static_cast<uint64_t>(threads);
    }
    ::closedir(proc);
    return tasks;
}

}  // namespace

bool become_user(uid_t uid, gid_t gid) {
    if (uid == 0) return false;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 ||
        ::setresuid(uid, uid, uid) != 0)
        return false;
    // A process that can become root again has not changed user.
    return ::setuid(0) != 0 && ::getuid() == uid && ::geteuid() == uid && ::getgid() == gid;
}

std::string confine(const Limits& limits, int socket_fd) {
    g_socket_fd = socket_fd;
    // A sanitizer's runtime reserves terabytes of address space for its shadow memory: an
    // address-space limit would stop it before the plugin. Such builds are for tests.
    if (limits.memory_mb && !sanitized_build()) {
        if (auto problem = set_limit(RLIMIT_AS, limits.memory_mb << 20, "RLIMIT_AS"); !problem.empty())
            return problem;
    }
    if (limits.cpu_seconds) {
        // The hard limit a second later: the soft one sends SIGXCPU, which the host names;
        // at the hard one the kernel sends SIGKILL.
        const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + 1};
        if (::setrlimit(RLIMIT_CPU, &cpu) != 0)
            return std::string("setrlimit(RLIMIT_CPU): ") + std::strerror(errno);
    }
    for (const auto& [resource, name] : {std::pair{RLIMIT_FSIZE, "RLIMIT_FSIZE"},
                                         std::pair{RLIMIT_CORE, "RLIMIT_CORE"}})
        if (auto problem = set_limit(resource, 0, name); !problem.empty()) return problem;
    if (auto problem = set_limit(RLIMIT_NOFILE, 64, "RLIMIT_NOFILE"); !problem.empty())
        return problem;
    if (limits.max_threads) {
        // This thread is counted among the user's already.
        const rlim_t tasks = tasks_of_user(::getuid()) + limits.max_threads - 1;
        if (auto problem = set_limit(RLIMIT_NPROC, tasks, "RLIMIT_NPROC"); !problem.empty())
            return problem;
    }

    struct sigaction action {};
    action.sa_sigaction = &on_forbidden_call;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGSYS, &action, nullptr) != 0)
        return std::string("sigaction(SIGSYS): ") + std::strerror(errno);
    // Nothing of the same user may read this process's memory through /proc either.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return std::string("prctl(PR_SET_DUMPABLE): ") + std::strerror(errno);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
    return load_filter();
}

}  // namespace arbiter::runner
