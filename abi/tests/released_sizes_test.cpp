// The per-version size constants of the current header are the sizes the frozen 1.0
// header really gives: a host checks a 1.0 plugin's struct_size against them.
#include <cstddef>

#include <gtest/gtest.h>

#include <arbiter/arbiter_plugin.h>

extern "C" size_t released_1_0_sizeof(const char* name);

TEST(ReleasedSizes, OneZeroConstantsMatchTheFrozenHeader) {
    EXPECT_EQ(released_1_0_sizeof("arb_signal"), size_t{ARB_SIGNAL_SIZE_1_0});
    EXPECT_EQ(released_1_0_sizeof("arb_signal_sink"), size_t{ARB_SIGNAL_SINK_SIZE_1_0});
    EXPECT_EQ(released_1_0_sizeof("arb_host_services"), size_t{ARB_HOST_SERVICES_SIZE_1_0});
    EXPECT_EQ(released_1_0_sizeof("arb_create_args"), size_t{ARB_CREATE_ARGS_SIZE_1_0});
    EXPECT_EQ(released_1_0_sizeof("arb_plugin_api"), size_t{ARB_PLUGIN_API_SIZE_1_0});
    EXPECT_EQ(released_1_0_sizeof("arb_negotiation"), size_t{ARB_NEGOTIATION_SIZE_1_0});
}

TEST(ReleasedSizes, TheFrozenPrefixIsWhereOneZeroPutIt) {
    EXPECT_EQ(released_1_0_sizeof("frozen_prefix"), size_t{ARB_NEGOTIATION_FROZEN_SIZE});
    EXPECT_EQ(offsetof(arb_negotiation, plugin_abi_minor) + sizeof(uint32_t),
              size_t{ARB_NEGOTIATION_FROZEN_SIZE});
}
