#include "server_sim.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <stdexcept>

#include "varint.hpp"

namespace arbiter::ddnet::antibot::test {

namespace {

template <class F>
void resolve(void* handle, const char* name, F& out) {
    void* symbol = dlsym(handle, name);
    if (!symbol) throw std::runtime_error(std::string("libantibot.so lacks ") + name);
    out = reinterpret_cast<F>(symbol);
}

constexpr float kGroundY = 1000.0f;
constexpr float kMapWidth = 32.0f * 300;  // game units: 300 tiles

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

ServerSim::Stopwatch::Stopwatch(ServerSim& sim)
    : sim_(sim),
      wall_(std::chrono::steady_clock::now()),
      cpu_(thread_cpu_seconds()),
      fill_wall_(sim.fill_seconds_),
      fill_cpu_(sim.fill_cpu_seconds_) {}

// The server's own filling of the round data (CAntibot::Update, before every call) is
// not the library's time: taken out.
ServerSim::Stopwatch::~Stopwatch() {
    sim_.library_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count() -
        (sim_.fill_seconds_ - fill_wall_);
    sim_.library_cpu_seconds_ += thread_cpu_seconds() - cpu_ - (sim_.fill_cpu_seconds_ - fill_cpu_);
}

AntibotLibrary AntibotLibrary::open(const std::string& path) {
    AntibotLibrary lib;
    lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle)
        throw std::runtime_error(std::string("cannot load ") + path + ": " + dlerror());
    resolve(lib.handle, "AntibotAbiVersion", lib.abi_version);
    resolve(lib.handle, "AntibotInit", lib.init);
    resolve(lib.handle, "AntibotRoundStart", lib.round_start);
    resolve(lib.handle, "AntibotRoundEnd", lib.round_end);
    resolve(lib.handle, "AntibotUpdateData", lib.update_data);
    resolve(lib.handle, "AntibotDestroy", lib.destroy);
    resolve(lib.handle, "AntibotDump", lib.dump);
    resolve(lib.handle, "AntibotOnSpawn", lib.on_spawn);
    resolve(lib.handle, "AntibotOnDirectInput", lib.on_direct_input);
    resolve(lib.handle, "AntibotOnCharacterTick", lib.on_character_tick);
    resolve(lib.handle, "AntibotOnEngineTick", lib.on_engine_tick);
    resolve(lib.handle, "AntibotOnEngineClientJoin", lib.on_engine_client_join);
    resolve(lib.handle, "AntibotOnEngineClientDrop", lib.on_engine_client_drop);
    resolve(lib.handle, "AntibotOnEngineClientMessage", lib.on_engine_client_message);
    resolve(lib.handle, "AntibotOnEngineServerMessage", lib.on_engine_server_message);
    resolve(lib.handle, "AntibotOnEngineSimulateClientMessage",
            lib.on_engine_simulate_client_message);
    resolve(lib.handle, "AntibotOnPlayerInit", lib.on_player_init);
    resolve(lib.handle, "AntibotOnPlayerDestroy", lib.on_player_destroy);
    resolve(lib.handle, "AntibotOnHammerFire", lib.on_hammer_fire);
    resolve(lib.handle, "AntibotOnHammerHit", lib.on_hammer_hit);
    resolve(lib.handle, "AntibotOnHookAttach", lib.on_hook_attach);
    // The same check as 16.4's CAntibot::Init (a dbg_assert there).
    if (lib.abi_version() != ANTIBOT_ABI_VERSION)
        throw std::runtime_error("antibot ABI version mismatch");
    return lib;
}

void AntibotLibrary::close() {
    if (handle) dlclose(handle);
    handle = nullptr;
}

struct ServerSim::Tee {
    SimPlayer player;
    bool connected = false, in_game = false, alive = false;
    char raw_name[16] = {};  // as the server would copy it (a test may leave it unterminated)
    float x = 0, y = kGroundY, vx = 0, vy = 0;
    int spawn_tick = -1;
    // The client's input: direction, target x/y, jump, fire, hook, flags, wanted weapon,
    // next weapon, previous weapon (CNetObj_PlayerInput).
    int32_t input[10] = {0, 100, 0, 0, 0, 0, 1, 1, 0, 0};
    CAntibotInputData latest[3] = {{-1, -1}, {-1, -1}, {-1, -1}};
    std::vector<std::array<int32_t, 10>> inbox;  // inputs received for the next tick
    std::array<int32_t, 10> applied{};           // the last input the game took
    int next_decision = 0, release_jump = -1, release_hook = -1, release_fire = -1;
    double aim_angle = 0;
};

ServerSim::ServerSim(AntibotLibrary& lib, uint64_t seed) : lib_(lib), rng_(seed) {}

ServerSim::~ServerSim() = default;

void ServerSim::on_log(const char* message, void* user) {
    static_cast<ServerSim*>(user)->log_.emplace_back(message);
}

void ServerSim::on_report(int client_id, const char* message, void* user) {
    static_cast<ServerSim*>(user)->reports_.push_back({client_id, message});
}

void ServerSim::start() {
    CAntibotVersion version = ANTIBOT_VERSION;
    data_.m_Version = version;
    data_.m_Now = 0;
    data_.m_Freq = 1'000'000;
    data_.m_pfnLog = on_log;
    data_.m_pfnReport = on_report;
    data_.m_pfnSend = on_send;
    data_.m_pUser = this;
    lib_.init(&data_);
    std::memset(&round_, 0, sizeof round_);
    lib_.round_start(&round_);
    fill();
    lib_.update_data();
}

void ServerSim::fill() {
    const auto wall = std::chrono::steady_clock::now();
    const double cpu = thread_cpu_seconds();
    fill_round();
    fill_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    fill_cpu_seconds_ += thread_cpu_seconds() - cpu;
}

void ServerSim::fill_round() {
    round_.m_Tick = tick_;
    std::memset(round_.m_aCharacters, 0, sizeof round_.m_aCharacters);
    for (int i = 0; i < ANTIBOT_MAX_CLIENTS; ++i) {
        CAntibotCharacterData& c = round_.m_aCharacters[i];
        for (auto& latest : c.m_aLatestInputs)
            latest = {-1, -1};
        c.m_Alive = false;
        c.m_Pause = false;
        c.m_Team = -1;
        c.m_Pos = {-1, -1};
        c.m_Vel = {0, 0};
        c.m_Angle = -1;
        c.m_HookedPlayer = -1;
        c.m_SpawnTick = -1;
        c.m_WeaponChangeTick = -1;
        if (static_cast<size_t>(i) >= tees_.size() || !tees_[static_cast<size_t>(i)].connected)
            continue;
        const Tee& t = tees_[static_cast<size_t>(i)];
        // CServer::ClientName: the name once the client is in the game.
        if (t.in_game)
            std::memcpy(c.m_aName, t.raw_name, sizeof c.m_aName);
        else
            std::strncpy(c.m_aName, "(connecting)", sizeof c.m_aName);
        c.m_Alive = t.alive;
        c.m_Team = 0;
        if (t.alive) {
            c.m_Pos = {t.x, t.y};
            c.m_Vel = {t.vx, t.vy};
            c.m_Angle = static_cast<int>(std::atan2(t.input[2], t.input[1]) * 256);
            c.m_SpawnTick = t.spawn_tick;
            std::memcpy(c.m_aLatestInputs, t.latest, sizeof t.latest);
        }
    }
}

void ServerSim::send_input(int client_id, Tee& t) {
    std::vector<uint8_t> chunk;
    write_varint(chunk, (16 << 1) | 1);  // NETMSG_INPUT, a system message
    write_varint(chunk, tick_ - 2);      // acknowledged snapshot
    write_varint(chunk, tick_ + 1);      // intended tick: the next one
    write_varint(chunk, 40);             // ten integers
    for (int32_t v : t.input)
        write_varint(chunk, v);
    const Stopwatch watch(*this);
    fill();
    lib_.on_engine_client_message(client_id, chunk.data(), static_cast<int>(chunk.size()), 1);
    // The server keeps it for its tick (CServer::ProcessClientPacket).
    std::array<int32_t, 10> copy;
    std::copy(std::begin(t.input), std::end(t.input), copy.begin());
    t.inbox.push_back(copy);
}

void ServerSim::apply_inputs(int client_id, Tee& t) {
    // CServer::Run before each tick: every input meant for it, or the last one again
    // (CGameContext::OnClientPredictedEarlyInput -> CCharacter::OnDirectInput, which
    // shifts the latest inputs, stores the new one, aiming at the tee itself turned into
    // aiming up, and calls the module).
    std::vector<std::array<int32_t, 10>> inputs;
    inputs.swap(t.inbox);
    if (inputs.empty()) inputs.push_back(t.applied);
    for (const auto& in : inputs) {
        t.applied = in;
        if (!t.alive) continue;
        t.latest[2] = t.latest[1];
        t.latest[1] = t.latest[0];
        t.latest[0] = {in[1], in[2]};
        if (t.latest[0].m_TargetX == 0 && t.latest[0].m_TargetY == 0) t.latest[0].m_TargetY = -1;
        const Stopwatch watch(*this);
        fill();
        lib_.on_direct_input(client_id);
    }
}

void ServerSim::decide(int, Tee& t) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    if (t.release_jump == tick_) t.input[3] = 0;
    if (t.release_hook == tick_) t.input[5] = 0;
    if (t.release_fire == tick_) ++t.input[4];
    if (tick_ < t.next_decision) return;
    if (t.player.behaviour == Behaviour::macro) {
        t.input[0] = t.input[0] == 1 ? -1 : 1;
        t.next_decision = tick_ + 10;
        return;
    }
    const double what = unit(rng_);
    if (what < 0.35) {
        const double d = unit(rng_);
        t.input[0] = d < 0.4 ? -1 : d < 0.8 ? 1 : 0;
    } else if (what < 0.5) {
        t.input[3] = 1;
        t.release_jump = tick_ + 3 + static_cast<int>(unit(rng_) * 6);
    } else if (what < 0.6) {
        t.input[5] = 1;
        t.release_hook = tick_ + 8 + static_cast<int>(unit(rng_) * 20);
    } else if (what < 0.7) {
        ++t.input[4];
        t.release_fire = tick_ + 2 + static_cast<int>(unit(rng_) * 4);
    }
    t.aim_angle += (unit(rng_) - 0.5) * 1.2;
    const double r = 100 + unit(rng_) * 150;
    t.input[1] = static_cast<int32_t>(std::lround(std::cos(t.aim_angle) * r));
    t.input[2] = static_cast<int32_t>(std::lround(std::sin(t.aim_angle) * r));
    // A human's pause: log-normal around 350 ms, never under 90 ms.
    std::normal_distribution<double> normal(0.0, 1.0);
    const double ms = std::max(90.0, std::exp(std::log(350.0) + 0.6 * normal(rng_)));
    t.next_decision = tick_ + std::max(1, static_cast<int>(ms / 20.0));
}

