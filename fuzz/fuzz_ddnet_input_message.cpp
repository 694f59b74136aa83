// What the DDNet antibot module (adapters/ddnet/antibot) reads from outside the fixed
// structures of the round data: any client's network chunks (the input message reader)
// and the text the server copies from clients (names, drop reasons) into events. The
// first byte picks the protocol (0.6 or 0.7) the chunk is read as. Checked: the text that
// comes out is valid UTF-8 without control characters (cleaning it again changes
// nothing), and the press counter stays within its 6-bit counter's bound.
// Seeds (fuzz/corpus/ddnet_input_message): input messages of both protocols, cut short,
// oversized, and names that are not UTF-8.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "input_message.hpp"
#include "text.hpp"

namespace ab = arbiter::ddnet::antibot;

volatile int64_t ddnet_input_message_sink = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const bool sixup = (data[0] & 1) != 0;
    const std::span<const uint8_t> chunk(data + 1, size - 1);
    if (const auto input = ab::read_input_message(chunk, sixup)) {
        const int presses = ab::count_presses(input->fire, input->next_weapon);
        if (presses < 0 || presses > 32) std::abort();
        ddnet_input_message_sink =
            int64_t{input->direction} + input->target_x + input->intended_tick + presses;
    }
    const std::string_view text = arbiter::fuzz::as_text(data + 1, size - 1);
    const std::string name = ab::bounded_c_string(text.data(), text.size());
    if (name.size() > text.size()) std::abort();
    const std::string clean = ab::to_valid_utf8(text);
    if (ab::to_valid_utf8(clean) != clean) std::abort();
    ddnet_input_message_sink =
        ddnet_input_message_sink + static_cast<int64_t>(clean.size() + name.size());
    return 0;
}
