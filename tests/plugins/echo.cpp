// The good test plugin: a predictable signal for every position update of player 1
// (code "test.echo", score 0.9, confidence 1), so a test can show that this plugin
// goes on working beside a broken one, batch after batch. It also reports each InputLost
// the host sends it (schema 1.1) as "test.input_lost" on player 1, with the range.
#include <arbiter/sdk.hpp>

// The compatibility tests build it again as a plugin that requires ABI 1.1, and as one
// that requires event schema 1.2.
#ifndef ECHO_NAME
#define ECHO_NAME "test-echo"
#endif
#ifndef ECHO_REQUIRES_ABI_MINOR
#define ECHO_REQUIRES_ABI_MINOR 0
#endif
#ifndef ECHO_REQUIRES_SCHEMA_MINOR
#define ECHO_REQUIRES_SCHEMA_MINOR 0
#endif

namespace {

class Echo final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = ECHO_NAME,
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "echoes player 1's position updates",
                                              .model_class = arbiter::ModelClass::validation,
                                              .requires_abi_minor = ECHO_REQUIRES_ABI_MINOR,
                                              .requires_schema_minor = ECHO_REQUIRES_SCHEMA_MINOR};

    explicit Echo(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        for (const arbiter::fb::Event* event : batch.events()) {
            if (const auto* lost = event->body_as_InputLost()) {
                signals.emit({.player = 1,
                              .code = "test.input_lost",
                              .score = 0.1,
                              .confidence = 1.0,
                              .evidence = arbiter::Evidence()
                                              .add("first_sequence", lost->first_sequence())
                                              .add("last_sequence", lost->last_sequence())
                                              .add("batch_sequence", batch.sequence())});
                continue;
            }
            if (event->player() != 1 || !event->body_as_PositionUpdate()) continue;
            signals.emit({.player = 1,
                          .code = "test.echo",
                          .score = 0.9,
                          .confidence = 1.0,
                          .evidence = arbiter::Evidence().add("sequence", batch.sequence())});
        }
    }
};

}  // namespace

ARBITER_PLUGIN(Echo);
