// An analyzer whose on_match_end lacks its Signals& parameter: without the SDK's check it
// would compile and silently lose ARB_CAP_MATCH_END. The test expects the compile to stop
// with a message that names the member and the signature the SDK wants.
#include <arbiter/sdk.hpp>

class NearMiss final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "near-miss",
                                              .version = "1.0.0",
                                              .contact = "-",
                                              .description = "a near miss",
                                              .model_class = arbiter::ModelClass::validation};
    explicit NearMiss(const arbiter::Context& context) : Analyzer(context) {}
    void on_batch(const arbiter::Batch&, arbiter::Signals&) override {}
    void on_match_end(const arbiter::MatchKey&) {}
};

ARBITER_PLUGIN(NearMiss);
