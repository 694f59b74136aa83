// A plugin that does nothing: the whole path (build, ingest, dispatch through the C ABI,
// aggregation) with no analysis, for arbiter-bench.
#include <arbiter/sdk.hpp>

namespace {

class NoopAnalyzer final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{
        .name = "noop",
        .version = "0.1.0",
        .contact = "the Arbiter project (see its README)",
        .description = "does nothing: the cost of the path itself, for benchmarks",
        .model_class = arbiter::ModelClass::validation,
        .shard_by_match = true,
    };

    explicit NoopAnalyzer(const arbiter::Context& context) : Analyzer(context) {}

    void on_batch(const arbiter::Batch& /*batch*/, arbiter::Signals& /*signals*/) override {}
};

}  // namespace

ARBITER_PLUGIN(NoopAnalyzer);
