// `arbiter serve` as a child process for the tests: started with a config, waited for
// until it listens (its ready file), stopped with a signal, and its log read back.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::test {

class ServerProcess {
  public:
    // Starts `arbiter serve CONFIG --ready-file ... --log-level info` in work_dir and
    // waits until it listens. Throws std::runtime_error (with its log) if it exits or
    // does not get there in time.
    ServerProcess(const std::filesystem::path& config, const std::filesystem::path& work_dir,
                  std::vector<std::string> extra_args = {});
    // Sends SIGKILL if it still runs.
    ~ServerProcess();
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    // The address the TCP listener got ("127.0.0.1:41234"); "" without one.
    const std::string& tcp_address() const { return tcp_; }
    // The same for the metrics listener.
    const std::string& metrics_address() const { return metrics_; }
    // The same for the review page.
    const std::string& review_address() const { return review_; }
    pid_t pid() const { return pid_; }
    // Sends `signal` and waits for the exit; its exit status, or -1 for a signal.
    int stop(int signal);
    std::string log() const;
    // Waits until the log holds `text`; false after `timeout_s`.
    bool wait_for_log(const std::string& text, double timeout_s = 20) const;

  private:
    pid_t pid_ = -1;
    std::filesystem::path log_file_;
    std::string tcp_;
    std::string metrics_;
    std::string review_;
};

// Runs `arbiter ctl SOCKET COMMAND...` and returns its standard output (JSON with --json).
std::string ctl(const std::filesystem::path& socket, const std::vector<std::string>& command,
                const std::filesystem::path& work_dir, int* exit_status = nullptr);

}  // namespace arbiter::test
