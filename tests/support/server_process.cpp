#include "support/server_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "support/temp_dir.hpp"

extern char** environ;

namespace arbiter::test {

ServerProcess::ServerProcess(const std::filesystem::path& config,
                             const std::filesystem::path& work_dir,
                             std::vector<std::string> extra_args) {
    log_file_ = work_dir / "serve.log";
    const auto ready = work_dir / "serve.ready";
    std::filesystem::remove(ready);
    std::vector<std::string> argv = {ARBITER_EXE,    "serve",       config.string(), "--ready-file",
                                     ready.string(), "--log-level", "info"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addchdir_np(&actions, work_dir.c_str());
    std::vector<char*> args;
    for (auto& arg : argv)
        args.push_back(arg.data());
    args.push_back(nullptr);
    const int error = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0)
        throw std::runtime_error(std::string("cannot start arbiter serve: ") +
                                 std::strerror(error));

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(ready)) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("arbiter serve exited before listening:\n" + log());
        }
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("arbiter serve did not listen within 30 s:\n" + log());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto endpoints = nlohmann::json::parse(read_text(ready), nullptr, false);
    if (endpoints.is_object()) {
        tcp_ = endpoints.value("tcp", "");
        metrics_ = endpoints.value("metrics", "");
        review_ = endpoints.value("review", "");
    }
}

ServerProcess::~ServerProcess() {
    if (pid_ > 0) stop(SIGKILL);
}

int ServerProcess::stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    // Under the sanitizer presets the server is instrumented too, and reports to its log
    // as it runs: a race or a bad access in it fails the test that drove it.
    const std::string text = log();
    for (const char* report : {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer",
                               "ERROR: LeakSanitizer", "runtime error:"})
        if (text.find(report) != std::string::npos)
            ADD_FAILURE() << "arbiter serve reported \"" << report << "\":\n" << text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ServerProcess::log() const {
    return std::filesystem::exists(log_file_) ? read_text(log_file_) : "";
}

bool ServerProcess::wait_for_log(const std::string& text, double timeout_s) const {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (log().find(text) != std::string::npos) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

std::string ctl(const std::filesystem::path& socket, const std::vector<std::string>& command,
                const std::filesystem::path& work_dir, int* exit_status) {
    std::vector<std::string> argv = {ARBITER_EXE, "ctl", socket.string()};
    argv.insert(argv.end(), command.begin(), command.end());
    // run_command uses fixed output files in its folder: give each call one of its own,
    // since a test may ask while another thread streams.
    static std::atomic<int> calls{0};
    const auto folder = work_dir / ("ctl-" + std::to_string(++calls));
    std::filesystem::create_directories(folder);
    CommandResult result = run_command(argv, folder);
    std::filesystem::remove_all(folder);
    if (exit_status) *exit_status = result.exit_status;
    return result.out;
}

}  // namespace arbiter::test
