// The export macro's glue, driven through the C table exactly as the host drives it.
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include <arbiter/sdk.hpp>
#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/testing.hpp>

namespace {

using arbiter::Batch;
using arbiter::ConfigValue;
using arbiter::Context;
using arbiter::Signals;

// Does what its config says, so that one class can show every path of the glue.
class Scripted final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "scripted",
                                              .version = "1.2.3",
                                              .contact = "tests",
                                              .description = "test analyzer",
                                              .model_class = arbiter::ModelClass::behavioural};

    explicit Scripted(const Context& context) : Analyzer(context) {
        behaviour_ = context.config.string("behaviour", "signal");
        threshold_ = context.config.number("threshold", 0.5, arbiter::Range::between(0, 1));
        if (behaviour_ == "fail_create") throw std::runtime_error("cannot start: told to");
    }

    void on_batch(const Batch& batch, Signals& signals) override {
        if (behaviour_ == "throw") throw std::runtime_error("boom in on_batch");
        if (behaviour_ == "throw_int") throw 42;
        for (const auto* event : batch.events()) {
            if (event->player() == 0) continue;
            double score = behaviour_ == "nan" ? std::nan("") : threshold_;
            signals.emit({.player = event->player(),
                          .code = behaviour_ == "bad_code" ? "Test.Seen" : "test.seen",
                          .score = score,
                          .confidence = 1.0,
                          .evidence = arbiter::Evidence().add("t_us", event->relay_time_us()),
                          .tripwire = behaviour_ == "tripwire"});
            host().count("seen");
        }
        host().info("batch " + std::to_string(batch.sequence()) + " at " +
                    std::to_string(host().relay_time_us()));
    }

    std::vector<uint8_t> save_state() {
        arbiter::StateWriter out("SCR1", 1);
        out.put<double>(threshold_);
        return out.finish();
    }
    void restore_state(std::span<const uint8_t> blob) {
        arbiter::StateReader in(blob, "SCR1", 1);
        threshold_ = in.get<double>();
        in.finish();
    }

  private:
    std::string behaviour_;
    double threshold_;
};

// The smallest analyzer: on_batch only.
class Minimal final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "minimal",
                                              .version = "0.0.1",
                                              .contact = "tests",
                                              .description = "nothing optional",
                                              .model_class = arbiter::ModelClass::validation,
                                              .shard_by_match = true};
    explicit Minimal(const Context& context) : Analyzer(context) {}
    void on_batch(const Batch&, Signals&) override {}
};

std::vector<uint8_t> one_position(uint32_t player, int64_t t_us) {
    arbiter::BatchBuilder builder("relay", 7);
    builder.add(t_us, 1, player, arbiter::build::Position{.position = {1, 2, 3}});
    return builder.finish();
}

ConfigValue behaviour(const char* what) {
    return ConfigValue::table({{"behaviour", what}});
}

TEST(Glue, NegotiationFillsVersionsNamesAndCapabilities) {
    arbiter::testing::Harness<Scripted> harness;
    const auto& n = harness.negotiation();
    EXPECT_EQ(n.plugin_abi_major, ARB_ABI_VERSION_MAJOR);
    EXPECT_EQ(n.plugin_abi_minor, ARB_ABI_VERSION_MINOR);
    EXPECT_EQ(n.schema_major, ARB_SCHEMA_VERSION_MAJOR);
    EXPECT_STREQ(n.name, "scripted");
    EXPECT_STREQ(n.version, "1.2.3");
    EXPECT_EQ(n.model_class, static_cast<uint32_t>(ARB_CLASS_BEHAVIOURAL));
    EXPECT_EQ(n.capabilities, ARB_CAP_STATE | ARB_CAP_DESCRIBE_CONFIG);
    EXPECT_EQ(n.plugin_abi_minor_required, 0u);
    EXPECT_EQ(n.schema_minor_required, 0u);
    EXPECT_NE(n.plugin_api->save_state, nullptr);
    EXPECT_EQ(n.plugin_api->configure, nullptr);
    EXPECT_EQ(n.plugin_api->on_match_end, nullptr);
}

