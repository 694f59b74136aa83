// A plugin that checks its config: `threshold` must lie in [0, 1], and `limits.window_s`
// must be positive. A bad value makes create fail with ARB_ERR_CONFIG and a last error
// "key.path: problem", which the host turns into the key's file:line:column.
#include <arbiter/sdk.hpp>

namespace {

class ConfigRefused final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-config-refused",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "checks its threshold",
                                              .model_class = arbiter::ModelClass::validation,
                                              // Its own refusals are what the tests place;
                                              // the host's schema check would come first.
                                              .describe_config = false};

    explicit ConfigRefused(const arbiter::Context& context)
        : Analyzer(context),
          threshold_(context.config.number("threshold", 0.5, arbiter::Range::between(0.0, 1.0))),
          window_s_(
              context.config.table("limits").number("window_s", 1.0, arbiter::Range::positive())) {}

    void on_batch(const arbiter::Batch&, arbiter::Signals&) override {}

  private:
    double threshold_;
    double window_s_;
};

}  // namespace

ARBITER_PLUGIN(ConfigRefused);
