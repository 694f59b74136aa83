// A real PostgreSQL server for a test: Debian's postgresql-15, initialised in a folder of
// the test's own, listening on a Unix socket there alone (no TCP), run as an unprivileged
// user (postgres when the test runs as root, which initdb refuses), stopped and removed
// at the end. Tests skip, saying what is missing, where PostgreSQL is not installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace arbiter::test {

class PostgresServer {
  public:
    // Starts a server; nullopt with `why_not` set when it cannot (not installed, say).
    // With `disk_mib`, its data lives on a tmpfs of that size that the test mounts (it needs
    // root), so that a test can fill the server's disk: disk() is where to put a filler.
    static std::optional<PostgresServer> start(std::string& why_not, size_t disk_mib = 0);
    PostgresServer(PostgresServer&& other) noexcept;
    PostgresServer& operator=(PostgresServer&&) = delete;
    ~PostgresServer();

    // A libpq connection string for the server's `arbiter` database.
    std::string conninfo() const;
    // Stops the server at once (as a crash or an operator would) and starts it again on
    // the same socket and data; what the store must survive.
    bool restart(std::string& error);
    bool stop(std::string& error);
    bool start_again(std::string& error);
    // The folder of the server's data: its own small disk when started with one.
    std::filesystem::path disk() const { return disk_.empty() ? root_ : disk_; }

  private:
    PostgresServer() = default;
    bool run(const std::string& command, std::string& error) const;

    std::filesystem::path bin_;   // /usr/lib/postgresql/NN/bin
    std::filesystem::path root_;  // the test's folder: data/, the socket, the log
    std::string as_user_;         // "" = the test's own user
    std::filesystem::path disk_;  // the tmpfs the data is on, when the test mounted one
    bool running_ = false;
};

}  // namespace arbiter::test