TEST(Glue, OptionalSlotsFollowTheClass) {
    arbiter::testing::Harness<Minimal> harness;
    const auto& n = harness.negotiation();
    EXPECT_EQ(n.capabilities, ARB_CAP_SHARD_BY_MATCH | ARB_CAP_DESCRIBE_CONFIG);
    EXPECT_EQ(n.plugin_api->save_state, nullptr);
    EXPECT_EQ(n.plugin_api->restore_state, nullptr);
    EXPECT_EQ(n.plugin_api->baseline_begin, nullptr);
}

TEST(Glue, EntryRefusesAnotherMajorButStillNamesItsVersion) {
    arb_negotiation n{};
    n.struct_size = sizeof n;
    n.host_abi_major = 2;
    EXPECT_EQ(arbiter::detail::negotiate<Minimal>(&n), ARB_ERR_VERSION);
    EXPECT_EQ(n.plugin_abi_major, 1u);
}

TEST(Glue, EntryRefusesNullAndShortNegotiation) {
    EXPECT_EQ(arbiter::detail::negotiate<Minimal>(nullptr), ARB_ERR_INVALID_ARGUMENT);
    arb_negotiation n{};
    n.struct_size = 8;
    EXPECT_EQ(arbiter::detail::negotiate<Minimal>(&n), ARB_ERR_INVALID_ARGUMENT);
}

TEST(Glue, SignalsReachTheSinkWithTheRelayClock) {
    arbiter::testing::Harness<Scripted> harness;
    ASSERT_TRUE(harness.ok()) << harness.error();
    auto signals = harness.feed(one_position(3, 123456));
    ASSERT_EQ(signals.size(), 1u);
    EXPECT_EQ(signals[0].player, 3u);
    EXPECT_EQ(signals[0].code, "test.seen");
    EXPECT_EQ(signals[0].evidence, "{\"t_us\":123456}");
    EXPECT_EQ(harness.host().metrics["seen"], 1.0);
    ASSERT_FALSE(harness.host().logs.empty());
    EXPECT_EQ(harness.host().logs.back().message, "batch 0 at 123456");
}

TEST(Glue, ExceptionInCreateBecomesStatusAndLastError) {
    arbiter::testing::Harness<Scripted> harness(behaviour("fail_create"));
    EXPECT_EQ(harness.create_status(), ARB_ERR_INTERNAL);
    EXPECT_EQ(harness.error(), "cannot start: told to");
}

