// A plugin that fills the host's metrics: on the first batch of each match it counts
// `series` distinct names once each ("series.0", "series.1", ...; default 1000), as a
// plugin that keys a metric by player or by match would. /metrics then has that many
// lines of its own to render. It reports no signals.
#include <string>

#include <arbiter/sdk.hpp>

namespace {

class ManyMetrics final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-many-metrics",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "counts many distinct metrics",
                                              .model_class = arbiter::ModelClass::validation};

    explicit ManyMetrics(const arbiter::Context& context)
        : Analyzer(context),
          series_(context.config.integer("series", 1000, arbiter::Range::between(1, 10'000'000))) {
        context.config.reject_unknown_keys();
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals&) override {
        if (batch.sequence() != 0) return;
        for (int64_t i = 0; i < series_; ++i)
            host().count("series." + std::to_string(i));
    }

  private:
    int64_t series_;
};

}  // namespace

ARBITER_PLUGIN(ManyMetrics);
