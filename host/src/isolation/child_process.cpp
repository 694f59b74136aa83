// Starting, stopping and talking to an isolated plugin's child process: spawning
// arbiter-plugin-runner as the runner's user with the plugin's sealed copy, the
// requests and replies over the channel, and the faults that end a child.
#include "arbiter/host/isolated_instance.hpp"

#include "isolation/child.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/config.hpp"
#include "arbiter/host/file_trust.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "isolation/channel.hpp"
#include "isolation/messages.hpp"
#include "isolation/reply_intake.hpp"
#include "isolation/syscall_names.hpp"

namespace arbiter::host {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// The shared memory: a batch of up to 4 MiB crosses in one piece, larger ones in chunks.
constexpr size_t kRequestAreaBytes = 4u << 20;
constexpr size_t kReplyAreaBytes = 4u << 20;

std::string signal_text(int number) {
    const char* abbreviation = ::sigabbrev_np(number);
    return abbreviation ? fmt::format("SIG{} (signal {})", abbreviation, number)
                        : fmt::format("signal {}", number);
}

std::string syscall_text(int64_t number) {
    const std::string_view name = iso::syscall_name(number);
    return name.empty() ? fmt::format("system call {}", number)
                        : fmt::format("{} (system call {})", name, number);
}

}  // namespace

std::filesystem::path default_plugin_runner() {
    return default_bundled_plugin_dir().parent_path() / "arbiter-plugin-runner";
}

namespace {

// A descriptor moved above the runner's fixed ones, so that the dup2 in the child always
// changes something (and clears close-on-exec).
int moved_up(int fd) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return moved;
}

}  // namespace

namespace {

// A runner with the host's user could read the host's memory, its environment and its
// open files through /proc/<host>; being undumpable stops that for a process without
// CAP_SYS_PTRACE. A root host never starts a runner as root (runner_as), so the runner has
// no such capability either way. Said once, since it also stops core dumps of the host.
void keep_host_memory_from_children() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
            spdlog::info("isolated plugins: the host is no longer dumpable (no core files), so "
                         "that they cannot read its memory through /proc");
        else
            spdlog::warn("isolated plugins: the host could not make itself undumpable ({}): "
                         "they may read its memory through /proc",
                         std::strerror(errno));
    });
}

// Who the runner becomes: nobody else than the host's user when the host is not root
// (it could not change user); when it is, the configured runner_user, never root.
struct RunnerUser {
    bool change = false;
    uid_t uid = 0;
    gid_t gid = 0;
};

RunnerUser runner_as(const std::string& name) {
    const bool root = ::geteuid() == 0;
    if (!root) {
        if (!name.empty())
            throw std::runtime_error(fmt::format(
                "[host] runner_user = \"{}\" needs the host to run as root, and it runs as uid "
                "{}: remove runner_user (the runner then runs as the host's user)",
                escape_for_message(name, 64), ::geteuid()));
        return {};
    }
    if (name.empty())
        throw std::runtime_error(
            "the host runs as root, and a runner started as root could read the host's memory "
            "and files whatever its filter: set [host] runner_user to an unprivileged user "
            "(a dedicated one, such as \"arbiter-plugins\"), or run the host as such a user");
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    const int error = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (error != 0 || !found)
        throw std::runtime_error(fmt::format("[host] runner_user: no user \"{}\" on this machine{}",
                                             escape_for_message(name, 64),
                                             error ? std::string(": ") + std::strerror(error) : ""));
    if (found->pw_uid == 0)
        throw std::runtime_error(fmt::format(
            "[host] runner_user: \"{}\" is uid 0, which is root by another name",
            escape_for_message(name, 64)));
    return {true, found->pw_uid, found->pw_gid};
}

// The library's bytes in sealed memory the runner can read whoever it has become, and
// nobody can change: the private copy itself is the host user's alone.
int sealed_library(const std::filesystem::path& copy) {
    const std::vector<uint8_t> bytes = read_trusted_file(copy, kPluginLibraryRules);
    const int fd = ::memfd_create("arbiter-plugin-library", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            return -1;
        }
        written += static_cast<size_t>(n);
    }
    if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

