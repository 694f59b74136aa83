// A plugin built with ARBITER_STATE_SEAL_FNV1A writes the seal of earlier SDKs ("ARBS",
// FNV-1a-64), so that a build of an older SDK can still read its state after a swap back.
// Its own binary: the define changes what the SDK's inline writer does, and one program
// must not hold both.
#define ARBITER_STATE_SEAL_FNV1A
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include <arbiter/sdk/state.hpp>

TEST(LegacySeal, WritesTheByteSealAnOlderReaderKnows) {
    arbiter::StateWriter out("TST1", 1);
    out.put<uint32_t>(0x01020304);
    const auto blob = out.finish();
    ASSERT_EQ(blob.size(), 32u);
    EXPECT_EQ(std::string(blob.begin(), blob.begin() + 4), "ARBS");
    uint64_t checksum = 0;
    std::memcpy(&checksum, blob.data() + 20, 8);
    uint64_t fnv = 0xcbf29ce484222325ull;  // FNV-1a-64 of 04 03 02 01, by hand
    for (uint8_t byte : {uint8_t{4}, uint8_t{3}, uint8_t{2}, uint8_t{1}}) {
        fnv ^= byte;
        fnv *= 0x100000001b3ull;
    }
    EXPECT_EQ(checksum, fnv);
    arbiter::StateReader in(blob, "TST1", 1);
    EXPECT_EQ(in.get<uint32_t>(), 0x01020304u);
}
