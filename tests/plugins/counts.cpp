// A plugin whose every signal depends on everything it has seen: on each batch it reports,
// on player 1 of the batch's match, "test.count" with the events seen so far (over all
// batches, carried in its state) in the evidence and in the score. A reload that loses a
// call, or makes one twice, changes every later signal.
//
// Its save can be made to misbehave in a forked copy of the host (a process other than
// the one that created it), where a reload's handover saves (SnapshotHandover):
// - `forked_save` = "ok" (default), "refuse" (throws StateError, in any process), or
//   "die" (ends the forked copy, as a plugin whose save needs a thread of its own would
//   hang or fail there);
// - `forked_save_waits_for`: a path; the save in a forked copy waits (at most 60 s) until
//   that file exists, so that a test knows the handover is still under way.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <arbiter/sdk.hpp>

namespace {

class Counts final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-counts",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "counts the events it has seen",
                                              .model_class = arbiter::ModelClass::validation};

    explicit Counts(const arbiter::Context& context)
        : Analyzer(context),
          forked_save_(context.config.string("forked_save", "ok")),
          waits_for_(context.config.string("forked_save_waits_for", "")),
          created_by_(::getpid()) {
        context.config.reject_unknown_keys();
        if (forked_save_ != "ok" && forked_save_ != "refuse" && forked_save_ != "die")
            throw arbiter::ConfigError("forked_save", "expected \"ok\", \"refuse\" or \"die\"");
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        seen_ += static_cast<int64_t>(batch.events().size());
        signals.emit({.player = 1,
                      .code = "test.count",
                      .score = static_cast<double>(seen_ % 97) / 100.0,
                      .confidence = 1.0,
                      .evidence = arbiter::Evidence().add("events_seen", seen_)});
    }

    std::vector<uint8_t> save_state() {
        if (forked_save_ == "refuse") throw arbiter::StateError("this test plugin refuses to save");
        if (::getpid() != created_by_) {
            if (forked_save_ == "die") std::_Exit(3);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (!waits_for_.empty() && !std::filesystem::exists(waits_for_) &&
                   std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        arbiter::StateWriter out("CNTS", 1);
        out.put<int64_t>(seen_);
        return out.finish();
    }

    void restore_state(std::span<const uint8_t> blob) {
        arbiter::StateReader in(blob, "CNTS", 1);
        const auto seen = in.get<int64_t>();
        in.finish();
        seen_ = seen;
    }

  private:
    std::string forked_save_;
    std::string waits_for_;
    pid_t created_by_;
    int64_t seen_ = 0;
};

}  // namespace

ARBITER_PLUGIN(Counts);
