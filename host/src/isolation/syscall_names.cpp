#include "isolation/syscall_names.hpp"

#include <sys/syscall.h>

namespace arbiter::host::isolation {

namespace {

struct NamedCall {
    long number;
    const char* name;
};

// From <sys/syscall.h>, at configure time (cmake/SyscallNames.cmake).
constexpr NamedCall kCalls[] = {
#include "syscall_names.inc"
};

}  // namespace

std::string_view syscall_name(int64_t number) {
    for (const NamedCall& call : kCalls)
        if (call.number == number) return call.name;
    return {};
}

}  // namespace arbiter::host::isolation
