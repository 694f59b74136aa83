// A plugin slower than any relay: it sleeps `delay_us` (default 1000) on every batch and
// reports nothing. The serve tests use it to make the host fall behind a fast sender,
// so that push-back, a SIGTERM with events queued and a swap under load really happen.
// `create_delay_ms` (default 0) makes its creation slow too, as a plugin that loads a
// large model is: a load of it must not hold the stream. `first_batch_delay_ms` (default
// 0) stalls its first batch alone, so that a test can fill the host's queue and hold it
// full.
#include <chrono>
#include <thread>
#include <utility>

#include <arbiter/sdk.hpp>

namespace {

class Slow final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-slow",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "sleeps on every batch",
                                              .model_class = arbiter::ModelClass::validation};

    explicit Slow(const arbiter::Context& context)
        : Analyzer(context),
          delay_(context.config.integer("delay_us", 1000, arbiter::Range::between(0, 1'000'000))) {
        const int64_t create_delay_ms =
            context.config.integer("create_delay_ms", 0, arbiter::Range::between(0, 60'000));
        first_batch_delay_ms_ =
            context.config.integer("first_batch_delay_ms", 0, arbiter::Range::between(0, 60'000));
        context.config.reject_unknown_keys();
        std::this_thread::sleep_for(std::chrono::milliseconds(create_delay_ms));
    }

    void on_batch(const arbiter::Batch&, arbiter::Signals&) override {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::exchange(first_batch_delay_ms_, 0)));
        std::this_thread::sleep_for(std::chrono::microseconds(delay_));
    }

  private:
    int64_t delay_;
    int64_t first_batch_delay_ms_ = 0;
};

}  // namespace

ARBITER_PLUGIN(Slow);