void ServerSim::play(const std::vector<SimPlayer>& players, int ticks) {
    const int first = tick_;
    tees_.resize(std::max(tees_.size(), players.size()));
    for (int n = 0; n < ticks; ++n) {
        const int rel = tick_ - first;
        const double before = library_seconds_, cpu_before = library_cpu_seconds_;
        // Connections come and go; a client enters the game 10 ticks after connecting and
        // its tee spawns 5 ticks later.
        for (size_t i = 0; i < players.size(); ++i) {
            Tee& t = tees_[i];
            const int id = static_cast<int>(i);
            const Stopwatch watch(*this);
            if (rel == players[i].join_tick) {
                t = Tee{};
                t.player = players[i];
                t.connected = true;
                std::memcpy(t.raw_name, players[i].name.data(),
                            std::min(players[i].name.size(), sizeof t.raw_name - 1));
                t.aim_angle = static_cast<double>(i);
                t.x = 500.0f + 300.0f * static_cast<float>(i);
                fill();
                lib_.on_engine_client_join(id, false);
            } else if (t.connected && rel == players[i].join_tick + 10) {
                t.in_game = true;
                fill();
                lib_.on_player_init(id);
            } else if (t.connected && rel == players[i].join_tick + 15) {
                t.alive = true;
                t.spawn_tick = tick_;
                fill();
                lib_.on_spawn(id);
            } else if (t.connected && rel == players[i].leave_tick) {
                fill();
                lib_.on_player_destroy(id);
                t = Tee{};
                fill();
                lib_.on_engine_client_drop(id, "leaving");
            }
        }
        // The network: inputs that changed, and the unchanged ones a client resends (a
        // DDNet client sends one at least every other tick).
        for (size_t i = 0; i < players.size(); ++i) {
            Tee& t = tees_[i];
            if (!t.in_game) continue;
            int32_t before_input[10];
            std::memcpy(before_input, t.input, sizeof before_input);
            decide(static_cast<int>(i), t);
            if (std::memcmp(before_input, t.input, sizeof before_input) != 0 || tick_ % 2 == 0)
                send_input(static_cast<int>(i), t);
        }
        // The game's tick: the inputs for it first, then every character's tick.
        for (size_t i = 0; i < players.size(); ++i)
            if (tees_[i].in_game) apply_inputs(static_cast<int>(i), tees_[i]);
        ++tick_;
        for (size_t i = 0; i < players.size(); ++i) {
            Tee& t = tees_[i];
            if (!t.alive) continue;
            const Stopwatch watch(*this);
            fill();
            lib_.on_character_tick(static_cast<int>(i));
            t.vx = static_cast<float>(t.applied[0]) * t.player.speed;
            if (t.applied[3] && t.y >= kGroundY) t.vy = -8.0f;
            t.vy = t.y < kGroundY || t.vy < 0 ? t.vy + 0.5f : 0.0f;
            t.x = std::clamp(t.x + t.vx, 0.0f, kMapWidth);
            t.y = std::min(t.y + t.vy, kGroundY);
        }
        const Stopwatch watch(*this);
        fill();
        lib_.on_engine_tick();
        tick_seconds_.push_back(library_seconds_ - before);
        tick_cpu_seconds_.push_back(library_cpu_seconds_ - cpu_before);
    }
}

