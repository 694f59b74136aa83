// DDNet's antibot ABI 5 (DDNet 16.4's src/antibot/antibot_interface.h, vendored in
// ../vendor/): the functions a DDNet server built with -DANTIBOT=ON calls, each handed to
// the Module (module.hpp).
//
// The server must never crash because of this library: every function checks what it is
// handed (client ids within 0..63, sizes, pointers, the round data's floats and strings)
// and catches everything; after an unexpected error the module stops working, says so in
// the server's console, and the server goes on. Nothing here ever returns true from a
// message hook (the server always processes its messages) and nothing kicks: the module
// reports, people decide.
#define ANTIBOTAPI DYNAMIC_EXPORT
#include "antibot_interface.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "module.hpp"
#include "text.hpp"

namespace ab = arbiter::ddnet::antibot;

static_assert(ANTIBOT_MAX_CLIENTS == ab::kMaxClients);

namespace {

// The round data of ABI 5, read as the server leaves it before each call.
class RoundViewV5 final : public ab::RoundView {
  public:
    void attach(const CAntibotRoundData* data) { data_ = data; }
    int tick() const override { return data_ ? data_->m_Tick : 0; }
    std::optional<ab::CharacterView> character(int client_id) const override {
        if (!data_ || client_id < 0 || client_id >= ANTIBOT_MAX_CLIENTS) return std::nullopt;
        const CAntibotCharacterData& c = data_->m_aCharacters[client_id];
        ab::CharacterView view;
        // The server clears the slot and copies the name of a player there (str_copy,
        // terminated); read no further than the field all the same.
        view.name = ab::bounded_c_string(c.m_aName, sizeof c.m_aName);
        if (view.name.empty()) return std::nullopt;
        view.alive = byte_of(&c.m_Alive) != 0;
        view.paused = byte_of(&c.m_Pause) != 0;
        view.team = c.m_Team;
        view.x = c.m_Pos.x;
        view.y = c.m_Pos.y;
        view.vel_x = c.m_Vel.x;
        view.vel_y = c.m_Vel.y;
        // A position that is not a number cannot be a tee's: taken as no tee at all.
        if (!std::isfinite(view.x) || !std::isfinite(view.y) || !std::isfinite(view.vel_x) ||
            !std::isfinite(view.vel_y))
            view.alive = false;
        view.spawn_tick = c.m_SpawnTick;
        view.target_x = c.m_aLatestInputs[0].m_TargetX;
        view.target_y = c.m_aLatestInputs[0].m_TargetY;
        return view;
    }

  private:
    // A bool the server wrote, read as its byte: any value but 0 is true, without the
    // undefined behaviour of loading a bool that holds neither 0 nor 1.
    static unsigned char byte_of(const bool* flag) {
        unsigned char b = 0;
        std::memcpy(&b, flag, 1);
        return b;
    }
    const CAntibotRoundData* data_ = nullptr;
};

CAntibotData* g_data = nullptr;
RoundViewV5 g_round;
std::unique_ptr<ab::Module> g_module;
bool g_failed = false;

void server_log(const std::string& line) {
    if (g_data && g_data->m_pfnLog) g_data->m_pfnLog(line.c_str(), g_data->m_pUser);
}

void server_report(int client_id, const std::string& line) {
    if (g_data && g_data->m_pfnReport)
        g_data->m_pfnReport(client_id, line.c_str(), g_data->m_pUser);
}

void fail(const char* what) {
    g_failed = true;
    try {
        server_log(std::string("arbiter: the antibot module stopped after an internal error (") +
                   what + "); the server goes on without it");
    } catch (...) {
    }
}

// Runs `work` on the module, timed, with every exception caught.
template <class Work>
void guarded(Work&& work) {
    if (!g_module || g_failed) return;
    const auto start = std::chrono::steady_clock::now();
    try {
        work(*g_module);
        g_module->account_call(std::chrono::steady_clock::now() - start);
    } catch (const std::exception& e) {
        fail(e.what());
    } catch (...) {
        fail("unknown exception");
    }
}

bool sizes_match(const CAntibotVersion& theirs) {
    const CAntibotVersion ours = ANTIBOT_VERSION;
    return theirs.m_AbiVersion == ours.m_AbiVersion && theirs.m_Size == ours.m_Size &&
           theirs.m_SizeData == ours.m_SizeData &&
           theirs.m_SizeCharacterData == ours.m_SizeCharacterData &&
           theirs.m_SizeInputData == ours.m_SizeInputData &&
           theirs.m_SizeMapData == ours.m_SizeMapData &&
           theirs.m_SizeRoundData == ours.m_SizeRoundData;
}

}  // namespace

