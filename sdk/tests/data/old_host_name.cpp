// A plugin written before the SDK's Host became HostServices: it still builds, and the
// compiler names the new spelling. The test expects the warning and a clean exit.
#include <arbiter/sdk.hpp>

class OldName final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "old-name",
                                              .version = "1.0.0",
                                              .contact = "-",
                                              .description = "uses arbiter::Host",
                                              .model_class = arbiter::ModelClass::validation};
    explicit OldName(const arbiter::Context& context) : Analyzer(context), services_(host()) {}
    void on_batch(const arbiter::Batch&, arbiter::Signals&) override { services_.info("batch"); }

  private:
    const arbiter::Host& services_;
};

ARBITER_PLUGIN(OldName);
