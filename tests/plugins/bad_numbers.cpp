// A plugin that reports numbers no signal may carry, once per batch: a NaN score, a
// score of 1.5, an infinite confidence, and a negative confidence; and one valid
// signal, so a test can tell "dropped" from "never called". It counts how many of its
// signals the host refused (Signals::emit returns false), as metric "refused".
#include <limits>

#include <arbiter/sdk.hpp>

namespace {

class BadNumbers final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-bad-numbers",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "reports numbers out of range",
                                              .model_class = arbiter::ModelClass::validation};

    explicit BadNumbers(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch&, arbiter::Signals& signals) override {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        const arbiter::Signal bad[] = {
            {.player = 3,
             .code = "test.nan_score",
             .score = nan,
             .confidence = 1.0,
             .evidence = {}},
            {.player = 3,
             .code = "test.score_above_one",
             .score = 1.5,
             .confidence = 1.0,
             .evidence = {}},
            {.player = 3,
             .code = "test.infinite_confidence",
             .score = 1.0,
             .confidence = inf,
             .evidence = {}},
            {.player = 3,
             .code = "test.negative_confidence",
             .score = 1.0,
             .confidence = -0.5,
             .evidence = {}},
        };
        for (const auto& signal : bad)
            if (!signals.emit(signal)) host().count("refused");
        if (!signals.emit({.player = 3,
                           .code = "test.valid",
                           .score = 0.2,
                           .confidence = 1.0,
                           .evidence = {}}))
            host().count("refused");
    }
};

}  // namespace

ARBITER_PLUGIN(BadNumbers);
