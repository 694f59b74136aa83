// A plugin whose constructor fails for a reason of its own: the host must report that
// reason (the plugin's last error), not only a status code.
#include <stdexcept>

#include <arbiter/sdk.hpp>

namespace {

class CreateFails final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-create-fails",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "cannot reach its database",
                                              .model_class = arbiter::ModelClass::validation};

    explicit CreateFails(const arbiter::Context& context) : Analyzer(context) {
        throw std::runtime_error("database unreachable");
    }

    void on_batch(const arbiter::Batch&, arbiter::Signals&) override {}
};

}  // namespace

ARBITER_PLUGIN(CreateFails);
