// A plugin whose every signal depends on everything it has seen of a match: on each batch
// it reports, on player 1 of the batch's match, "test.count" with the events of that match
// seen so far (carried in its state) in the evidence and in the score. A reload that loses
// a call, or makes one twice, changes every later signal of its match. Counting per match,
// it runs in shards ([host] threads), as a sharded reload's tests need.
//
// Its save can be made to misbehave in a forked copy of the host (a process other than
// the one that created it), where a reload's handover saves (SnapshotHandover):
// - `forked_save` = "ok" (default), "refuse" (throws StateError, in any process), or
//   "die" (ends the forked copy, as a plugin whose save needs a thread of its own would
//   hang or fail there);
// - `forked_save_waits_for`: a path; the save in a forked copy waits (at most 60 s) until
//   that file exists, so that a test knows the handover is still under way;
// - `forked_save_marks`: a path the save in a forked copy creates first, so that a test
//   knows a fork has been made;
// - `batch_us`: each batch takes at least this long (default 0), so that a catch-up takes
//   as long as the calls it makes again, as a real plugin's would.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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
                                              .model_class = arbiter::ModelClass::validation,
                                              .shard_by_match = true};

    explicit Counts(const arbiter::Context& context)
        : Analyzer(context),
          forked_save_(context.config.string("forked_save", "ok")),
          waits_for_(context.config.string("forked_save_waits_for", "")),
          marks_(context.config.string("forked_save_marks", "")),
          batch_us_(context.config.integer("batch_us", 0, arbiter::Range::between(0, 1e6))),
          created_by_(::getpid()) {
        context.config.reject_unknown_keys();
        if (forked_save_ != "ok" && forked_save_ != "refuse" && forked_save_ != "die")
            throw arbiter::ConfigError("forked_save", "expected \"ok\", \"refuse\" or \"die\"");
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        if (batch_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(batch_us_));
        int64_t& seen = seen_[{std::string(batch.relay_id()), batch.match_id()}];
        seen += static_cast<int64_t>(batch.events().size());
        signals.emit({.player = 1,
                      .code = "test.count",
                      .score = static_cast<double>(seen % 97) / 100.0,
                      .confidence = 1.0,
                      .evidence = arbiter::Evidence().add("events_seen", seen)});
    }

    std::vector<uint8_t> save_state() {
        const bool in_forked_copy = ::getpid() != created_by_;
        if (in_forked_copy && !marks_.empty()) std::ofstream(marks_).put('\n');
        if (forked_save_ == "refuse") throw arbiter::StateError("this test plugin refuses to save");
        if (in_forked_copy) {
            if (forked_save_ == "die") std::_Exit(3);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (!waits_for_.empty() && !std::filesystem::exists(waits_for_) &&
                   std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        arbiter::StateWriter out("CNTS", 2);
        out.put<uint64_t>(seen_.size());
        for (const auto& [match, seen] : seen_) {
            out.put_string(match.first);
            out.put<uint64_t>(match.second);
            out.put<int64_t>(seen);
        }
        return out.finish();
    }

    void restore_state(std::span<const uint8_t> blob) {
        arbiter::StateReader in(blob, "CNTS", 2);
        std::map<std::pair<std::string, uint64_t>, int64_t> seen;
        const uint64_t matches = in.get_count(8 + 8 + 8);
        for (uint64_t i = 0; i < matches; ++i) {
            std::string relay = in.get_string();
            const auto match = in.get<uint64_t>();
            seen[{std::move(relay), match}] = in.get_counter("events seen");
        }
        in.finish();
        seen_ = std::move(seen);
    }

  private:
    std::string forked_save_;
    std::string waits_for_;
    std::string marks_;
    int64_t batch_us_;
    pid_t created_by_;
    std::map<std::pair<std::string, uint64_t>, int64_t> seen_;
};

}  // namespace

ARBITER_PLUGIN(Counts);
