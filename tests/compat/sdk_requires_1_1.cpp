// The echo analyzer built with the SDK, declaring that it needs ABI 1.1: the 1.0 host
// must refuse it by name and version, the current host must run it.
#include <arbiter/sdk.hpp>

namespace {

class RequiresOneOne final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "compat-sdk-requires-1-1",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "needs ABI 1.1",
                                              .model_class = arbiter::ModelClass::validation,
                                              .requires_abi_minor = 1};

    explicit RequiresOneOne(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        for (const arbiter::fb::Event* event : batch.events()) {
            if (event->player() != 1 || !event->body_as_PositionUpdate()) continue;
            signals.emit({.player = 1,
                          .code = "test.echo",
                          .score = 0.9,
                          .confidence = 1.0,
                          .evidence = arbiter::Evidence()});
        }
    }
};

}  // namespace

ARBITER_PLUGIN(RequiresOneOne);
