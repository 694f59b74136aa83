// Teehistorian files for the tests, written as DDNet 16.4's CTeeHistorian writes them
// (src/game/server/teehistorian.cpp): the same implicit ticks (a position record whose
// client id is not above the last one begins the next tick, else a TICK_SKIP), positions
// only when they changed, inputs as differences from the connection's input before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "teehistorian_reader.hpp"

namespace arbiter::ddnet::test {

class ThWriter {
  public:
    explicit ThWriter(
        const std::string& header_json =
            R"({"comment":"teehistorian@ddnet.tw","version":"2","version_minor":"4",)"
            R"("game_uuid":"a1eb7182-796e-3b3e-941d-38ca71b2a4a8",)"
            R"("server_version":"0.6.4, 16.4","start_time":"2026-11-28T04:49:44+0100",)"
            R"("map_name":"Kobra 3 Solo","game_type":"TestDDraceNetwork"})");

    // The phases of a tick, as the server calls them.
    void begin_tick(int32_t tick);
    void player(int32_t cid, int32_t x, int32_t y);  // a tee alive at x, y (end of the tick)
    void dead(int32_t cid);                          // no tee
    void input(int32_t cid, uint32_t connection, const ThInput& input);
    void message(int32_t cid, const std::vector<uint8_t>& bytes);
    void join(int32_t cid, bool sixup = false);  // JOINVER6/7, then JOIN
    void drop(int32_t cid, const std::string& reason);
    void console(int32_t cid, int32_t flag_mask, const std::string& command,
                 const std::vector<std::string>& args);
    void extra(const ThUuid& uuid, const std::vector<uint8_t>& payload);
    void finish();

    const std::vector<uint8_t>& bytes() const { return out_; }

  private:
    void ensure_tick();
    void ensure_tick_player(int32_t cid);
    void write_tick();

    std::vector<uint8_t> out_;
    int32_t tick_ = 0, last_written_tick_ = 0;
    bool tick_written_ = true;
    int32_t prev_max_cid_ = kThMaxClients, max_cid_ = kThMaxClients;
    struct Prev {
        bool alive = false;
        int32_t x = 0, y = 0;
        uint32_t connection = 0;
        ThInput input;
    };
    Prev prev_[kThMaxClients];
};

// Payload pieces of records and messages.
void put_int(std::vector<uint8_t>& out, int32_t value);
void put_string(std::vector<uint8_t>& out, const std::string& text);
void put_uuid(std::vector<uint8_t>& out, const ThUuid& uuid);
// Cl_StartInfo (or Cl_ChangeInfo) of the 0.6 protocol, as a client sends it.
std::vector<uint8_t> start_info(const std::string& name, bool change = false);

}  // namespace arbiter::ddnet::test
