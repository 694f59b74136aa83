// The second half of the plugin author's test harness: the built plugin library run
// through the real host (loading, negotiation, ingest, dispatch, aggregation), on
// batches built in code or read from an event file. The first half, in the SDK
// (arbiter/sdk/testing.hpp), runs the analyzer class in process without a host.
//
//   arbiter::host::PluginHarness harness("build/arbiter-myplugin.so", "max_speed = 25");
//   ASSERT_TRUE(harness.ok()) << harness.error();
//   harness.push(builder.finish());
//   EXPECT_EQ(harness.action_of("relay", 1, 5), arbiter::host::Action::flag_for_review);
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arbiter/host/assessment.hpp"
#include "arbiter/host/host.hpp"

namespace arbiter::host {

class PluginHarness {
public:
    // library: the plugin's .so. plugin_config: the body of its [plugins.NAME.config]
    // table as TOML. extra_config: more of server_config.toml (e.g. an [aggregation]
    // table). A config or plugin the host refuses makes ok() false; error() says why.
    explicit PluginHarness(const std::filesystem::path& library, const std::string& plugin_config = "",
                           const std::string& extra_config = "");
    ~PluginHarness();

    bool ok() const { return host_ && error_.empty(); }
    const std::string& error() const { return error_; }

    // One batch; returns ingest's reason when it refused it.
    std::optional<std::string> push(std::span<const uint8_t> batch);
    // Every record of an event file; returns the damage and refusals it met.
    std::vector<std::string> replay(const std::filesystem::path& event_file);
    // Ends every open match (plugins report their final signals).
    void close();

    // Every signal the plugin reported, in order.
    const std::vector<SignalRecord>& signals() const;
    std::vector<Assessment> assessments() const;
    std::optional<Action> action_of(const std::string& relay_id, uint64_t match_id, uint32_t player) const;
    Host& host() { return *host_; }

private:
    class Recorder;
    std::shared_ptr<Recorder> recorder_;
    std::unique_ptr<Host> host_;
    std::string error_;
};

}  // namespace arbiter::host
