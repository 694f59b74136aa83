// The name of a system call by its number on this machine ("openat" for 257 on x86-64),
// for the message that says which call stopped an isolated plugin.
#pragma once

#include <cstdint>
#include <string_view>

namespace arbiter::host::isolation {

// Empty when the C library this was built against names no call of that number.
std::string_view syscall_name(int64_t number);

}  // namespace arbiter::host::isolation
