#include "support/postgres_server.hpp"

#include <pwd.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace arbiter::test {

namespace {

std::filesystem::path find_postgres_bin() {
    std::error_code error;
    std::filesystem::path best;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
        const auto bin = entry.path() / "bin";
        if (std::filesystem::exists(bin / "initdb") && std::filesystem::exists(bin / "pg_ctl") &&
            (best.empty() || entry.path() > best.parent_path()))
            best = bin;
    }
    return best;
}

std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

std::optional<PostgresServer> PostgresServer::start(std::string& why_not, size_t disk_mib) {
    PostgresServer server;
    server.bin_ = find_postgres_bin();
    if (server.bin_.empty()) {
        why_not = "PostgreSQL is not installed (initdb and pg_ctl in /usr/lib/postgresql/*/bin; "
                  "Debian's postgresql-15, which scripts/install-deps.sh installs)";
        return std::nullopt;
    }
    if (::geteuid() == 0) {
        if (!::getpwnam("postgres")) {
            why_not = "running as root and there is no postgres user to run PostgreSQL as";
            return std::nullopt;
        }
        server.as_user_ = "postgres";
    }
    char folder[] = "/tmp/arbiter-pg-XXXXXX";
    if (!::mkdtemp(folder)) {
        why_not = "cannot make a temporary folder";
        return std::nullopt;
    }
    server.root_ = folder;
    std::string error;
    // The server's user writes its data, socket and log here. Sticky and open to all,
    // like /tmp, rather than given away: some containers refuse root a chown.
    if (!server.as_user_.empty()) {
        std::error_code mode_error;
        std::filesystem::permissions(server.root_, std::filesystem::perms::all |
                                                       std::filesystem::perms::sticky_bit,
                                     mode_error);
        if (mode_error) {
            why_not = "cannot open " + server.root_.string() + " to the postgres user: " +
                      mode_error.message();
            return std::nullopt;
        }
    }
    if (disk_mib > 0) {
        server.disk_ = server.root_ / "disk";
        std::filesystem::create_directories(server.disk_);
        const std::string options = "size=" + std::to_string(disk_mib) + "m,mode=1777";
        if (::mount("tmpfs", server.disk_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
            why_not = "cannot mount a " + std::to_string(disk_mib) +
                      " MiB tmpfs for the server's data (" + std::strerror(errno) +
                      "): run as root for this test";
            server.disk_.clear();
            return std::nullopt;
        }
    }
    const std::string data = (server.disk() / "data").string();
    if (!server.run(server.bin_.string() + "/initdb -D " + quoted(data) +
                        " -A trust -U arbiter --encoding=UTF8 --locale=C --no-sync >" +
                        quoted((server.root_ / "initdb.log").string()) + " 2>&1",
                    error)) {
        why_not = "initdb failed: " + error;
        return std::nullopt;
    }
    if (!server.start_again(error)) {
        why_not = error;
        return std::nullopt;
    }
    if (!server.run(server.bin_.string() + "/createdb -h " + quoted(server.root_.string()) +
                        " -p 5432 -U arbiter arbiter",
                    error)) {
        why_not = "createdb failed: " + error;
        return std::nullopt;
    }
    return std::optional<PostgresServer>(std::move(server));
}

PostgresServer::PostgresServer(PostgresServer&& other) noexcept
    : bin_(std::move(other.bin_)),
      root_(std::move(other.root_)),
      as_user_(std::move(other.as_user_)),
      disk_(std::move(other.disk_)),
      running_(other.running_) {
    other.root_.clear();
    other.running_ = false;
}

PostgresServer::~PostgresServer() {
    if (root_.empty()) return;
    std::string ignored;
    if (running_) stop(ignored);
    if (!disk_.empty()) ::umount2(disk_.c_str(), MNT_DETACH);
    std::error_code error;
    std::filesystem::remove_all(root_, error);
}

std::string PostgresServer::conninfo() const {
    return "host=" + root_.string() + " port=5432 user=arbiter dbname=arbiter connect_timeout=5";
}

bool PostgresServer::run(const std::string& command, std::string& error) const {
    const std::string full =
        as_user_.empty() ? command : "runuser -u " + as_user_ + " -- sh -c " + quoted(command);
    const int status = std::system(full.c_str());
    if (status == 0) return true;
    error = "`" + command + "` exited with " + std::to_string(status);
    std::ifstream log(root_ / "server.log");
    std::string line, tail;
    while (std::getline(log, line)) tail = line;
    if (!tail.empty()) error += " (server log: " + tail + ")";
    return false;
}

bool PostgresServer::stop(std::string& error) {
    running_ = false;
    return run(bin_.string() + "/pg_ctl -D " + quoted((disk() / "data").string()) +
                   " -m immediate -w stop >/dev/null 2>&1",
               error);
}

bool PostgresServer::start_again(std::string& error) {
    // The socket in the test's folder, no TCP, no fsync (a test's data need not survive
    // the machine).
    const std::string options = "-k " + root_.string() + " -c listen_addresses= -p 5432 -F";
    if (!run(bin_.string() + "/pg_ctl -D " + quoted((disk() / "data").string()) + " -o " +
                 quoted(options) + " -l " + quoted((root_ / "server.log").string()) +
                 " -w start >/dev/null 2>&1",
             error))
        return false;
    running_ = true;
    return true;
}

bool PostgresServer::restart(std::string& error) {
    return stop(error) && start_again(error);
}

}  // namespace arbiter::test