extern "C" {

int AntibotAbiVersion() {
    return ANTIBOT_ABI_VERSION;
}

void AntibotInit(CAntibotData* pCallbackData) {
    try {
        g_data = pCallbackData;
        g_failed = false;
        if (!g_data) return;
        if (!sizes_match(g_data->m_Version)) {
            server_log(
                "arbiter: the server's antibot structures are not those of ABI 5 as DDNet 16.4 "
                "lays them out; the module stays idle");
            return;
        }
        std::vector<std::string> problems;
        ab::ModuleSettings settings =
            ab::settings_from_environment(ARBITER_ANTIBOT_DEFAULT_CONFIG, problems);
        for (const std::string& p : problems)
            server_log("arbiter: " + p);
        g_module = std::make_unique<ab::Module>(
            std::move(settings), ab::ServerCallbacks{.log = server_log, .report = server_report});
    } catch (const std::exception& e) {
        fail(e.what());
    } catch (...) {
        fail("unknown exception");
    }
}

void AntibotRoundStart(CAntibotRoundData* pRoundData) {
    g_round.attach(pRoundData);
    guarded([&](ab::Module& m) { m.round_start(pRoundData ? &g_round : nullptr); });
}

void AntibotRoundEnd(void) {
    guarded([](ab::Module& m) { m.round_end(); });
    g_round.attach(nullptr);
}

void AntibotUpdateData(void) {}  // the round data is read when a callback needs it

void AntibotDestroy(void) {
    try {
        // The server is shutting down: its console may be gone already. What the host
        // says while it ends the match and unloads goes to stderr.
        if (g_module) g_module->detach_server();
        g_module.reset();
    } catch (...) {
    }
    g_round.attach(nullptr);
    g_data = nullptr;
}

void AntibotDump(void) {
    try {
        if (!g_module)
            server_log("arbiter: antibot module idle (see the lines logged at start)");
        else
            server_log(g_module->dump() + (g_failed ? " (stopped after an internal error)" : ""));
    } catch (...) {
    }
}

void AntibotOnPlayerInit(int) {}
void AntibotOnPlayerDestroy(int) {}
void AntibotOnSpawn(int ClientID) {
    guarded([&](ab::Module& m) { m.spawn(ClientID); });
}
// Hammer and hook events: DDNet's server computes every hit and hook itself, from the
// inputs the module already reads; there is no client claim in them to check.
void AntibotOnHammerFireReloading(int) {}
void AntibotOnHammerFire(int) {}
void AntibotOnHammerHit(int, int) {}
void AntibotOnDirectInput(int ClientID) {
    guarded([&](ab::Module& m) { m.direct_input(ClientID); });
}
void AntibotOnCharacterTick(int ClientID) {
    guarded([&](ab::Module& m) { m.character_tick(ClientID); });
}
void AntibotOnHookAttach(int, bool) {}
void AntibotOnEngineTick(void) {
    guarded([](ab::Module& m) { m.engine_tick(); });
}
void AntibotOnEngineClientJoin(int ClientID, bool Sixup) {
    guarded([&](ab::Module& m) { m.client_join(ClientID, Sixup); });
}
void AntibotOnEngineClientDrop(int ClientID, const char* pReason) {
    guarded([&](ab::Module& m) { m.client_drop(ClientID, pReason); });
}
bool AntibotOnEngineClientMessage(int ClientID, const void* pData, int Size, int) {
    if (!pData || Size <= 0 || Size > ab::kMaxChunkBytes) return false;
    guarded([&](ab::Module& m) {
        m.client_message(ClientID,
                         std::span(static_cast<const uint8_t*>(pData), static_cast<size_t>(Size)));
    });
    return false;
}
bool AntibotOnEngineServerMessage(int, const void*, int, int) {
    return false;
}
bool AntibotOnEngineSimulateClientMessage(int*, void*, int, int*, int*) {
    return false;
}

}  // extern "C"
