#include "input_message.hpp"

#include "varint.hpp"

namespace arbiter::ddnet::antibot {

std::optional<InputMessage> read_input_message(std::span<const uint8_t> chunk, bool sixup) {
    if (chunk.empty() || chunk.size() > static_cast<size_t>(kMaxChunkBytes)) return std::nullopt;
    size_t pos = 0;
    const auto id = read_varint(chunk, pos);
    if (!id || (*id & 1) == 0 || (*id >> 1) != (sixup ? kNetMsgInputSixup : kNetMsgInput))
        return std::nullopt;
    // The acknowledged snapshot (not needed here) and the tick the input is meant for.
    const auto acked = read_varint(chunk, pos);
    const auto intended = read_varint(chunk, pos);
    const auto size = read_varint(chunk, pos);
    if (!acked || !intended || !size) return std::nullopt;
    const int32_t ints = *size / 4;
    // The server refuses more than MAX_INPUT_SIZE integers; fewer than the ten fields of
    // an input would leave the server's copy partly stale, which the module cannot follow.
    if (ints > kMaxInputInts || ints < 10) return std::nullopt;
    int32_t fields[10] = {};
    for (int32_t& field : fields) {
        const auto value = read_varint(chunk, pos);
        if (!value) break;  // cut short: DDNet's unpacker reads the rest as 0
        field = *value;
    }
    InputMessage message;
    static_cast<PlayerInput&>(message) = PlayerInput{.direction = fields[0],
                                                     .target_x = fields[1],
                                                     .target_y = fields[2],
                                                     .jump = fields[3],
                                                     .fire = fields[4],
                                                     .hook = fields[5],
                                                     .player_flags = fields[6],
                                                     .wanted_weapon = fields[7],
                                                     .next_weapon = fields[8],
                                                     .prev_weapon = fields[9]};
    message.intended_tick = *intended;
    return message;
}

int count_presses(int32_t previous, int32_t current) {
    constexpr int32_t kMask = 0x3f;  // INPUT_STATE_MASK
    int presses = 0;
    int32_t i = previous & kMask;
    const int32_t end = current & kMask;
    // At most 63 steps: the counter wraps at 64.
    while (i != end) {
        i = (i + 1) & kMask;
        if (i & 1) ++presses;
    }
    return presses;
}

}  // namespace arbiter::ddnet::antibot
