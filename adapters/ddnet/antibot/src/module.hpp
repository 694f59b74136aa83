// The antibot module's work, apart from any one version of DDNet's antibot ABI: it keeps
// each client slot's state, turns what the server hands in into Arbiter events, pushes a
// batch to the embedded host (arbiter/arbiter_host.h) every few ticks, and hands the
// host's assessments back to the server as reports and log lines. exports_v5.cpp adapts
// it to ABI 5 (DDNet 16.4); docs/games/ddnet.md says what a later ABI would change.
//
// What becomes what (units as `arbiter import X.demo`: a tile is a metre, z up, 50 ticks
// a second, relay time from the round's first tick):
// - a round (AntibotRoundStart .. AntibotRoundEnd) is one match;
// - a client joins when the server first shows its name (the engine's join comes before
//   the name is known), with the name as the account; a name seen again in the same round
//   rejoins as the same player; the engine's drop is its leave, with the drop reason;
// - each character tick gives the tee's position and velocity (when they changed, and
//   once a second while they do not); a spawn, and a move no physics makes in a tick (a
//   teleporter), are the server's own (server_teleport);
// - each input the game takes (AntibotOnDirectInput) becomes Orders, as the demo importer
//   writes them: "direction", "jump", "hook", "fire", "weapon", "aim" (an aim move within
//   4 ticks of the one before is a repeat), with the aim target as the order's target.
//   ABI 5's round data carries only the aim; the full input is read from the client's
//   input message (input_message.hpp), kept for the tick the server applies it at, and
//   taken when its aim is the aim the game shows; otherwise only the aim is used.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <arbiter/arbiter_host.h>
#include <arbiter/sdk/batch_builder.hpp>

#include "input_message.hpp"

namespace arbiter::ddnet::antibot {

constexpr int kMaxClients = 64;  // ANTIBOT_MAX_CLIENTS of ABI 5 (128 from ABI 8 on)

// One client slot as the round data shows it, already checked by the ABI adapter.
struct CharacterView {
    std::string name;  // bounded, as the server wrote it; not yet valid UTF-8
    bool alive = false;
    bool paused = false;
    int team = -1;
    float x = 0, y = 0, vel_x = 0, vel_y = 0;  // game units, and units per tick
    int spawn_tick = -1;
    int target_x = 0, target_y = 0;  // the latest input's aim, relative to the tee
};

// The round data of whatever ABI, read on demand.
class RoundView {
  public:
    virtual ~RoundView() = default;
    virtual int tick() const = 0;
    // Nothing for a slot out of range or without a player.
    virtual std::optional<CharacterView> character(int client_id) const = 0;
};

struct ModuleSettings {
    std::string config_path;  // the host's server_config.toml
    std::string relay_id = "ddnet";
    int batch_ticks = 5;                                 // ticks per pushed batch (1..50)
    int report_action = ARBITER_ACTION_FLAG_FOR_REVIEW;  // from this action on, m_pfnReport
};

// The settings from the environment (docs/games/ddnet.md): ARBITER_ANTIBOT_CONFIG,
// ARBITER_ANTIBOT_RELAY, ARBITER_ANTIBOT_BATCH_TICKS, ARBITER_ANTIBOT_REPORT. A value out
// of range is refused with a line in `problems` and the default kept.
ModuleSettings settings_from_environment(const std::string& default_config,
                                         std::vector<std::string>& problems);

struct ServerCallbacks {
    std::function<void(const std::string&)> log;          // the server's console
    std::function<void(int, const std::string&)> report;  // a report on one client
};

class Module {
  public:
    // Starts the host; when it cannot, the module stays idle and says why in the log.
    Module(ModuleSettings settings, ServerCallbacks callbacks);
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    bool running() const { return host_ != nullptr; }

    void round_start(const RoundView* round);
    void round_end();
    void client_join(int client_id, bool sixup);
    void client_drop(int client_id, const char* reason);
    void client_message(int client_id, std::span<const uint8_t> chunk);
    void direct_input(int client_id);
    void character_tick(int client_id);
    void spawn(int client_id);
    void engine_tick();
    // One log line of what the module holds and has done (the server's dump_antibot).
    std::string dump() const;
    // Stops calling the server: what the host says from here on goes to stderr.
    void detach_server();
    // The host's action callback: a player's action went up.
    void handle_assessment(const arbiter_assessment& assessment);
    // Adds one call's time to the figures (the ABI adapter times each call).
    void account_call(std::chrono::nanoseconds elapsed);

    // For the tests and the benchmark: work done, in the module's own figures.
    struct Figures {
        uint64_t batches = 0, refused = 0, events = 0, orders = 0, positions = 0, inputs_read = 0,
                 inputs_unmatched = 0, reports = 0, monitor_lines = 0;
        std::chrono::nanoseconds busy{0};  // time spent in the module's calls
        uint64_t calls = 0;
    };
    const Figures& figures() const { return figures_; }

  private:
    struct Seat;
    Seat* seat(int client_id);
    void ensure_match();
    void ensure_joined(int client_id, Seat& seat, const CharacterView& view);
    void push_pending();
    void end_match(const char* reason);
    int64_t time_us(int tick) const;
    template <class Body>
    void add(int tick, uint32_t player, const Body& body);
    void drain_host_log();
    void log(const std::string& line);

    ModuleSettings settings_;
    ServerCallbacks server_;
    arbiter_host* host_ = nullptr;
    const RoundView* round_ = nullptr;
    std::unique_ptr<BatchBuilder> batch_;
    uint64_t match_id_ = 0;
    bool match_open_ = false;
    int first_tick_ = -1, last_tick_ = -1, last_push_tick_ = -1, last_engine_tick_ = -1;
    std::vector<std::unique_ptr<Seat>> seats_;
    std::map<std::string, uint32_t> players_;  // player ids by account, this match
    Figures figures_;
};

}  // namespace arbiter::ddnet::antibot
