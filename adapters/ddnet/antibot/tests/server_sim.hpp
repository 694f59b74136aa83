// A stand-in for a DDNet 16.4 server built with -DANTIBOT=ON, for the module's driver
// test and benchmark: it dlopens libantibot.so and calls its exports in the order and
// with the data 16.4's server does (src/engine/server/antibot.cpp, server.cpp,
// src/game/server/gamecontext.cpp, entities/character.cpp):
// - AntibotInit once, with the log and report callbacks and the structure sizes;
// - AntibotRoundStart with zeroed round data, then the round data filled and
//   AntibotUpdateData, as CAntibot::RoundStart does;
// - before every callback, the round data filled anew (CAntibot::Update ->
//   CGameContext::FillAntibot): the tick, and for each slot with a player its name, and
//   for each character its position, velocity, spawn tick and latest aim targets;
// - a client's input: AntibotOnEngineClientMessage with the NETMSG_INPUT chunk as the
//   client sent it, when it arrives; the server keeps it for the tick it is meant for;
// - each tick: AntibotOnDirectInput for each input meant for it, or once with the last
//   input again when none came (CServer::Run -> OnClientPredictedEarlyInput ->
//   CCharacter::OnDirectInput), the tick advanced, AntibotOnCharacterTick for every
//   character (CCharacter::PreTick), then AntibotOnEngineTick (the server's main loop);
// - AntibotOnEngineClientJoin when a client connects (its name comes later, when it
//   enters the game), AntibotOnEngineClientDrop when it leaves; AntibotRoundEnd and
//   AntibotDestroy at shutdown.
// The tees' physics is deliberately simple (the module reads positions, it does not
// check DDNet's physics): running moves a tee at a set speed, jumping lifts it a little.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "antibot_interface.h"

namespace arbiter::ddnet::antibot::test {

// The exports, looked up by name in the loaded library.
struct AntibotLibrary {
    void* handle = nullptr;
    int (*abi_version)() = nullptr;
    void (*init)(CAntibotData*) = nullptr;
    void (*round_start)(CAntibotRoundData*) = nullptr;
    void (*round_end)() = nullptr;
    void (*update_data)() = nullptr;
    void (*destroy)() = nullptr;
    void (*dump)() = nullptr;
    void (*on_spawn)(int) = nullptr;
    void (*on_direct_input)(int) = nullptr;
    void (*on_character_tick)(int) = nullptr;
    void (*on_engine_tick)() = nullptr;
    void (*on_engine_client_join)(int, bool) = nullptr;
    void (*on_engine_client_drop)(int, const char*) = nullptr;
    bool (*on_engine_client_message)(int, const void*, int, int) = nullptr;
    bool (*on_engine_server_message)(int, const void*, int, int) = nullptr;
    bool (*on_engine_simulate_client_message)(int*, void*, int, int*, int*) = nullptr;
    void (*on_player_init)(int) = nullptr;
    void (*on_player_destroy)(int) = nullptr;
    void (*on_hammer_fire)(int) = nullptr;
    void (*on_hammer_hit)(int, int) = nullptr;
    void (*on_hook_attach)(int, bool) = nullptr;

    // Throws std::runtime_error when the library or one of its exports is missing.
    static AntibotLibrary open(const std::string& path);
    void close();
};

// How a simulated player chooses its inputs.
enum class Behaviour {
    human,   // irregular pauses (log-normal around 350 ms), the aim drifting all the time
    macro,   // flips its direction every 10 ticks exactly, nothing else
    runner,  // like a human, but runs at `speed` (a fast tee, for the speed check)
};

struct SimPlayer {
    std::string name;
    Behaviour behaviour = Behaviour::human;
    float speed = 6.0f;   // game units a tick while running
    int join_tick = 0;    // relative to the round's start
    int leave_tick = -1;  // -1: stays to the end
};

struct SimReport {
    int client_id;
    std::string message;
};

class ServerSim {
  public:
    ServerSim(AntibotLibrary& lib, uint64_t seed);
    ~ServerSim();

    // AntibotInit and the round's start.
    void start();
    // Runs `ticks` ticks of play of `players` (client ids in order from 0).
    void play(const std::vector<SimPlayer>& players, int ticks);
    // Calls every export with what a broken or hostile server or client could hand in
    // (client ids out of range, null and oversized data, junk messages, names that are
    // not UTF-8 or not terminated, positions that are not numbers).
    void abuse();
    // AntibotRoundEnd and AntibotDestroy.
    void stop();
    // AntibotDump (its line is in log()).
    void dump() { lib_.dump(); }

    const std::vector<std::string>& log() const { return log_; }
    const std::vector<SimReport>& reports() const { return reports_; }
    // Time spent inside the library's calls, in all and per tick played: wall-clock time,
    // and the CPU time of the calling thread (which the plugins run on, with the embedded
    // host's default of one thread; unlike wall-clock time, it does not count waiting for
    // a core other programs hold).
    double library_seconds() const { return library_seconds_; }
    const std::vector<double>& tick_seconds() const { return tick_seconds_; }
    const std::vector<double>& tick_cpu_seconds() const { return tick_cpu_seconds_; }

  private:
    struct Tee;
    // Adds the time from its making to its end to the library's.
    class Stopwatch {
      public:
        explicit Stopwatch(ServerSim& sim);
        ~Stopwatch();
        Stopwatch(const Stopwatch&) = delete;
        Stopwatch& operator=(const Stopwatch&) = delete;

      private:
        ServerSim& sim_;
        std::chrono::steady_clock::time_point wall_;
        double cpu_, fill_wall_, fill_cpu_;
    };
    void fill();  // CGameContext::FillAntibot, timed
    void fill_round();
    void send_input(int client_id, Tee& tee);
    void apply_inputs(int client_id, Tee& tee);
    void decide(int client_id, Tee& tee);
    static void on_log(const char* message, void* user);
    static void on_report(int client_id, const char* message, void* user);
    static void on_send(int, const void*, int, int, void*) {}

    AntibotLibrary& lib_;
    std::mt19937_64 rng_;
    CAntibotData data_{};
    CAntibotRoundData round_{};
    int tick_ = 1000;  // the server's tick when the round starts
    std::vector<Tee> tees_;
    std::vector<std::string> log_;
    std::vector<SimReport> reports_;
    double library_seconds_ = 0, library_cpu_seconds_ = 0, fill_seconds_ = 0, fill_cpu_seconds_ = 0;
    std::vector<double> tick_seconds_, tick_cpu_seconds_;
};

}  // namespace arbiter::ddnet::antibot::test
