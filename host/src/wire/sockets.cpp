#include "wire/sockets.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

namespace arbiter::host::serve {

namespace {

std::runtime_error socket_error(const std::string& setting, const std::string& what) {
    return std::runtime_error(fmt::format("{}: {}: {}", setting, what, std::strerror(errno)));
}

std::string describe_address(const sockaddr* address) {
    char host[NI_MAXHOST] = "?";
    char port[NI_MAXSERV] = "?";
    const socklen_t length =
        address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    ::getnameinfo(address, length, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV);
    return address->sa_family == AF_INET6 ? fmt::format("[{}]:{}", host, port)
                                          : fmt::format("{}:{}", host, port);
}

bool is_loopback(const sockaddr* address) {
    if (address->sa_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
        return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    }
    if (address->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
        return IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    }
    return false;
}

}  // namespace

void set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL, 0);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int listen_unix(const std::string& path, const std::string& setting, mode_t mode) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path)
        throw std::runtime_error(
            fmt::format("{}: '{}' cannot be a Unix socket path (1 to {} bytes)", setting, path,
                        sizeof address.sun_path - 1));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);

    struct stat existing {};
    if (::lstat(path.c_str(), &existing) == 0) {
        if (!S_ISSOCK(existing.st_mode))
            throw std::runtime_error(
                fmt::format("{}: {} exists and is not a socket; not replacing it", setting, path));
        const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&address),
                                                  sizeof address) == 0;
        if (probe >= 0) ::close(probe);
        if (live)
            throw std::runtime_error(
                fmt::format("{}: another server is already listening on {}", setting, path));
        ::unlink(path.c_str());  // a stale socket from a server that died
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw socket_error(setting, "cannot create a Unix socket");
    // The socket file is created with no access for anyone but us (the umask is narrowed
    // for the bind alone; narrowing can only make another thread's new file more private),
    // then given its mode before listen: no peer can connect through a wider mode, ever.
    const mode_t previous = ::umask(0077);
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    const int bind_errno = errno;
    ::umask(previous);
    errno = bind_errno;
    if (!bound) {
        auto error = socket_error(setting, "cannot bind " + path);
        ::close(fd);
        throw error;
    }
    if (::chmod(path.c_str(), mode) != 0 || ::listen(fd, 64) != 0) {
        auto error = socket_error(setting, fmt::format("cannot give {} mode {:04o} and listen", path, mode));
        ::close(fd);
        ::unlink(path.c_str());
        throw error;
    }
    set_nonblocking(fd);
    return fd;
}

std::pair<std::string, std::string> split_host_port(const std::string& text,
                                                    const std::string& setting) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error(
            fmt::format("{}: expected \"address:port\", got \"{}\"", setting, text));
    std::string host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    return {host, text.substr(colon + 1)};
}

int connect_unix(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path)
        throw std::runtime_error(
            fmt::format("cannot connect to {}: a Unix socket path has 1 to {} bytes", path,
                        sizeof address.sun_path - 1));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        const std::string error = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        throw std::runtime_error(fmt::format("cannot connect to {}: {}", path, error));
    }
    return fd;
}

int listen_tcp(const std::string& text, bool allow_remote, const std::string& setting,
               std::string& bound) {
    const auto [host, port] = split_host_port(text, setting);

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int error =
            ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
        error != 0)
        throw std::runtime_error(
            fmt::format("{}: cannot resolve \"{}\": {}", setting, text, ::gai_strerror(error)));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, ::freeaddrinfo);

    if (!allow_remote && !is_loopback(found->ai_addr))
        throw std::runtime_error(
            fmt::format("{}: {} is not a loopback address; relays over TCP are served on "
                        "loopback only unless serve.tcp_allow_remote = true",
                        setting, describe_address(found->ai_addr)));
    const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw socket_error(setting, "cannot create a TCP socket");
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
        auto error = socket_error(setting, "cannot listen on " + describe_address(found->ai_addr));
        ::close(fd);
        throw error;
    }
    sockaddr_storage actual{};
    socklen_t length = sizeof actual;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &length);
    bound = describe_address(reinterpret_cast<sockaddr*>(&actual));
    set_nonblocking(fd);
    return fd;
}

std::string peer_address(int fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
    char text[INET6_ADDRSTRLEN] = "?";
    if (address.ss_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&address)->sin_addr, text,
                    sizeof text);
        return text;
    }
    if (address.ss_family == AF_INET6) {
        in6_addr prefix = reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&prefix)) {
            ::inet_ntop(AF_INET, &prefix.s6_addr[12], text, sizeof text);
            return text;
        }
        std::memset(&prefix.s6_addr[8], 0, 8);
        ::inet_ntop(AF_INET6, &prefix, text, sizeof text);
        return std::string(text) + "/64";
    }
    return "unix";
}

std::string peer_name(int fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
    if (address.ss_family == AF_UNIX) return "unix";
    return describe_address(reinterpret_cast<sockaddr*>(&address));
}

}  // namespace arbiter::host::serve
