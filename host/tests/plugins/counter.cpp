// A plugin for the reload tests, built twice (ARBITER_COUNTER_VERSION "1.0.0" and
// "2.0.0"). It counts each player's position updates and reports "test.count" when a
// player reaches `report_at` of them: a check that needs a long history, which only
// fires across a reload if the history was carried over. Its evidence names how many
// instances this copy of the library has created, which shows whether a reload got a
// fresh library or one still in memory.
#include <map>

#include <arbiter/sdk.hpp>

namespace {

// Deliberately library-global: a library loaded afresh starts it at zero.
int instances_created = 0;

class Counter final : public arbiter::Analyzer {
public:
    static constexpr arbiter::PluginInfo info{.name = "counter",
                                              .version = ARBITER_COUNTER_VERSION,
                                              .contact = "tests",
                                              .description = "counts position updates",
                                              .model_class = arbiter::ModelClass::validation};

    explicit Counter(const arbiter::Context& context)
        : Analyzer(context), report_at_(context.config.integer("report_at", 100, arbiter::Range::at_least(1))) {
        context.config.reject_unknown_keys();
        // The SDK constructs one analyzer on a describing table to record the config
        // schema; that one is no instance the host created.
        if (!context.config.is_describing()) ++instances_created;
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        for (const auto* event : batch.events()) {
            if (!event->body_as_PositionUpdate()) continue;
            int64_t seen = ++counts_[event->player()];
            if (seen != report_at_) continue;
            signals.emit({.player = event->player(),
                          .code = "test.count",
                          .score = 1.0,
                          .confidence = 1.0,
                          .evidence = arbiter::Evidence()
                                          .add("seen", seen)
                                          .add("version", ARBITER_COUNTER_VERSION)
                                          .add("instances_created_by_this_library", instances_created)});
        }
    }

    void configure(const arbiter::Context& context) {
        auto report_at = context.config.integer("report_at", 100, arbiter::Range::at_least(1));
        context.config.reject_unknown_keys();
        report_at_ = report_at;
    }

    std::vector<uint8_t> save_state() {
        arbiter::StateWriter out("CNT1", 1);
        out.put<uint64_t>(counts_.size());
        for (auto [player, count] : counts_) {
            out.put<uint32_t>(player);
            out.put<int64_t>(count);
        }
        return out.finish();
    }

    void restore_state(std::span<const uint8_t> blob) {
        arbiter::StateReader in(blob, "CNT1", 1);
        std::map<uint32_t, int64_t> counts;
        for (uint64_t n = in.get_count(12); n > 0; --n) {
            uint32_t player = in.get<uint32_t>();
            counts[player] = in.get<int64_t>();
        }
        in.finish();
        counts_ = std::move(counts);
    }

private:
    int64_t report_at_;
    std::map<uint32_t, int64_t> counts_;
};

}  // namespace

ARBITER_PLUGIN(Counter);
