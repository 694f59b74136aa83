// The compatibility matrix of docs/abi-rules.md, rule 4, run on real libraries: plugins built
// against the frozen 1.0 header, the current header and a stand-in for the next minor
// (tests/compat/next_minor.h), each on the current host and on a model of the 1.0 host
// (tests/compat/host_1_0.c, compiled against the frozen 1.0 header). Every pair either
// runs, with the plugin's signals arriving, or is refused with both versions named.
#include <string>
#include <vector>

#include <arbiter/sdk/events.hpp>
#include <flatbuffers/flexbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compat/host_1_0.h"
#include "compat/next_schema_batch.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> empty_config() {
    flexbuffers::Builder builder;
    builder.Map([] {});
    builder.Finish();
    return builder.GetBuffer();
}

host_1_0_result run_on_1_0_host(const std::filesystem::path& library) {
    BatchBuilder builder(kTestRelay, kTestMatch);
    const std::vector<uint8_t> batch = echo_batch(builder, 1'000'000);
    const std::vector<uint8_t> config = empty_config();
    host_1_0_result result{};
    host_1_0_run(library.c_str(), config.data(), config.size(), batch.data(), batch.size(),
                 &result);
    return result;
}

// Loads `library` as plugin "compat" beside nothing else on the current host and feeds
// it the echo batch; the plugin's signal for player 1 must reach the assessment.
struct CurrentHostRun {
    std::vector<std::string> errors;
    std::optional<host::SignalRecord> signal;
};
CurrentHostRun run_on_current_host(const std::filesystem::path& library, const std::string& code) {
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") + plugin_table("compat", library), dir.path()));
    CurrentHostRun run;
    run.errors = host.plugin_errors();
    if (!run.errors.empty()) return run;
    BatchBuilder builder(kTestRelay, kTestMatch);
    if (auto refused = host.push(echo_batch(builder, 1'000'000))) {
        run.errors.push_back(*refused);
        return run;
    }
    if (auto assessment = host.assessment({kTestRelay, kTestMatch, 1}))
        run.signal = find_check(*assessment, "compat", code);
    return run;
}

TEST(CompatMatrix, APluginBuiltForOneZeroRunsOnTheCurrentHost) {
    const auto run = run_on_current_host(test_plugin("compat-1-0"), "compat.old");
    ASSERT_TRUE(run.errors.empty()) << joined(run.errors);
    ASSERT_TRUE(run.signal) << "the 1.0 plugin's 64-byte signal did not reach the assessment";
    EXPECT_DOUBLE_EQ(run.signal->score, 0.5);
    EXPECT_DOUBLE_EQ(run.signal->confidence, 0.75);
}

TEST(CompatMatrix, APluginBuiltForOneZeroRunsOnTheOneZeroHost) {
    const auto result = run_on_1_0_host(test_plugin("compat-1-0"));
    ASSERT_TRUE(result.loaded) << result.message;
    EXPECT_EQ(result.signals, 2u);  // one per batch, one at match end
    EXPECT_EQ(result.dropped, 0u);
}

TEST(CompatMatrix, ANextMinorPluginThatDoesNotRequireItRunsOnTheCurrentHost) {
    const auto run = run_on_current_host(test_plugin("compat-next-optional"), "compat.next");
    ASSERT_TRUE(run.errors.empty()) << joined(run.errors);
    ASSERT_TRUE(run.signal) << "the larger next-minor signal was not taken";
    EXPECT_DOUBLE_EQ(run.signal->score, 0.25);
}

TEST(CompatMatrix, ANextMinorPluginThatDoesNotRequireItRunsOnTheOneZeroHost) {
    const auto result = run_on_1_0_host(test_plugin("compat-next-optional"));
    ASSERT_TRUE(result.loaded) << result.message;
    EXPECT_EQ(result.abi_minor, 0u) << "towards a 1.0 host a plugin reports its required minor";
    EXPECT_EQ(result.capabilities, 0u) << "no capability bit of a newer minor towards 1.0";
    EXPECT_EQ(result.signals, 1u);
    EXPECT_EQ(result.dropped, 0u);
    EXPECT_DOUBLE_EQ(result.first_score, 0.25);
}

TEST(CompatMatrix, ANextMinorPluginThatRequiresItIsRefusedByTheCurrentHostNamingBoth) {
    const auto run = run_on_current_host(test_plugin("compat-next-required"), "compat.next");
    ASSERT_EQ(run.errors.size(), 1u) << joined(run.errors);
    const std::string next = "1." + std::to_string(ARB_ABI_VERSION_MINOR + 1);
    const std::string current = "1." + std::to_string(ARB_ABI_VERSION_MINOR);
    EXPECT_THAT(run.errors[0], HasSubstr("it needs ABI " + next));
    EXPECT_THAT(run.errors[0], HasSubstr("this host's ABI " + current));
}

