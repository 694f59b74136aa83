// The child process of an isolated plugin as its supervisor holds it: the process, its
// socket, the shared memory and the channel over them. Private to the isolation library:
// isolated_instance.cpp makes the calls, child_process.cpp starts and stops the child.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "arbiter/host/config.hpp"
#include "arbiter/host/isolated_instance.hpp"
#include "isolation/channel.hpp"

namespace arbiter::host {

namespace iso = isolation;

// Loading, creating and moving state take longer than a batch: at least 30 s.
inline std::chrono::milliseconds slow_deadline(const PluginSettings& settings) {
    return std::max(std::chrono::milliseconds(30'000),
                    std::chrono::milliseconds(settings.deadline_ms) * 10);
}

struct IsolatedInstance::Child {
    using Clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;

    pid_t pid = -1;
    int socket = -1;
    iso::SharedAreas areas;
    std::unique_ptr<iso::Channel> channel;

    ~Child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
        if (socket >= 0) ::close(socket);
        if (areas.base) ::munmap(areas.base, areas.total());
    }

    // Between calls the child is stopped (unless run_between_calls), so that no thread
    // of the plugin runs while it is not being asked: CPU the host never gave it.
    bool paused = false;
    void pause() {
        if (pid > 0 && !paused) paused = ::kill(pid, SIGSTOP) == 0;
    }
    void resume() {
        if (pid > 0 && paused) {
            ::kill(pid, SIGCONT);
            paused = false;
        }
    }

    // The child's threads, its first included, as the kernel counts them; 0 when unknown.
    uint64_t threads() const {
        const std::string path = fmt::format("/proc/{}/status", pid);
        std::FILE* status = std::fopen(path.c_str(), "re");
        if (!status) return 0;
        char line[256];
        uint64_t count = 0;
        while (std::fgets(line, sizeof line, status))
            if (std::strncmp(line, "Threads:", 8) == 0) {
                count = std::strtoull(line + 8, nullptr, 10);
                break;
            }
        std::fclose(status);
        return count;
    }

    // Waits up to `grace` for the child to end by itself, then kills it; returns how it
    // ended (waitpid's status) and forgets the pid.
    int reap(milliseconds grace) {
        resume();  // a stopped child cannot end by itself
        int status = 0;
        const auto until = Clock::now() + grace;
        for (;;) {
            const pid_t done = ::waitpid(pid, &status, WNOHANG);
            if (done == pid || (done < 0 && errno != EINTR)) break;
            if (Clock::now() >= until) {
                ::kill(pid, SIGKILL);
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                break;
            }
            std::this_thread::sleep_for(milliseconds(1));
        }
        pid = -1;
        return status;
    }
};

}  // namespace arbiter::host
