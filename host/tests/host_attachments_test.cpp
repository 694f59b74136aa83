// The host builds neither the store's sink nor the correlator: the program hands them in
// (HostAttachments). A config that asks for them, given a host without them, is refused at
// start with the reason: a host that ran on without the store the operator configured
// would say it keeps records it drops.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "arbiter/host/config.hpp"
#include "arbiter/host/host.hpp"
#include "store/store.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host {
namespace {

ServerConfig config_with(const std::string& extra, const test::TempDir& dir) {
    return parse_config("[host]\nserver_id = \"t\"\n" + extra, "server_config.toml", dir.path(),
                        {});
}

std::string refusal(ServerConfig config) {
    try {
        Host host(std::move(config));
    } catch (const std::runtime_error& error) {
        return error.what();
    }
    return "";
}

TEST(HostAttachments, AStoreWithoutItsSinkIsRefusedNotIgnored) {
    test::TempDir dir;
    EXPECT_EQ(refusal(config_with("[store]\npath = \"store.db\"\n", dir)),
              "[store] is set, but this program has no store: the `arbiter` command has one, "
              "the embedding library does not");
}

TEST(HostAttachments, CorrelationWithoutItsSourceIsRefusedNotIgnored) {
    test::TempDir dir;
    const std::string refused =
        refusal(config_with("[store]\npath = \"store.db\"\n[correlation]\nenabled = true\n", dir));
    // The store is the first thing missing; given it, the correlation is.
    EXPECT_NE(refused.find("[store] is set"), std::string::npos) << refused;
    ServerConfig config =
        config_with("[store]\npath = \"store.db\"\n[correlation]\nenabled = true\n", dir);
    HostAttachments store_only;
    store_only.ledger_sink = attach_store(config).ledger_sink;
    try {
        Host host(std::move(config), std::move(store_only));
        FAIL() << "a host without its correlation source started";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("[correlation] is enabled"), std::string::npos)
            << error.what();
    }
}

TEST(HostAttachments, WithTheStoreAttachedTheHostStartsAndKeepsItsRecords) {
    test::TempDir dir;
    ServerConfig config = config_with("[store]\npath = \"store.db\"\n", dir);
    HostAttachments attachments = attach_store(config);
    ASSERT_TRUE(attachments.ledger_sink);
    EXPECT_FALSE(attachments.correlation);  // [correlation] is off
    Host host(std::move(config), std::move(attachments));
    EXPECT_TRUE(host.close());
    EXPECT_EQ(host.store_records_lost(), 0u);
}

}  // namespace
}  // namespace arbiter::host