TEST(CompatMatrix, ANextMinorPluginThatRequiresItIsRefusedByTheOneZeroHostNamingBoth) {
    const auto result = run_on_1_0_host(test_plugin("compat-next-required"));
    EXPECT_FALSE(result.loaded);
    const std::string next = "1." + std::to_string(ARB_ABI_VERSION_MINOR + 1);
    EXPECT_THAT(result.message,
                HasSubstr("built for ABI " + next + ", newer than this host's ABI 1.0"));
    EXPECT_THAT(result.message, HasSubstr("needs a host of ABI " + next + " or later"));
}

// The SDK's own negotiation, on the 1.0 host: an unchanged plugin rebuilt with this SDK
// keeps running there (its 1.1 capability is not declared to a host that does not know
// it), and one that declares requires_abi_minor = 1 is refused with both versions.
TEST(CompatMatrix, AnSdkPluginRebuiltWithThisSdkStillRunsOnTheOneZeroHost) {
    const auto result = run_on_1_0_host(test_plugin("echo"));
    ASSERT_TRUE(result.loaded) << result.message;
    EXPECT_EQ(result.abi_minor, 0u);
    EXPECT_EQ(result.capabilities & ~uint64_t{ARB_CAP_ALL_1_0}, 0u);
    EXPECT_EQ(result.signals, 1u);
    EXPECT_DOUBLE_EQ(result.first_score, 0.9);
}

TEST(CompatMatrix, AnSdkPluginThatRequiresOneOneIsRefusedByTheOneZeroHostNamingBoth) {
    const auto result = run_on_1_0_host(test_plugin("compat-sdk-requires-1-1"));
    EXPECT_FALSE(result.loaded);
    EXPECT_THAT(result.message, HasSubstr("built for ABI 1.1, newer than this host's ABI 1.0"));
    EXPECT_THAT(result.message, HasSubstr("needs a host of ABI 1.1 or later"));
}

TEST(CompatMatrix, AnSdkPluginThatRequiresOneOneRunsOnTheCurrentHost) {
    const auto run = run_on_current_host(test_plugin("compat-sdk-requires-1-1"), "test.echo");
    ASSERT_TRUE(run.errors.empty()) << joined(run.errors);
    EXPECT_TRUE(run.signal);
}

}  // namespace
}  // namespace arbiter::test

