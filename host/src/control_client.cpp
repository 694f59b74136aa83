#include "arbiter/host/control_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace arbiter::host {

std::optional<std::string> control_request(const std::string& path, const std::string& command,
                                           std::string& error) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        error = "the socket path is too long";
        return std::nullopt;
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        error = fmt::format(
            "cannot connect to {}: {} (is `arbiter serve` running with this control socket?)", path,
            std::strerror(errno));
        if (fd >= 0) ::close(fd);
        return std::nullopt;
    }
    const std::string line = command + "\n";
    if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
        error = fmt::format("cannot send to {}: {}", path, std::strerror(errno));
        ::close(fd);
        return std::nullopt;
    }
    std::string answer;
    char buffer[65536];
    ssize_t got;
    while ((got = ::recv(fd, buffer, sizeof buffer, 0)) > 0)
        answer.append(buffer, static_cast<size_t>(got));
    ::close(fd);
    if (got < 0) {
        error = fmt::format("reading from {}: {}", path, std::strerror(errno));
        return std::nullopt;
    }
    return answer;
}

}  // namespace arbiter::host
