// A plugin that throws from on_batch on every batch of even sequence number, after
// emitting one signal ("test.before_throw"), and works normally on the others (one
// "test.after" signal per batch). The SDK turns the exception into ARB_ERR_INTERNAL;
// the host must log and count it, keep the signal emitted before it, and go on
// sending this plugin batches.
#include <stdexcept>
#include <string>

#include <arbiter/sdk.hpp>

namespace {

class Throws final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-throws",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "throws on every other batch",
                                              .model_class = arbiter::ModelClass::behavioural};

    explicit Throws(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        if (batch.sequence() % 2 == 0) {
            signals.emit({.player = 2,
                          .code = "test.before_throw",
                          .score = 0.5,
                          .confidence = 1.0,
                          .evidence = {}});
            throw std::runtime_error("index out of range in batch " +
                                     std::to_string(batch.sequence()));
        }
        signals.emit({.player = 2,
                      .code = "test.after",
                      .score = 0.25,
                      .confidence = 1.0,
                      .evidence = arbiter::Evidence().add("sequence", batch.sequence())});
    }
};

}  // namespace

ARBITER_PLUGIN(Throws);
