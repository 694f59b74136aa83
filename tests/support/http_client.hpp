// The tests' side of the host's small HTTP listeners (metrics, review page): a TCP
// connection to loopback, and one exchange of raw bytes.
#pragma once

#include <string>

namespace arbiter::test {

// A TCP connection to 127.0.0.1 at the port of `address` ("host:port"). Throws
// std::runtime_error when it cannot connect.
int connect_loopback(const std::string& address);

// One HTTP exchange: the request's bytes as given, then every byte until the server closes
// (or 20 s pass without one).
std::string http_exchange(const std::string& address, const std::string& request);

}  // namespace arbiter::test
