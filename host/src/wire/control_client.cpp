#include "wire/control_client.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "wire/sockets.hpp"

namespace arbiter::host {

std::optional<std::string> control_request(const std::string& path, const std::string& command,
                                           std::string& error) {
    int fd = -1;
    try {
        fd = serve::connect_unix(path);
    } catch (const std::runtime_error& failure) {
        error =
            std::string(failure.what()) + " (is `arbiter serve` running with this control socket?)";
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
