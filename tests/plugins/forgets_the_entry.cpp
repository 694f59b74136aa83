// A whole analyzer whose author forgot the ARBITER_PLUGIN(ForgetsTheEntry); line, so
// nothing defines arbiter_plugin_entry. arbiter_add_plugin() stops its link (the SDK's
// test); built by hand, without that check, it is what check-plugin must explain.
#include <arbiter/sdk.hpp>

class ForgetsTheEntry final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-forgets-the-entry",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "a plugin without its entry",
                                              .model_class = arbiter::ModelClass::validation};

    explicit ForgetsTheEntry(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        for (const arbiter::fb::Event* event : batch.events())
            if (event->body_as_PositionUpdate())
                signals.emit({.player = event->player(),
                              .code = "test.position",
                              .score = 0.1,
                              .confidence = 1.0,
                              .evidence = arbiter::Evidence()});
    }
};

// No ARBITER_PLUGIN(ForgetsTheEntry); here: that is the mistake under test.
