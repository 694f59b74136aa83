// In-process test harness for analyzers: feed an analyzer events built in code and
// look at the signals it reports, in a GoogleTest (or any) test.
//
// The harness goes through the same C glue the host uses (negotiation, create, the
// trampolines), with a host of its own that records logs and metrics and keeps the
// relay clock, so a test exercises what a real host would call.
//
//   arbiter::testing::Harness<MyAnalyzer> harness(arbiter::ConfigValue::table({...}));
//   ASSERT_TRUE(harness.ok()) << harness.error();
//   auto signals = harness.feed(builder.finish());
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <arbiter/arbiter_plugin.h>
#include <arbiter/arbiter_signal_rules.hpp>
#include <arbiter/sdk/config_builder.hpp>
#include <arbiter/sdk/events.hpp>
#include <arbiter/sdk/plugin.hpp>

namespace arbiter::testing {

struct RecordedSignal {
    uint32_t player = 0;
    std::string code;
    double score = 0.0;
    double confidence = 0.0;
    bool tripwire = false;
    std::string evidence;
    int64_t relay_time_us = 0;  // the clock when it was reported
};

struct LogLine {
    uint32_t level = 0;
    std::string message;
};

// The harness's stand-in for the host's services.
class TestHost {
  public:
    int64_t relay_time_us = 0;
    std::vector<LogLine> logs;
    std::map<std::string, double> metrics;

    arb_host* handle() { return reinterpret_cast<arb_host*>(this); }
    static const arb_host_services* services() {
        static const arb_host_services table = {sizeof(arb_host_services), &log, &clock, &add,
                                                &set};
        return &table;
    }

  private:
    static TestHost& self(arb_host* host) { return *reinterpret_cast<TestHost*>(host); }
    static void log(arb_host* host, uint32_t level, arb_string message) {
        self(host).logs.push_back({level, std::string(message.data, message.size)});
    }
    static int64_t clock(arb_host* host) { return self(host).relay_time_us; }
    static void add(arb_host* host, arb_string name, double value) {
        self(host).metrics[std::string(name.data, name.size)] += value;
    }
    static void set(arb_host* host, arb_string name, double value) {
        self(host).metrics[std::string(name.data, name.size)] = value;
    }
};

template <class T>
class Harness {
  public:
    explicit Harness(const ConfigValue& config = ConfigValue::table({}),
                     std::vector<uint8_t> baseline = {})
        : config_(config.to_flexbuffer()), baseline_(std::move(baseline)) {
        arb_negotiation negotiation{};
        negotiation.struct_size = sizeof negotiation;
        negotiation.host_abi_major = ARB_ABI_VERSION_MAJOR;
        negotiation.host_abi_minor = ARB_ABI_VERSION_MINOR;
        negotiation.host_services = TestHost::services();
        negotiation.host = host_.handle();
        negotiation.plugin_abi_minor_required = ARB_MINOR_ABSENT;
        negotiation.schema_minor_required = ARB_MINOR_ABSENT;
        negotiation.host_schema_major = ARB_SCHEMA_VERSION_MAJOR;
        negotiation.host_schema_minor = ARB_SCHEMA_VERSION_MINOR;
        if (detail::negotiate<T>(&negotiation) != ARB_OK)
            throw std::logic_error("negotiation failed inside the harness");
        negotiation_ = negotiation;
        api_ = negotiation.plugin_api;
        create_status_ = api_->create(args(), &instance_);
        if (create_status_ != ARB_OK && instance_) error_ = api_->last_error(instance_);
    }

    ~Harness() {
        if (instance_) api_->destroy(instance_);
    }
    Harness(const Harness&) = delete;
    Harness& operator=(const Harness&) = delete;

    bool ok() const { return create_status_ == ARB_OK; }
    arb_status create_status() const { return create_status_; }
    // The last error of the last failed call.
    const std::string& error() const { return error_; }
    arb_status last_status() const { return last_status_; }
    const arb_negotiation& negotiation() const { return negotiation_; }
    // What describe_config answers (the JSON Schema of the config table), or "" when the
    // plugin does not describe its config; throws with the plugin's text when it fails.
    std::string config_schema() const {
        if (!api_->describe_config) return {};
        arb_string text{};
        const arb_status status = api_->describe_config(&text);
        std::string out(text.data ? text.data : "", text.size);
        if (status != ARB_OK) throw std::runtime_error("describe_config failed: " + out);
        return out;
    }
    TestHost& host() { return host_; }

    // Runs one batch (verified first, as the host would) and returns its signals.
    std::vector<RecordedSignal> feed(std::span<const uint8_t> batch) {
        auto view = Batch::verified(batch);
        if (!view)
            throw std::invalid_argument("the harness was given bytes that are not an EventBatch");
        if (!view->events().empty())
            host_.relay_time_us = (*view->events()[view->events().size() - 1]).relay_time_us();
        return collect([&](const arb_signal_sink* sink) {
            return api_->on_batch(instance_, {batch.data(), batch.size()}, sink);
        });
    }