TEST(Glue, ConfigErrorNamesTheKey) {
    arbiter::testing::Harness<Scripted> harness(ConfigValue::table({{"threshold", 3.0}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(harness.error(), "threshold: expected a finite number >= 0 and <= 1, got 3.0");
}

TEST(Glue, UnknownConfigKeyIsRefused) {
    arbiter::testing::Harness<Scripted> harness(ConfigValue::table({{"treshold", 0.4}}));
    EXPECT_EQ(harness.create_status(), ARB_ERR_CONFIG);
    EXPECT_EQ(harness.error(), "treshold: unknown key (misspelt, or not used by this plugin)");
}

TEST(Glue, ExceptionInOnBatchBecomesStatusAndTheInstanceGoesOn) {
    arbiter::testing::Harness<Scripted> harness(behaviour("throw"));
    ASSERT_TRUE(harness.ok());
    harness.feed(one_position(1, 10));
    EXPECT_EQ(harness.last_status(), ARB_ERR_INTERNAL);
    EXPECT_EQ(harness.error(), "boom in on_batch");
    harness.feed(one_position(1, 20));
    EXPECT_EQ(harness.last_status(), ARB_ERR_INTERNAL);
}

TEST(Glue, NonStandardExceptionIsCaughtToo) {
    arbiter::testing::Harness<Scripted> harness(behaviour("throw_int"));
    harness.feed(one_position(1, 10));
    EXPECT_EQ(harness.last_status(), ARB_ERR_INTERNAL);
    EXPECT_NE(harness.error().find("unknown exception"), std::string::npos);
}

TEST(Glue, NanScoresAreRefusedBySinkNotPassedOn) {
    arbiter::testing::Harness<Scripted> harness(behaviour("nan"));
    auto signals = harness.feed(one_position(1, 10));
    EXPECT_TRUE(signals.empty());
    EXPECT_EQ(harness.dropped(), 1u);
    EXPECT_EQ(harness.last_status(), ARB_OK);
}

TEST(Glue, TheHarnessRefusesWhatTheHostRefusesAndSaysWhy) {
    arbiter::testing::Harness<Scripted> harness(behaviour("bad_code"));
    EXPECT_TRUE(harness.feed(one_position(1, 10)).empty());
    EXPECT_EQ(harness.dropped(), 1u);
    EXPECT_EQ(harness.last_dropped_reason(), "code has a character outside [a-z0-9_.-]");
}

TEST(Glue, TripwireFlagCrosses) {
    arbiter::testing::Harness<Scripted> harness(behaviour("tripwire"));
    auto signals = harness.feed(one_position(1, 10));
    ASSERT_EQ(signals.size(), 1u);
    EXPECT_TRUE(signals[0].tripwire);
}

TEST(Glue, StateRoundTripsAndDamagedStateIsRefused) {
    arbiter::testing::Harness<Scripted> first(ConfigValue::table({{"threshold", 0.25}}));
    auto blob = first.save_state();
    ASSERT_TRUE(blob.has_value());
    arbiter::testing::Harness<Scripted> second;
    EXPECT_EQ(second.restore_state(*blob), ARB_OK);
    EXPECT_DOUBLE_EQ(second.feed(one_position(1, 1))[0].score, 0.25);

    auto damaged = *blob;
    damaged.back() ^= 0x40;
    EXPECT_EQ(second.restore_state(damaged), ARB_ERR_STATE);
    EXPECT_NE(second.error().find("checksum"), std::string::npos);
    // The refused blob changed nothing.
    EXPECT_DOUBLE_EQ(second.feed(one_position(1, 2))[0].score, 0.25);
}

TEST(Glue, CallsOnAFailedInstanceAreRefusedNotCrashed) {
    const arb_plugin_api& api = arbiter::detail::Glue<Scripted>::api;
    auto config = behaviour("fail_create").to_flexbuffer();
    arb_create_args args{};
    args.struct_size = sizeof args;
    args.services = arbiter::testing::TestHost::services();
    args.config = {config.data(), config.size()};
    arb_instance* instance = nullptr;
    ASSERT_EQ(api.create(&args, &instance), ARB_ERR_INTERNAL);
    ASSERT_NE(instance, nullptr);
    auto batch = one_position(1, 1);
    arb_signal_sink sink{sizeof sink, nullptr, [](void*, const arb_signal*) { return ARB_OK; }};
    EXPECT_EQ(api.on_batch(instance, {batch.data(), batch.size()}, &sink), ARB_ERR_INTERNAL);
    EXPECT_STREQ(api.last_error(instance), "the instance was not created successfully");
    api.destroy(instance);
}

TEST(Glue, CreateRefusesMissingArguments) {
    const arb_plugin_api& api = arbiter::detail::Glue<Minimal>::api;
    EXPECT_EQ(api.create(nullptr, nullptr), ARB_ERR_INVALID_ARGUMENT);
    arb_instance* instance = nullptr;
    EXPECT_EQ(api.create(nullptr, &instance), ARB_ERR_INVALID_ARGUMENT);
    ASSERT_NE(instance, nullptr);
    EXPECT_NE(std::string(api.last_error(instance)).find("arguments missing"), std::string::npos);
    api.destroy(instance);
}

}  // namespace
