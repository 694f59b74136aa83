// A client's input, read from the network chunk the server hands the antibot module
// (AntibotOnEngineClientMessage) before it processes it itself.
//
// ABI 5 gives the module only the aim targets of a character's last three inputs; the
// rest of the input (direction, jump, fire, hook, weapon) is in the client's NETMSG_INPUT
// system message, which the module reads here as DDNet 16.4's server does
// (src/engine/server/server.cpp, ProcessClientPacket): a message id, packed as
// (id << 1) | system, then the acknowledged snapshot, the intended tick, the input's size
// in bytes, and size / 4 integers of CNetObj_PlayerInput, every integer a variable-length
// one (../../src/varint.hpp). A 0.7 ("sixup") client numbers the message 20, a 0.6 one 16.
//
// The bytes come from any client on the internet: nothing here trusts them. A chunk that
// is not an input message, or whose header is cut short or claims more than the server
// accepts, is no input; integers missing at the end of the payload read as 0, as DDNet's
// unpacker gives them to the server (which uses such an input all the same).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace arbiter::ddnet::antibot {

// CNetObj_PlayerInput of the 0.6 and 0.7 protocols, field for field.
struct PlayerInput {
    int32_t direction = 0;  // -1 left, 0, 1 right
    int32_t target_x = 0;   // aim target relative to the tee, in game units
    int32_t target_y = 0;
    int32_t jump = 0;  // 1 while held
    int32_t fire = 0;  // a counter: each press and each release adds one (bit 0: held)
    int32_t hook = 0;  // 1 while held
    int32_t player_flags = 0;
    int32_t wanted_weapon = 0;  // 1 + weapon index, 0: no change wanted
    int32_t next_weapon = 0;    // counters, like fire
    int32_t prev_weapon = 0;

    bool operator==(const PlayerInput&) const = default;
};

// An input message: the input, and the tick the client meant it for.
struct InputMessage : PlayerInput {
    int32_t intended_tick = 0;
};

constexpr int32_t kNetMsgInput = 16;       // 0.6: NETMSG_INPUT (src/engine/shared/protocol.h)
constexpr int32_t kNetMsgInputSixup = 20;  // 0.7: the same message's number
constexpr int32_t kMaxInputInts = 128;     // the server refuses a larger input (MAX_INPUT_SIZE)
constexpr int kMaxChunkBytes = 1400;       // NET_MAX_PAYLOAD: no chunk is longer

// The input in `chunk`, when it is a well-formed input message of a client of the given
// protocol; nothing otherwise.
std::optional<InputMessage> read_input_message(std::span<const uint8_t> chunk, bool sixup);

// The presses in a state counter's change (fire, next/prev weapon): DDNet's CountInput,
// bounded as it is by the counter's 6 bits (INPUT_STATE_MASK).
int count_presses(int32_t previous, int32_t current);

}  // namespace arbiter::ddnet::antibot