    std::vector<RecordedSignal> end_match(const std::string& relay_id, uint64_t match_id) {
        if (!api_->on_match_end) return {};
        return collect([&](const arb_signal_sink* sink) {
            return api_->on_match_end(instance_, {relay_id.data(), relay_id.size()}, match_id,
                                      sink);
        });
    }

    arb_status reconfigure(const ConfigValue& config) {
        config_ = config.to_flexbuffer();
        return record(api_->configure ? api_->configure(instance_, args()) : ARB_ERR_UNSUPPORTED);
    }

    // The state blob, or nullopt (see error()).
    std::optional<std::vector<uint8_t>> save_state() {
        arb_bytes out{};
        if (!api_->save_state || record(api_->save_state(instance_, &out)) != ARB_OK)
            return std::nullopt;
        return std::vector<uint8_t>(out.data, out.data + out.size);
    }

    arb_status restore_state(std::span<const uint8_t> blob) {
        if (!api_->restore_state) return record(ARB_ERR_UNSUPPORTED);
        return record(api_->restore_state(instance_, {blob.data(), blob.size()}));
    }

    // Every signal reported so far.
    const std::vector<RecordedSignal>& signals() const { return all_; }

    // The highest score reported for a player and check, if any.
    std::optional<double> max_score(uint32_t player, const std::string& code) const {
        std::optional<double> best;
        for (const auto& s : all_)
            if (s.player == player && s.code == code) best = std::max(best.value_or(0.0), s.score);
        return best;
    }

    bool any_signal_for(uint32_t player) const {
        return std::any_of(all_.begin(), all_.end(),
                           [&](const auto& s) { return s.player == player; });
    }

  private:
    const arb_create_args* args() {
        args_ = {};
        args_.struct_size = sizeof args_;
        args_.host = host_.handle();
        args_.services = TestHost::services();
        args_.config = {config_.data(), config_.size()};
        args_.baseline = {baseline_.data(), baseline_.size()};
        args_.shard_index = 0;
        args_.shard_count = 1;
        return &args_;
    }

    arb_status record(arb_status status) {
        last_status_ = status;
        if (status != ARB_OK) error_ = api_->last_error(instance_);
        return status;
    }

    template <class Call>
    std::vector<RecordedSignal> collect(Call&& call) {
        if (!ok()) throw std::logic_error("the analyzer was not created: " + error_);
        struct Sink {
            Harness* self;
            std::vector<RecordedSignal> signals;
        } state{this, {}};
        arb_signal_sink sink{
            sizeof(arb_signal_sink), &state, [](void* context, const arb_signal* s) -> arb_status {
                auto* sink_state = static_cast<Sink*>(context);
                // Refused by the host's own rules, before anything of it is read.
                if (std::string why = signal_rules::signal_problem(s); !why.empty()) {
                    sink_state->self->dropped_++;
                    sink_state->self->last_dropped_reason_ = std::move(why);
                    return ARB_ERR_INVALID_ARGUMENT;
                }
                RecordedSignal r;
                r.player = s->player;
                r.code.assign(s->code.data, s->code.size);
                r.score = s->score;
                r.confidence = s->confidence;
                r.tripwire = (s->flags & ARB_SIGNAL_TRIPWIRE) != 0;
                r.evidence = s->evidence_json.size
                                 ? std::string(s->evidence_json.data, s->evidence_json.size)
                                 : std::string("{}");  // as the host keeps it
                r.relay_time_us = sink_state->self->host_.relay_time_us;
                sink_state->signals.push_back(r);
                return ARB_OK;
            }};
        record(call(&sink));
        all_.insert(all_.end(), state.signals.begin(), state.signals.end());
        return state.signals;
    }

  public:
    // Signals the harness refused by the host's rules (arbiter_signal_rules.hpp): a
    // number not finite or outside [0, 1], player 0, a code empty, too long or with a
    // character outside [a-z0-9_.-], evidence over 64 KiB or not one JSON object.
    // The reason of the last one refused is last_dropped_reason().
    size_t dropped() const { return dropped_; }
    const std::string& last_dropped_reason() const { return last_dropped_reason_; }

  private:
    TestHost host_;
    std::vector<uint8_t> config_;
    std::vector<uint8_t> baseline_;
    arb_negotiation negotiation_{};
    const arb_plugin_api* api_ = nullptr;
    arb_instance* instance_ = nullptr;
    arb_create_args args_{};
    arb_status create_status_ = ARB_ERR_INTERNAL;
    arb_status last_status_ = ARB_OK;
    std::string error_;
    std::vector<RecordedSignal> all_;
    size_t dropped_ = 0;
    std::string last_dropped_reason_;
};

}  // namespace arbiter::testing
