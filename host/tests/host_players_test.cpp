// The host's record of a match's players: ids below the known-player bitmap's limit and
// far above it are both registered once, with the account of their join.
#include <gtest/gtest.h>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/config.hpp"
#include "arbiter/host/host.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host {
namespace {

TEST(HostPlayers, IdsPastTheBitmapAreKnownAsWellAsIdsInIt) {
    test::TempDir dir;
    Host host(parse_config("[host]\nserver_id = \"t\"\n", "server_config.toml", dir.path(), {}));
    const uint32_t ids[] = {1, 131'071, 131'072, 4'000'000, 0xffffffffu};
    BatchBuilder builder("relay", 1);
    for (const uint32_t id : ids) {
        build::PlayerJoin join;
        join.account_id = "account-" + std::to_string(id);
        builder.add(1'000, 0, id, join);
    }
    ASSERT_FALSE(host.push(builder.finish()));
    // Known ones again, without a join: no second registration, the account kept.
    for (int batch = 0; batch < 3; ++batch) {
        for (const uint32_t id : ids)
            builder.add(2'000 + batch, 1, id, build::Latency{5});
        ASSERT_FALSE(host.push(builder.finish()));
    }
    const auto all = host.assessments();
    ASSERT_EQ(all.size(), std::size(ids));
    for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(all[i].player.player, ids[i]);
        EXPECT_EQ(all[i].account_id, "account-" + std::to_string(ids[i]));
    }
}

}  // namespace
}  // namespace arbiter::host
