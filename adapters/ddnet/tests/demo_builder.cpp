#include "demo_builder.hpp"

#include "varint.hpp"

namespace arbiter::ddnet::test {

SnapItem character(const Tee& t) {
    return {9,
            t.id,
            {t.tick,       t.x,      t.y, t.vel_x,      t.vel_y, t.angle, t.direction, t.jumped, -1,
             t.hook_state, 0,        t.x, t.y,          0,       0,       0,           10,       0,
             10,           t.weapon, 0,   t.attack_tick}};
}

SnapItem client_info(int32_t id, const std::string& name) {
    std::vector<int32_t> data = string_to_ints(name, 4);
    const std::vector<int32_t> clan = string_to_ints("clan", 3);
    data.insert(data.end(), clan.begin(), clan.end());
    data.push_back(276);  // country
    const std::vector<int32_t> skin = string_to_ints("default", 6);
    data.insert(data.end(), skin.begin(), skin.end());
    data.insert(data.end(), {0, 0, 0});
    return {11, id, data};
}

SnapItem player_info(int32_t id, bool local) {
    return {10, id, {local ? 1 : 0, id, 0, 0, 30}};
}

std::vector<SnapItem> ddnet_character(int32_t id, int32_t local_type, int32_t target_x,
                                      int32_t target_y) {
    SnapItem map{0,
                 local_type,
                 {0x76ce455b, static_cast<int32_t>(0xf9eb3a48u), static_cast<int32_t>(0xadd7e04bu),
                  static_cast<int32_t>(0x941d045cu)}};
    SnapItem item{local_type, id, {0, 0, 2, -1, 0, -1, -1, -1, target_x, target_y, -1}};
    return {map, item};
}

std::vector<uint8_t> kill_message(int32_t killer, int32_t victim, int32_t weapon) {
    std::vector<uint8_t> out;
    write_varint(out, 4 << 1);  // Sv_KillMsg, a game message
    for (int32_t v : {killer, victim, weapon, 0})
        write_varint(out, v);
    return out;
}

void Recorder::record(int32_t tick, const Snapshot& snapshot) {
    const bool keyframe = last_keyframe_ < 0 || tick - last_keyframe_ > keyframe_every_;
    writer_.tick(tick, keyframe);
    if (keyframe) {
        writer_.snapshot(snapshot);
        last_keyframe_ = tick;
    } else {
        writer_.delta(last_, snapshot);
    }
    last_ = snapshot;
    last_tick_ = tick;
}

void Recorder::message(int32_t, const std::vector<uint8_t>& bytes) {
    writer_.message(bytes);
}

Snapshot snapshot_of(const std::vector<SnapItem>& items) {
    Snapshot s;
    for (const SnapItem& item : items)
        s.add(item);
    return s;
}

}  // namespace arbiter::ddnet::test
