// The client side of `arbiter serve`'s control socket, for `arbiter ctl`, the tests and
// the benchmarks: one command line out, one JSON document back.
#pragma once

#include <optional>
#include <string>

namespace arbiter::host {

// Sends `command` ("status", "plugins", "assessments", "reload", "reload NAME") and
// returns the server's whole answer; nothing, with `error` saying why, when the socket
// cannot be reached or read.
std::optional<std::string> control_request(const std::string& socket_path,
                                           const std::string& command, std::string& error);

}  // namespace arbiter::host