void ServerSim::abuse() {
    // Client ids no server hands out.
    for (int id : {-1, static_cast<int>(ANTIBOT_MAX_CLIENTS), 1000, INT_MIN, INT_MAX}) {
        fill();
        lib_.on_engine_client_join(id, true);
        lib_.on_spawn(id);
        lib_.on_player_init(id);
        lib_.on_direct_input(id);
        lib_.on_character_tick(id);
        lib_.on_hammer_fire(id);
        lib_.on_hammer_hit(id, id);
        lib_.on_hook_attach(id, true);
        const uint8_t chunk[] = {0x21, 0x01, 0x02, 0x28};
        lib_.on_engine_client_message(id, chunk, sizeof chunk, 0);
        lib_.on_engine_client_drop(id, nullptr);
        lib_.on_player_destroy(id);
    }
    // Data the server would never pass, and messages no client should send.
    int client = 0, size = 0, flags = 0;
    uint8_t buffer[64];
    if (lib_.on_engine_simulate_client_message(&client, buffer, sizeof buffer, &size, &flags))
        log_.emplace_back("abuse: the module asked to simulate a message");
    lib_.on_engine_client_message(0, nullptr, 40, 0);
    lib_.on_engine_client_message(0, buffer, -5, 0);
    lib_.on_engine_client_message(0, buffer, 0, 0);
    lib_.on_engine_server_message(0, nullptr, 40, 0);
    std::uniform_int_distribution<int> byte(0, 255), length(1, 1400);
    std::vector<uint8_t> junk(1400);
    for (int n = 0; n < 3000; ++n) {
        const int size_of = length(rng_);
        for (int i = 0; i < size_of; ++i)
            junk[static_cast<size_t>(i)] = static_cast<uint8_t>(byte(rng_));
        // Now and then a real input message's start, so that the parser goes deep.
        if (n % 3 == 0) junk[0] = (16 << 1) | 1;
        fill();
        if (lib_.on_engine_client_message(n % 4, junk.data(), size_of, n & 1))
            log_.emplace_back("abuse: the module asked the server to drop a client message");
    }
    // Two odd players: a name of 16 bytes without a terminator, and one that is not
    // UTF-8; a tee whose position is not a number; drops with no reason and a long,
    // broken one.
    const size_t base = tees_.size();
    tees_.resize(base + 2);
    for (size_t k = 0; k < 2; ++k) {
        Tee& t = tees_[base + k];
        t.connected = t.in_game = t.alive = true;
        t.spawn_tick = tick_;
        t.x = 700.0f;
        if (k == 0)
            std::memset(t.raw_name, 'A', sizeof t.raw_name);
        else
            std::memcpy(t.raw_name, "\xff\xfe\x01\xc3(bad", 9);
        t.player.name = k == 0 ? "unterminated" : "not-utf8";
    }
    for (int n = 0; n < 20; ++n) {
        for (size_t k = 0; k < 2; ++k) {
            Tee& t = tees_[base + k];
            const int id = static_cast<int>(base + k);
            if (n == 10) t.x = std::numeric_limits<float>::quiet_NaN();
            if (n == 11) t.x = std::numeric_limits<float>::infinity();
            if (n == 12) t.x = 700.0f;
            t.input[1] = n + 1;
            send_input(id, t);
            apply_inputs(id, t);
            fill();
            lib_.on_character_tick(id);
        }
        ++tick_;
        fill();
        lib_.on_engine_tick();
    }
    std::string long_reason(300, '\xfe');
    fill();
    lib_.on_engine_client_drop(static_cast<int>(base), nullptr);
    lib_.on_engine_client_drop(static_cast<int>(base + 1), long_reason.c_str());
    tees_.resize(base);
    fill();
    lib_.on_engine_tick();
}

void ServerSim::stop() {
    fill();
    lib_.round_end();
    lib_.destroy();
}

}  // namespace arbiter::ddnet::antibot::test