namespace arbiter::test {
namespace {

// The event schema's half of the matrix: a relay that writes the next schema minor, with
// an event kind this host and its plugins were built without. The batch is taken, the
// unknown event is skipped by the host and by the plugins, and what they know still
// counts: the echo plugin's signal for the position update after it arrives.
TEST(CompatMatrix, ABatchOfTheNextSchemaMinorWithAnUnknownEventKindIsSkippedNotFatal) {
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") + plugin_table("echo", test_plugin("echo")) +
                              plugin_table("reference", reference_plugin()),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    const auto refused = host.push(next_schema_batch(kTestRelay, kTestMatch, 1'000'000));
    ASSERT_FALSE(refused) << *refused;
    const auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    EXPECT_TRUE(find_check(*assessment, "echo", "test.echo"));
    for (const auto& slot : host.plugins()) {
        EXPECT_TRUE(slot.active()) << slot.settings.name;
        // Skipped, not an error: neither plugin failed a call on the unknown kind.
        EXPECT_EQ(slot.stats.errors, 0u) << slot.settings.name;
    }
}

TEST(CompatMatrix, APluginBuiltForOneZeroTakesABatchOfANewerSchemaMinor) {
    const std::vector<uint8_t> batch = next_schema_batch(kTestRelay, kTestMatch, 1'000'000);
    const std::vector<uint8_t> config = empty_config();
    host_1_0_result result{};
    host_1_0_run(test_plugin("echo").c_str(), config.data(), config.size(), batch.data(),
                 batch.size(), &result);
    ASSERT_TRUE(result.loaded) << result.message;
    EXPECT_EQ(std::string(result.message), "");
    EXPECT_EQ(result.signals, 1u);
}

// Schema 1.1's InputLost is written by the host, so the host sends it only to plugins
// built against schema 1.1 or later: a plugin built for 1.0 never gets an event kind it
// was built without from the host itself (arbiter_plugin.h, "Versions").
TEST(CompatMatrix, InputLostReachesPluginsOfSchemaOneOneAndNotThoseBuiltForOneZero) {
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") + plugin_table("old", test_plugin("compat-1-0")) +
                              plugin_table("echo", test_plugin("echo")),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    auto sink = std::make_shared<RecordingSink>();
    host.add_sink(sink);

    BatchBuilder builder(kTestRelay, kTestMatch);
    ASSERT_FALSE(host.push(echo_batch(builder, 1'000'000)));
    builder = BatchBuilder(kTestRelay, kTestMatch, 4);  // batches 1 to 3 never arrive
    ASSERT_FALSE(host.push(echo_batch(builder, 5'000'000)));

    const auto& slots = host.plugins();
    ASSERT_EQ(slots.size(), 2u);
    EXPECT_EQ(slots[0].stats.calls, 2u) << "the 1.0 plugin gets the relay's two batches only";
    EXPECT_EQ(slots[1].stats.calls, 3u) << "the 1.1 plugin gets the host's InputLost batch too";
    ASSERT_EQ(sink->count("echo", "test.input_lost"), 1u);
    for (const auto& signal : sink->signals) {
        if (signal.code != "test.input_lost") continue;
        EXPECT_THAT(signal.evidence_json, HasSubstr("\"first_sequence\":1"));
        EXPECT_THAT(signal.evidence_json, HasSubstr("\"last_sequence\":3"));
        EXPECT_THAT(signal.evidence_json, HasSubstr("\"batch_sequence\":3"));
    }
    // Told before the first batch after the gap, whose signals come after it.
    std::vector<std::string> codes;
    for (const auto& signal : sink->signals)
        codes.push_back(signal.code);
    EXPECT_THAT(codes, ::testing::ElementsAre("compat.old", "test.echo", "test.input_lost",
                                              "compat.old", "test.echo"));
}

}  // namespace
}  // namespace arbiter::test

#include "compat/host_1_1.h"
#include "events-1.1_generated.h"

