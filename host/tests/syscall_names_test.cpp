// The supervisor names the system call that stopped an isolated plugin from a table read
// out of <sys/syscall.h> at configure time; the runner's filter is libseccomp's. Both must
// give every number the same name, or the message would name another call than the one
// the filter stopped.
#include <gtest/gtest.h>
#include <seccomp.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "isolation/syscall_names.hpp"

using arbiter::host::isolation::syscall_name;

TEST(SyscallNames, AgreeWithTheFiltersLibraryOnEveryNumber) {
    int named = 0, highest_ours = -1;
    std::vector<int> only_the_filters;
    for (int number = 0; number < 1024; ++number) {
        char* expected = ::seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
        const std::string ours(syscall_name(number));
        if (!ours.empty()) {
            highest_ours = number;
            ++named;
            EXPECT_EQ(ours, expected ? expected : "(none)") << "system call " << number;
        } else if (expected) {
            only_the_filters.push_back(number);
        }
        std::free(expected);
    }
    EXPECT_GT(named, 300);  // a table that read nothing would agree on nothing named
    // libseccomp may know calls added to the kernel after the C library's headers were
    // written (Debian 12: 451 to 456); the message then gives the number alone. Any other
    // call the table lacks would be a fault of the table.
    for (int number : only_the_filters)
        EXPECT_GT(number, highest_ours) << "system call " << number << " is missing";
}

TEST(SyscallNames, NamesWellKnownCallsAndNotNegativeOnes) {
    EXPECT_EQ(syscall_name(SCMP_SYS(openat)), "openat");
    EXPECT_EQ(syscall_name(SCMP_SYS(execve)), "execve");
    EXPECT_TRUE(syscall_name(-1).empty());
}