void IsolatedInstance::start_child() {
    // Whoever could write the runner would run code unconfined at each start of a child.
    if (const auto problem = untrusted_file(runner_, kPluginRunnerRules))
        throw Fault{"could not start the plugin runner: " + *problem};
    RunnerUser user;
    try {
        user = runner_as(settings_.isolation.runner_user);
    } catch (const std::runtime_error& refused) {
        throw Fault{refused.what()};
    }
    keep_host_memory_from_children();
    auto child = std::make_unique<Child>();
    auto fail = [&](const std::string& what) {
        return Fault{fmt::format("could not start the plugin runner {}: {}: {}", runner_.string(),
                                 what, std::strerror(errno))};
    };
    int library = -1;
    try {
        library = sealed_library(library_->private_copy());
    } catch (const std::runtime_error& unreadable) {
        throw Fault{unreadable.what()};
    }
    if (library >= 0) library = moved_up(library);
    if (library < 0) throw fail("sealing a copy of the library");
    struct CloseLibrary {
        int fd;
        ~CloseLibrary() { ::close(fd); }
    } close_library{library};
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) throw fail("socketpair");
    child->socket = pair[0];
    const int child_end = moved_up(pair[1]);
    int memory = ::memfd_create("arbiter-plugin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memory < 0 || child_end < 0) {
        if (child_end >= 0) ::close(child_end);
        throw fail("memfd_create");
    }
    memory = moved_up(memory);
    child->areas.request_size = kRequestAreaBytes;
    child->areas.reply_size = kReplyAreaBytes;
    // Sealed at its size: the child cannot shrink it under the host's mapping (SIGBUS).
    if (memory < 0 || ::ftruncate(memory, static_cast<off_t>(child->areas.total())) != 0 ||
        ::fcntl(memory, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        ::close(child_end);
        if (memory >= 0) ::close(memory);
        throw fail("sizing the shared memory");
    }
    void* base = ::mmap(nullptr, child->areas.total(), PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
    if (base == MAP_FAILED) {
        ::close(child_end);
        ::close(memory);
        throw fail("mapping the shared memory");
    }
    child->areas.base = static_cast<uint8_t*>(base);

    // Nothing of the host's crosses but the link: /dev/null for the standard descriptors,
    // every other one closed, no environment, default signal handling, nothing blocked.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, child_end, iso::kRunnerSocketFd);
    posix_spawn_file_actions_adddup2(&actions, memory, iso::kRunnerMemoryFd);
    posix_spawn_file_actions_adddup2(&actions, library, iso::kRunnerLibraryFd);
    posix_spawn_file_actions_addclosefrom_np(&actions, iso::kRunnerLibraryFd + 1);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    // A group of its own: nothing sent to the host's group (a terminal's ^C) reaches it,
    // and nothing it sends to "its group" reaches the host.
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

    const std::string parent = std::to_string(::getpid());
    const std::string request = std::to_string(child->areas.request_size);
    const std::string reply = std::to_string(child->areas.reply_size);
    const std::string memory_mb = std::to_string(settings_.isolation.memory_mb);
    const std::string cpu = std::to_string(settings_.isolation.cpu_seconds);
    const std::string threads = std::to_string(settings_.isolation.max_threads);
    const std::string uid = std::to_string(user.uid), gid = std::to_string(user.gid);
    const std::string path = runner_.string();
    std::vector<const char*> argv = {path.c_str(),      "--parent",      parent.c_str(),
                                     "--request-bytes", request.c_str(), "--reply-bytes",
                                     reply.c_str(),     "--memory-mb",   memory_mb.c_str(),
                                     "--cpu-seconds",   cpu.c_str(),     "--max-threads",
                                     threads.c_str()};
    if (user.change) argv.insert(argv.end(), {"--uid", uid.c_str(), "--gid", gid.c_str()});
    argv.push_back(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // A sanitizer build's runner: no symbolizer (a process the filter forbids) and no
    // handler of its own for a crash, so that the plugin's crash reads as one.
    const char* envp[] = {"ASAN_OPTIONS=symbolize=0:detect_leaks=0:handle_segv=0:handle_abort=0",
                          "TSAN_OPTIONS=symbolize=0:handle_segv=0:report_signal_unsafe=0", nullptr};
#else
    const char* envp[] = {nullptr};
#endif
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, &attributes,
                                      const_cast<char* const*>(argv.data()),
                                      const_cast<char* const*>(envp));
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(child_end);
    ::close(memory);
    if (spawned != 0) {
        errno = spawned;
        throw fail("posix_spawn");
    }
    child->pid = pid;
    child->channel = std::make_unique<iso::Channel>(child->socket, child->areas, iso::Channel::Side::host);
    child_ = std::move(child);

    // Load and negotiate in the child.
    iso::MessageWriter load;
    load.text(fmt::format("/proc/self/fd/{}", iso::kRunnerLibraryFd))
        .text(library_->source().string())
        .text(label_);
    iso::RunnerReply loaded = exchange(iso::Op::load, load.data(), slow_deadline(settings_));
    iso::RunnerReply notes;  // the load's log lines and metrics, nothing else
    notes.logs = std::move(loaded.logs);
    notes.logs_dropped = loaded.logs_dropped;
    notes.metrics = std::move(loaded.metrics);
    accept(std::move(notes));
    if (!loaded.identity) {
        stop_child();
        throw PluginError(loaded.call.error.empty()
                              ? fmt::format("plugin '{}' ({}): the runner loaded nothing", label_,
                                            library_->source().string())
                              : escape_for_message(loaded.call.error, 4096));
    }
    // A child started again must be the plugin that was loaded: the same answers.
    if (identity_adopted_) {
        const PluginIdentity& was = library_->identity();
        const PluginIdentity& now = *loaded.identity;
        if (now.name != was.name || now.version != was.version ||
            now.capabilities != was.capabilities || now.schema_minor != was.schema_minor ||
            now.abi_minor_in_use != was.abi_minor_in_use || now.declared_class != was.declared_class) {
            stop_child();
            throw Fault{"its new process answered negotiation otherwise than the first"};
        }
    } else {
        library_->adopt_identity(std::move(*loaded.identity));
        identity_adopted_ = true;
    }
    if (std::string problem = check_config_schema(*library_, settings_); !problem.empty()) {
        stop_child();
        throw PluginError(problem);
    }

    iso::MessageWriter create;
    create.bytes(settings_.config).bytes(baseline_).u32(0).u32(1);
    iso::RunnerReply created = exchange(iso::Op::create, create.data(), slow_deadline(settings_));
    const arb_status status = created.call.status;
    const std::string detail = escape_for_message(created.call.error, 4096);
    accept(std::move(created));
    if (status != ARB_OK) {
        stop_child();
        throw PluginError(describe_create_failure(settings_, status, detail));
    }
}

void IsolatedInstance::stop_child() { child_.reset(); }

IsolatedInstance::Fault IsolatedInstance::fault_from_child(const std::string& what, bool kill) {
    if (!child_) return {what};
    const pid_t pid = child_->pid;
    if (kill) ::kill(pid, SIGKILL);
    const int status = child_->reap(milliseconds(kill ? 0 : 200));
    child_.reset();
    std::string how;
    if (WIFSIGNALED(status)) {
        const int number = WTERMSIG(status);
        if (number == SIGXCPU)
            how = fmt::format("used up its CPU time (cpu_seconds = {})",
                              settings_.isolation.cpu_seconds);
        else if (!kill)
            how = "crashed with " + signal_text(number);
    } else if (WIFEXITED(status)) {
        switch (WEXITSTATUS(status)) {
            case iso::kExitOutOfMemory:
                how = fmt::format("ran out of memory (memory_mb = {})", settings_.isolation.memory_mb);
                break;
            case iso::kExitConfinement:
                how = "could not confine itself";
                break;
            case iso::kExitForbiddenCall:
                break;  // `what` names the call
            default:
                how = fmt::format("exited with status {}", WEXITSTATUS(status));
        }
    }
    return {fmt::format("its process (pid {}) {}{}{}", pid, what, how.empty() ? "" : ": ", how)};
}

IsolatedInstance::Fault IsolatedInstance::fault_from_link(const iso::ChannelError& error,
                                                          milliseconds deadline) {
    switch (error.kind()) {
        case iso::ChannelError::Kind::timeout:
            return fault_from_child(
                fmt::format("took longer than its deadline of {} ms and was killed",
                            deadline.count()),
                true);
        case iso::ChannelError::Kind::forbidden_call:
            return fault_from_child("made a system call isolated plugins may not make, " +
                                        syscall_text(error.detail()) + ", and was stopped",
                                    false);
        case iso::ChannelError::Kind::closed:
            return fault_from_child("ended", false);
        default:
            return fault_from_child(
                std::string("broke the protocol (") + error.what() + ") and was killed", true);
    }
}

void IsolatedInstance::send_request(iso::Op op, std::span<const uint8_t> payload,
                                    Clock::time_point until, milliseconds deadline) {
    if (!child_) throw Fault{"no process is running"};
    child_->resume();
    try {
        child_->channel->send(op, payload, until);
    } catch (const iso::ChannelError& error) {
        throw fault_from_link(error, deadline);
    }
}

iso::RunnerReply IsolatedInstance::receive_reply(iso::Op op, Clock::time_point until,
                                                 milliseconds deadline) {
    if (!child_) throw Fault{"no process is running"};
    try {
        // What the host will hold of one reply: a state no larger than the child's memory,
        // anything else 64 MiB (signals with evidence of 64 KiB each, logs, metrics).
        const uint64_t limit = op == iso::Op::save_state
                                   ? std::max<uint64_t>(64ull << 20, settings_.isolation.memory_mb << 20)
                                   : 64ull << 20;
        iso::Channel::Message message = child_->channel->receive(until, limit);
        if (message.op != iso::Op::reply)
            throw iso::ChannelError(iso::ChannelError::Kind::protocol,
                                    fmt::format("answered with frame {}",
                                                static_cast<uint32_t>(message.op)));
        iso::RunnerReply reply = iso::decode_reply(message.payload);
        if (reply.blob && op != iso::Op::save_state)
            throw iso::ChannelError(iso::ChannelError::Kind::protocol,
                                    "a state blob in answer to another call");
        if (reply.identity && op != iso::Op::load)
            throw iso::ChannelError(iso::ChannelError::Kind::protocol,
                                    "an identity in answer to another call");
        // The runner's RLIMIT_NPROC counts the whole user's tasks, which others may free:
        // the count of the child's own is checked here too.
        if (const uint64_t threads = child_->threads(); threads > settings_.isolation.max_threads)
            throw fault_from_child(fmt::format("started {} threads, more than max_threads = {}, "
                                               "and was killed",
                                               threads, settings_.isolation.max_threads),
                                   true);
        if (!settings_.isolation.run_between_calls) child_->pause();
        return reply;
    } catch (const iso::ChannelError& error) {
        throw fault_from_link(error, deadline);
    }
}

iso::RunnerReply IsolatedInstance::exchange(iso::Op op, std::span<const uint8_t> payload,
                                            milliseconds deadline) {
    drop_started();
    const auto until = Clock::now() + deadline;
    send_request(op, payload, until, deadline);
    return receive_reply(op, until, deadline);
}

void IsolatedInstance::drop_started() {
    // A batch start_batch sent and no on_batch collected (dispatch cut short): its answer is
    // read and set aside, so that it is never taken for the next call's.
    std::optional<Request> started = std::exchange(started_, std::nullopt);
    if (!started || started->send_fault || !child_) return;
    (void)receive_reply(started->op, started->until, milliseconds(settings_.deadline_ms));
}

}  // namespace arbiter::host
