// Synthetic demos for the tests: items of the 0.6 protocol laid out as DDNet's server
// writes them, and a demo of them written tick by tick as DDNet's recorder does (a
// keyframe every 250 ticks, deltas between).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "demo_codec.hpp"
#include "snapshot.hpp"

namespace arbiter::ddnet::test {

struct Tee {
    int32_t id = 0;
    int32_t tick = 0;  // its dead-reckoning tick; 0: the snapshot's
    int32_t x = 0, y = 0, vel_x = 0, vel_y = 0, angle = 0, direction = 0, jumped = 0;
    int32_t hook_state = 0, weapon = 1, attack_tick = 0;
};

// A Character item (type 9, 22 integers).
SnapItem character(const Tee& tee);
// A ClientInfo item (type 11, 17 integers) naming client `id`.
SnapItem client_info(int32_t id, const std::string& name);
// A PlayerInfo item (type 10).
SnapItem player_info(int32_t id, bool local);
// DDNet's character item, with its type map: two items.
std::vector<SnapItem> ddnet_character(int32_t id, int32_t local_type, int32_t target_x,
                                      int32_t target_y);
// Sv_KillMsg as message bytes.
std::vector<uint8_t> kill_message(int32_t killer, int32_t victim, int32_t weapon);

// Writes snapshots as a recorder does: a keyframe (full snapshot) at the first and then
// whenever `keyframe_every` ticks have passed, deltas between.
class Recorder {
  public:
    explicit Recorder(int version = 6, int32_t keyframe_every = 250)
        : writer_(version, "testmap"), keyframe_every_(keyframe_every) {}
    void record(int32_t tick, const Snapshot& snapshot);
    void message(int32_t tick, const std::vector<uint8_t>& bytes);
    const std::vector<uint8_t>& bytes() const { return writer_.bytes(); }
    DemoWriter& writer() { return writer_; }

  private:
    DemoWriter writer_;
    int32_t keyframe_every_;
    int32_t last_keyframe_ = -1;
    int32_t last_tick_ = -1;
    Snapshot last_;
};

Snapshot snapshot_of(const std::vector<SnapItem>& items);

}  // namespace arbiter::ddnet::test
