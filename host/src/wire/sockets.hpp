// The sockets `arbiter serve` listens on. Each function throws std::runtime_error
// saying which address could not be used and why.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

namespace arbiter::host::serve {

// A listening Unix socket at `path`, with `mode` from before anyone can connect. A stale
// socket file left by a server that died is replaced; a live server on it, or a file
// that is not a socket, is an error.
int listen_unix(const std::string& path, const std::string& setting, mode_t mode);

// A listening TCP socket for "address:port" ("[v6]:port" for IPv6). Unless
// `allow_remote`, the address must be a loopback one. `bound` receives the address
// actually bound (the port the kernel chose when the config gave 0).
int listen_tcp(const std::string& address, bool allow_remote, const std::string& setting,
               std::string& bound);

// A connected Unix stream socket; throws std::runtime_error "cannot connect to PATH: why".
int connect_unix(const std::string& path);
// "address:port" (or "[v6]:port") as host and port; throws std::runtime_error naming
// `setting` when there is no colon.
std::pair<std::string, std::string> split_host_port(const std::string& text,
                                                    const std::string& setting);

void set_nonblocking(int fd);
// Who is on the other end, for logs: "127.0.0.1:51234", or "unix" for a Unix socket.
std::string peer_name(int fd);
// Who is on the other end as one party, for counting what it does: the address without
// the port ("127.0.0.1"), an IPv6 address's /64 ("2001:db8:1:2::/64": one host is given a
// whole /64), or "unix" for a Unix socket.
std::string peer_address(int fd);

}  // namespace arbiter::host::serve
