// What the benchmarks feed the host: a relay's stream of position updates, built with the
// SDK's BatchBuilder, and the hosts they are fed to.
//
// The stream: `players` honest players moving at 6 m/s on a plane, each sending one
// position update per tick at 20 Hz; a batch holds `batch_events` updates in relay-time
// order, players in turn, tick after tick. Every event is a PositionUpdate, the event
// both bundled plugins analyse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <arbiter/host/host.hpp>
#include <arbiter/sdk/batch_builder.hpp>

namespace arbiter::bench {

struct StreamOptions {
    uint32_t players = 1000;
    size_t batch_events = 256;
    double tick_rate_hz = 20.0;
    uint64_t match_id = 1;
    std::string relay_id = "bench-relay";
};

class MovementStream {
  public:
    explicit MovementStream(StreamOptions options);

    // The next batch of batch_events position updates; the relay's work.
    std::vector<uint8_t> next();
    // Batches covering `events` updates, built ahead (for the floor).
    std::vector<std::vector<uint8_t>> prebuild(uint64_t events);

    const StreamOptions& options() const { return options_; }
    uint64_t events() const { return events_; }
    // Relay time of the next update.
    int64_t now_us() const;

  private:
    struct Motion {
        float x, y, vx, vy;
    };

    StreamOptions options_;
    BatchBuilder builder_;
    std::vector<Motion> motion_;
    int64_t tick_us_;
    uint64_t tick_ = 0;
    uint32_t next_player_ = 0;
    uint64_t events_ = 0;
};

// Verifies a batch as ingest does (FlatBuffers Verifier, identifier) and reads every
// event's time, player, kind and position: the floor. Returns the events walked (0 when
// the batch fails verification); `sink` takes a value so that nothing is optimised away.
size_t verify_and_walk(std::span<const uint8_t> bytes, double& sink);

// A plugin for a host: its key in server_config.toml and its library (a bundled plugin's
// name or a path).
struct PluginSpec {
    std::string name;
    std::string library;
    bool isolated = false;  // isolation = "process"
    bool runs_between_calls = false;  // and run_between_calls = true (not stopped)
};

// The bundled plugins (reference, lagpool) and the no-op plugin of bench/.
PluginSpec noop_plugin(const std::string& name = "noop");
PluginSpec reference_plugin();
PluginSpec lagpool_plugin();
PluginSpec kaladin_plugin();
// The plugin holding the checks that span matches (unsharded); present from the build that
// split it out of reference.
PluginSpec accounts_plugin();
bool has_accounts_plugin();

// A host running these plugins with their defaults, on `threads` worker threads (1: the
// pushing thread alone, which every section but "threads" measures); throws
// std::runtime_error when one is refused.
std::unique_ptr<host::Host> make_host(const std::vector<PluginSpec>& plugins, uint32_t threads = 1);

}  // namespace arbiter::bench
