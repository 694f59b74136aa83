// A plugin that crashes the process on its first batch: what `arbiter check-plugin` must
// survive (it runs plugin code in a child) and report as a verdict. Never loaded into a
// host in these tests: only an isolated mode could contain it there.
#include <csignal>

#include <arbiter/sdk.hpp>

namespace {

class Crashes final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-crashes",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "raises SIGSEGV in on_batch",
                                              .model_class = arbiter::ModelClass::validation};

    explicit Crashes(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch&, arbiter::Signals&) override { std::raise(SIGSEGV); }
};

}  // namespace

ARBITER_PLUGIN(Crashes);