namespace arbiter::test {
namespace {

// Event schema 1.2 (look and aim) against what was built for schema 1.1: plugins and
// relays built against the released events-1.1.fbs, and the host as it was when it sent
// schema 1.1 (tests/compat/host_1_1.c).

// A batch as a relay built against schema 1.1 writes it: flatc's 1.1 code, minor 1, and
// no look or aim anywhere.
std::vector<uint8_t> schema_1_1_batch(const std::string& relay, uint64_t match, float x) {
    namespace old = arbiter::fb_1_1;
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<old::Event>> events;
    auto join = old::CreatePlayerJoin(builder, builder.CreateString("account-1"));
    events.push_back(
        old::CreateEvent(builder, 1'000'000, 0, 1, old::EventBody::PlayerJoin, join.Union()));
    const old::Vec3 where(x, 0.0f, 0.0f);
    old::PositionUpdateBuilder position(builder);
    position.add_position(&where);
    auto moved = position.Finish();
    events.push_back(
        old::CreateEvent(builder, 1'000'010, 20, 1, old::EventBody::PositionUpdate, moved.Union()));
    auto batch = old::CreateEventBatch(builder, 1, 1, builder.CreateString(relay), match, 0,
                                       builder.CreateVector(events));
    builder.Finish(batch, ARB_SCHEMA_FILE_IDENTIFIER);
    return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

// A batch of this schema (1.2) with look and aim on every event that can carry them.
std::vector<uint8_t> schema_1_2_batch_with_aim(float x) {
    BatchBuilder builder(kTestRelay, kTestMatch);
    build::PlayerJoin join;
    join.account_id = "account-1";
    builder.add(1'000'000, 0, 1, join);
    builder.add(1'000'010, 20, 1,
                build::Position{.position = {x, 0, 0},
                                .look = fb::Look(2.5f, -0.3f),
                                .aim = fb::AimPoint(96.0f, -40.0f, true)});
    builder.add(1'000'020, 20, 1,
                build::Order{.kind = "fire",
                             .look = fb::Look(2.6f, -0.3f),
                             .aim = fb::AimPoint(90.0f, -38.0f, true)});
    return builder.finish();
}

TEST(CompatMatrix, ASchemaOneOnePluginReadsSchemaOneTwoBatchesWithLookAndAimAsBefore) {
    TempDir dir;
    host::Host host(
        parse(host_table(dir / "work") + plugin_table("old", test_plugin("compat-schema-1-1")),
              dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    ASSERT_FALSE(host.push(schema_1_2_batch_with_aim(0.625f)));
    const auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    const auto signal = find_check(*assessment, "old", "compat.schema_1_1");
    ASSERT_TRUE(signal) << "the 1.1 plugin read no position from the 1.2 batch";
    EXPECT_DOUBLE_EQ(signal->score, 0.625);
    EXPECT_THAT(signal->evidence_json, HasSubstr("\"batch_schema_minor\":2"));
    EXPECT_EQ(host.plugins().front().stats.errors, 0u);
}

TEST(CompatMatrix, ASchemaOneOneRelaysBatchesAreTakenAndCarryNoLookOrAim) {
    const std::vector<uint8_t> bytes = schema_1_1_batch(kTestRelay, kTestMatch, 0.25f);
    const auto batch = Batch::verified(bytes);
    ASSERT_TRUE(batch);
    for (const fb::Event* event : batch->events()) {
        EXPECT_FALSE(look_of(*event));
        EXPECT_FALSE(aim_of(*event));
    }
    TempDir dir;
    host::Host host(parse(host_table(dir / "work") + plugin_table("echo", test_plugin("echo")) +
                              plugin_table("reference", reference_plugin()),
                          dir.path()));
    ASSERT_TRUE(host.plugin_errors().empty()) << joined(host.plugin_errors());
    ASSERT_FALSE(host.push(bytes));
    const auto assessment = host.assessment({kTestRelay, kTestMatch, 1});
    ASSERT_TRUE(assessment);
    EXPECT_TRUE(find_check(*assessment, "echo", "test.echo"));
    for (const auto& slot : host.plugins())
        EXPECT_EQ(slot.stats.errors, 0u) << slot.settings.name;
}

TEST(CompatMatrix, TheSdkReadsLookAndAimWhereARelayOfSchemaOneTwoSendsThem) {
    const std::vector<uint8_t> bytes = schema_1_2_batch_with_aim(0.5f);
    const auto batch = Batch::verified(bytes);
    ASSERT_TRUE(batch);
    ASSERT_EQ(batch->events().size(), 3u);
    EXPECT_FALSE(look_of(*batch->events()[0])) << "a PlayerJoin carries no look";
    const auto look = look_of(*batch->events()[1]);
    ASSERT_TRUE(look);
    EXPECT_FLOAT_EQ(look->yaw(), 2.5f);
    EXPECT_FLOAT_EQ(look->pitch(), -0.3f);
    const auto aim = aim_of(*batch->events()[2]);
    ASSERT_TRUE(aim);
    EXPECT_FLOAT_EQ(aim->x(), 90.0f);
    EXPECT_FLOAT_EQ(aim->y(), -38.0f);
    EXPECT_TRUE(aim->relative());
}

host_1_0_result run_on_1_1_host(const std::filesystem::path& library) {
    BatchBuilder builder(kTestRelay, kTestMatch);
    const std::vector<uint8_t> batch = echo_batch(builder, 1'000'000);
    const std::vector<uint8_t> config = empty_config();
    host_1_0_result result{};
    host_1_1_run(library.c_str(), config.data(), config.size(), batch.data(), batch.size(),
                 &result);
    return result;
}

TEST(CompatMatrix, APluginThatRequiresSchemaOneTwoIsRefusedByTheOneOneHostNamingBoth) {
    const auto result = run_on_1_1_host(test_plugin("compat-sdk-requires-schema-1-2"));
    EXPECT_FALSE(result.loaded);
    EXPECT_THAT(result.message, HasSubstr("it needs event schema 1.2 (built against 1.2), newer "
                                          "than the schema 1.1 this host sends"));
}

TEST(CompatMatrix, PluginsThatDoNotRequireSchemaOneTwoRunOnTheOneOneHost) {
    for (const char* name : {"echo", "compat-schema-1-1", "compat-1-0"}) {
        const auto result = run_on_1_1_host(test_plugin(name));
        ASSERT_TRUE(result.loaded) << name << ": " << result.message;
        EXPECT_EQ(result.signals, 1u) << name;
        EXPECT_EQ(result.dropped, 0u) << name;
    }
}

TEST(CompatMatrix, APluginThatRequiresSchemaOneTwoRunsOnTheCurrentHost) {
    const auto run =
        run_on_current_host(test_plugin("compat-sdk-requires-schema-1-2"), "test.echo");
    ASSERT_TRUE(run.errors.empty()) << joined(run.errors);
    EXPECT_TRUE(run.signal);
}

}  // namespace
}  // namespace arbiter::test
