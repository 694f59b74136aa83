// The DDNet demo reader (`arbiter import X.demo`) on any bytes: header, chunk framing,
// Huffman, varints, snapshots, deltas against the snapshot before, items and messages. The
// visitor reads every field handed to it, so that a bad one shows under the sanitizers.
// Seeds (fuzz/corpus/ddnet_demo): small demos of versions 4, 5 and 6 written by
// adapters/ddnet/tests/demo_builder.hpp's Recorder, one cut short and one damaged.
#include "demo_reader.hpp"
#include "fuzz_input.hpp"

namespace {

struct Touch final : arbiter::ddnet::DemoVisitor {
    uint64_t sum = 0;
    void on_snapshot(const arbiter::ddnet::DemoSnapshot& s) override {
        for (const auto& c : s.characters)
            sum += static_cast<uint64_t>(c.x) + static_cast<uint64_t>(c.angle) +
                   static_cast<uint64_t>(c.target_x.value_or(0));
        for (const auto& c : s.clients)
            sum += c.name.size() + c.clan.size() + c.skin.size();
        sum += s.players.size() + s.items;
    }
    void on_message(const arbiter::ddnet::DemoMessage& m) override {
        sum += static_cast<uint64_t>(m.id) + (m.kill ? static_cast<uint64_t>(m.kill->victim) : 0);
    }
};

}  // namespace

// Keeps the reads the visitor made.
volatile uint64_t ddnet_demo_sink = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Touch touch;
    const auto result = arbiter::ddnet::read_demo({data, size}, touch);
    ddnet_demo_sink = touch.sum + result.chunks + result.problems.size();
    return 0;
}
