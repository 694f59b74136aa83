// The embedding C API: every entry point's bad input, a refused batch, the action
// callback, assessments, and reloads that fail.
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <arbiter/arbiter_host.h>
#include <arbiter/sdk/batch_builder.hpp>

namespace {

std::string counter_config(int report_at) {
    return "[plugins.counter]\nlibrary = \"" + std::string(COUNTER_V1) + "\"\n[plugins.counter.config]\nreport_at = " +
           std::to_string(report_at) + "\n";
}

std::vector<uint8_t> positions(arbiter::BatchBuilder& builder, uint32_t player, int count) {
    for (int i = 0; i < count; ++i)
        builder.add(1000 * (i + 1), static_cast<uint64_t>(i), player, arbiter::build::Position{});
    return builder.finish();
}

struct Raised {
    int calls = 0;
    uint32_t player = 0;
    uint32_t action = 0;
    std::string json;
};

void remember(void* user_data, const arbiter_assessment* assessment) {
    auto* raised = static_cast<Raised*>(user_data);
    ++raised->calls;
    raised->player = assessment->player;
    raised->action = assessment->action;
    raised->json = assessment->json;
}

// Pushes `events` positions of one player; the counter plugin (report_at = events) must
// have flagged that player, the host's only one.
void expect_the_counter_flags_one_player(arbiter_host* host, int events) {
    arbiter::BatchBuilder builder("relay", 1);
    auto batch = positions(builder, 1, events);
    EXPECT_EQ(arbiter_host_push(host, batch.data(), batch.size()), ARBITER_OK) << arbiter_host_last_error(host);
    const arbiter_assessment* all = nullptr;
    uint64_t count = 0;
    ASSERT_EQ(arbiter_host_assessments(host, &all, &count), ARBITER_OK);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(all[0].action, static_cast<uint32_t>(ARBITER_ACTION_FLAG_FOR_REVIEW));
}

TEST(CApi, NullArgumentsAreRefusedNotCrashed) {
    EXPECT_EQ(arbiter_host_create(nullptr, nullptr), ARBITER_ERR_INVALID_ARGUMENT);
    arbiter_host* host = nullptr;
    // A handle the caller did not initialise is set to NULL even when the call fails at once.
    host = reinterpret_cast<arbiter_host*>(0x1);
    EXPECT_EQ(arbiter_host_create(nullptr, &host), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(host, nullptr);
    host = reinterpret_cast<arbiter_host*>(0x1);
    EXPECT_EQ(arbiter_host_create_from_text(nullptr, 5, nullptr, &host), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(host, nullptr);
    EXPECT_EQ(arbiter_host_push(nullptr, nullptr, 0), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(arbiter_host_last_error(nullptr), "no host");
    arbiter_host_destroy(nullptr);

    std::string text = counter_config(3);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    EXPECT_EQ(arbiter_host_push(host, nullptr, 10), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(arbiter_host_last_error(host), "batch is NULL with a size above 0");
    EXPECT_EQ(arbiter_host_end_match(host, nullptr, 1), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(arbiter_host_last_error(host), "relay_id is NULL");
    EXPECT_EQ(arbiter_host_assessments(host, nullptr, nullptr), ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(arbiter_host_reload_plugin(host, nullptr), ARBITER_ERR_INVALID_ARGUMENT);
    arbiter_host_destroy(host);
}

TEST(CApi, ABadConfigIsExplainedWithItsPosition) {
    arbiter_host* host = nullptr;
    std::string text = "[aggregation]\nreview_threshold = \"high\"\n";
    EXPECT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_ERR_CONFIG);
    ASSERT_NE(host, nullptr);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("(embedded config):2:20: aggregation.review_threshold"),
              std::string::npos)
        << arbiter_host_last_error(host);
    // A host that failed to start refuses further calls with a reason.
    EXPECT_EQ(arbiter_host_push(host, nullptr, 0), ARBITER_ERR_INTERNAL);
    arbiter_host_destroy(host);

    EXPECT_EQ(arbiter_host_create("/nonexistent/server_config.toml", &host), ARBITER_ERR_CONFIG);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("cannot read it: No such file"), std::string::npos);
    arbiter_host_destroy(host);
}

TEST(CApi, PushCallbackAndAssessments) {
    arbiter_host* host = nullptr;
    std::string text = counter_config(3);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    EXPECT_STREQ(arbiter_host_plugin_errors(host), "");
    Raised raised;
    ASSERT_EQ(arbiter_host_set_action_callback(host, remember, &raised), ARBITER_OK);

    arbiter::BatchBuilder builder("relay", 9);
    auto batch = positions(builder, 4, 3);
    ASSERT_EQ(arbiter_host_push(host, batch.data(), batch.size()), ARBITER_OK) << arbiter_host_last_error(host);
    EXPECT_EQ(raised.calls, 1);
    EXPECT_EQ(raised.player, 4u);
    EXPECT_EQ(raised.action, static_cast<uint32_t>(ARBITER_ACTION_FLAG_FOR_REVIEW));
    EXPECT_NE(raised.json.find("\"test.count\""), std::string::npos);

    std::vector<uint8_t> garbage(64, 0x42);
    EXPECT_EQ(arbiter_host_push(host, garbage.data(), garbage.size()), ARBITER_ERR_REFUSED);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("file identifier"), std::string::npos);

    const arbiter_assessment* all = nullptr;
    uint64_t count = 0;
    ASSERT_EQ(arbiter_host_assessments(host, &all, &count), ARBITER_OK);
    ASSERT_EQ(count, 1u);
    EXPECT_STREQ(all[0].relay_id, "relay");
    EXPECT_EQ(all[0].match_id, 9u);
    EXPECT_EQ(all[0].struct_size, sizeof(arbiter_assessment));
    EXPECT_EQ(arbiter_host_end_match(host, "relay", 9), ARBITER_OK);

    ASSERT_EQ(arbiter_host_set_action_callback(host, nullptr, nullptr), ARBITER_OK);
    arbiter_host_destroy(host);
}

TEST(CApi, FailedReloadsAndConfigsKeepTheHostRunning) {
    arbiter_host* host = nullptr;
    std::string text = counter_config(2);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    EXPECT_EQ(arbiter_host_reload_plugin(host, "nope"), ARBITER_ERR_REFUSED);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("no plugin 'nope' is configured"), std::string::npos);
    EXPECT_EQ(arbiter_host_reload_plugin(host, "counter"), ARBITER_OK) << arbiter_host_last_error(host);
    EXPECT_EQ(arbiter_host_apply_config(host, "/nonexistent.toml"), ARBITER_ERR_CONFIG);

    expect_the_counter_flags_one_player(host, 2);
    arbiter_host_destroy(host);
}

// A reload begun and not yet over goes over before a whole reload, and the host then runs
// the plugin as before; one begun and left is dropped with the host.
TEST(CApi, AReloadBegunGoesOverBeforeAWholeReload) {
    arbiter_host* host = nullptr;
    std::string text = counter_config(3);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    ASSERT_EQ(arbiter_host_begin_reload(host, "counter"), ARBITER_OK)
        << arbiter_host_last_error(host);
    EXPECT_EQ(arbiter_host_reload_plugin(host, "counter"), ARBITER_OK)
        << arbiter_host_last_error(host);
    EXPECT_EQ(arbiter_host_reload_outcome(host), ARBITER_OK) << arbiter_host_last_error(host);
    expect_the_counter_flags_one_player(host, 3);
    ASSERT_EQ(arbiter_host_begin_reload(host, "counter"), ARBITER_OK);
    arbiter_host_destroy(host);
}

}  // namespace

// Lost input through the embedding API as through a file or a socket: a gap is carried by
// the match's assessments, a repeated batch is refused and not counted twice.
TEST(CApi, AGapIsInTheAssessmentAndADuplicateIsRefused) {
    arbiter_host* host = nullptr;
    std::string text = counter_config(100);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    arbiter::BatchBuilder builder("relay", 3);
    auto first = positions(builder, 2, 2);   // sequence 0
    auto second = positions(builder, 2, 2);  // 1
    (void)positions(builder, 2, 2);          // 2, lost
    auto fourth = positions(builder, 2, 2);  // 3
    // Relay times restart in each batch above; give the later ones later times.
    arbiter::BatchBuilder later("relay", 3, 1);
    later.add(3000, 3, 2, arbiter::build::Position{});
    second = later.finish();
    arbiter::BatchBuilder last("relay", 3, 3);
    last.add(9000, 9, 2, arbiter::build::Position{});
    fourth = last.finish();

    ASSERT_EQ(arbiter_host_push(host, first.data(), first.size()), ARBITER_OK);
    ASSERT_EQ(arbiter_host_push(host, second.data(), second.size()), ARBITER_OK);
    EXPECT_EQ(arbiter_host_push(host, second.data(), second.size()), ARBITER_ERR_REFUSED);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("already delivered"), std::string::npos);
    ASSERT_EQ(arbiter_host_push(host, fourth.data(), fourth.size()), ARBITER_OK);

    const arbiter_assessment* all = nullptr;
    uint64_t count = 0;
    ASSERT_EQ(arbiter_host_assessments(host, &all, &count), ARBITER_OK);
    ASSERT_EQ(count, 1u);
    const std::string json = all[0].json;
    EXPECT_NE(json.find(R"("lost_input":[{"after_relay_us":3000,"before_relay_us":9000,)"
                        R"("cause":"","from_sequence":2,"through_end":false,"to_sequence":2}])"),
              std::string::npos)
        << json;
    arbiter_host_destroy(host);
}

// API version 2: a host that would report every player Clear for want of its plugins does
// not start unless the config says so; logs never reach stdout and can be taken through
// a callback, at the config's level.
namespace {

struct LogLines {
    std::vector<std::pair<int32_t, std::string>> lines;
    bool has(const std::string& text) const {
        for (const auto& [level, line] : lines)
            if (line.find(text) != std::string::npos) return true;
        return false;
    }
};

void collect_log(void* user_data, int32_t level, const char* message) {
    static_cast<LogLines*>(user_data)->lines.emplace_back(level, message);
}

// Replaces itself from inside the call, as the header says it may.
void unset_from_inside(void* user_data, int32_t level, const char* message) {
    collect_log(user_data, level, message);
    arbiter_host_set_log_callback(nullptr, nullptr);
}

TEST(CApiVersion2, TheLibraryReportsItsVersion) {
    EXPECT_EQ(arbiter_host_api_version(), 3u);
    EXPECT_EQ(arbiter_host_api_version(), static_cast<uint32_t>(ARBITER_HOST_API_VERSION));
}

TEST(CApiVersion2, ARefusedPluginFailsCreateUnlessAPartialStartIsAllowed) {
    const std::string refused = counter_config(3) + "[plugins.missing]\nlibrary = \"/nonexistent/arbiter-x.so\"\n";
    arbiter_host* host = nullptr;
    EXPECT_EQ(arbiter_host_create_from_text(refused.data(), refused.size(), nullptr, &host),
              ARBITER_ERR_PLUGIN_REFUSED);
    ASSERT_NE(host, nullptr);
    EXPECT_NE(std::string(arbiter_host_last_error(host)).find("partial_start"), std::string::npos);
    EXPECT_NE(std::string(arbiter_host_plugin_errors(host)).find("plugin 'missing'"), std::string::npos)
        << arbiter_host_plugin_errors(host);
    arbiter_host_destroy(host);

    const std::string partial = "[host]\npartial_start = true\n" + refused;
    ASSERT_EQ(arbiter_host_create_from_text(partial.data(), partial.size(), nullptr, &host), ARBITER_OK)
        << arbiter_host_last_error(host);
    EXPECT_NE(std::string(arbiter_host_plugin_errors(host)).find("plugin 'missing'"), std::string::npos);
    // The plugin that loaded runs.
    expect_the_counter_flags_one_player(host, 3);
    arbiter_host_destroy(host);
}

TEST(CApiVersion2, AConfigThatEnablesNoPluginFailsCreate) {
    const std::string disabled = "[plugins.counter]\nlibrary = \"" + std::string(COUNTER_V1) + "\"\nenabled = false\n";
    for (const std::string& text : {std::string(""), disabled}) {
        arbiter_host* host = nullptr;
        EXPECT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host),
                  ARBITER_ERR_PLUGIN_REFUSED)
            << text;
        EXPECT_NE(std::string(arbiter_host_last_error(host)).find("no plugin is enabled"), std::string::npos)
            << arbiter_host_last_error(host);
        arbiter_host_destroy(host);
    }
    const std::string allowed = "[host]\npartial_start = true\n";
    arbiter_host* host = nullptr;
    EXPECT_EQ(arbiter_host_create_from_text(allowed.data(), allowed.size(), nullptr, &host), ARBITER_OK);
    arbiter_host_destroy(host);
}

TEST(CApiVersion2, LogLinesGoToTheCallbackAtTheConfiguredLevelAndNeverToStdout) {
    LogLines log;
    ASSERT_EQ(arbiter_host_set_log_callback(collect_log, &log), ARBITER_OK);
    const std::string info = "[host]\nlog_level = \"info\"\n" + counter_config(3);
    arbiter_host* host = nullptr;
    testing::internal::CaptureStdout();
    ASSERT_EQ(arbiter_host_create_from_text(info.data(), info.size(), nullptr, &host), ARBITER_OK);
    arbiter_host_destroy(host);
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
    EXPECT_TRUE(log.has("plugin 'counter': loaded")) << log.lines.size();
    for (const auto& [level, line] : log.lines)
        if (line.find("plugin 'counter': loaded") != std::string::npos) {
            EXPECT_EQ(level, ARBITER_LOG_INFO);
        }

    // At "error" the info lines are not produced at all.
    log.lines.clear();
    const std::string quiet = "[host]\nlog_level = \"error\"\n" + counter_config(3);
    ASSERT_EQ(arbiter_host_create_from_text(quiet.data(), quiet.size(), nullptr, &host), ARBITER_OK);
    arbiter_host_destroy(host);
    EXPECT_FALSE(log.has("plugin 'counter': loaded"));

    // A refused plugin is an error line, which the callback hears at any level but off.
    const std::string refused = quiet + "[plugins.missing]\nlibrary = \"/nonexistent/arbiter-x.so\"\n";
    EXPECT_EQ(arbiter_host_create_from_text(refused.data(), refused.size(), nullptr, &host),
              ARBITER_ERR_PLUGIN_REFUSED);
    arbiter_host_destroy(host);
    EXPECT_TRUE(log.has("plugin 'missing'"));
    for (const auto& [level, line] : log.lines)
        if (line.find("plugin 'missing'") != std::string::npos) {
            EXPECT_EQ(level, ARBITER_LOG_ERROR);
        }

    // A callback may remove itself; after that, nothing more reaches it.
    log.lines.clear();
    const std::string two_refused = refused + "[plugins.gone]\nlibrary = \"/nonexistent/arbiter-y.so\"\n";
    ASSERT_EQ(arbiter_host_set_log_callback(unset_from_inside, &log), ARBITER_OK);
    testing::internal::CaptureStderr();
    ASSERT_EQ(arbiter_host_create_from_text(two_refused.data(), two_refused.size(), nullptr, &host),
              ARBITER_ERR_PLUGIN_REFUSED);
    arbiter_host_destroy(host);
    const std::string stderr_text = testing::internal::GetCapturedStderr();
    EXPECT_EQ(log.lines.size(), 1u);
    // The lines after it went to stderr, marked as the library's.
    EXPECT_NE(stderr_text.find("[arbiter] [error]"), std::string::npos) << stderr_text;
    ASSERT_EQ(arbiter_host_set_log_callback(nullptr, nullptr), ARBITER_OK);
}

}  // namespace

// What a relay may do from inside its own action callback (issue 19): replace or remove
// the callback (it used to free the sink the host was iterating), read the last error;
// anything that would re-enter the pipeline is refused with the reason, and destroy is
// ignored.
namespace {

struct Reentrant {
    arbiter_host* host = nullptr;
    int calls = 0;
    int replacement_calls = 0;
    arbiter_status push_status = ARBITER_OK;
    std::string push_error;
    std::vector<uint8_t> batch;
};

void replacement(void* user_data, const arbiter_assessment*) {
    ++static_cast<Reentrant*>(user_data)->replacement_calls;
}

void reenter(void* user_data, const arbiter_assessment*) {
    auto* state = static_cast<Reentrant*>(user_data);
    ++state->calls;
    state->push_status = arbiter_host_push(state->host, state->batch.data(), state->batch.size());
    state->push_error = arbiter_host_last_error(state->host);
    arbiter_host_destroy(state->host);  // ignored
    EXPECT_EQ(arbiter_host_set_action_callback(state->host, replacement, state), ARBITER_OK);
}

TEST(CApiCallbacks, ACallbackMayReplaceItselfAndIsRefusedWhatWouldReenter) {
    arbiter_host* host = nullptr;
    std::string text = counter_config(2);
    ASSERT_EQ(arbiter_host_create_from_text(text.data(), text.size(), nullptr, &host), ARBITER_OK);
    Reentrant state;
    state.host = host;
    arbiter::BatchBuilder other("relay", 8);
    state.batch = positions(other, 7, 1);
    ASSERT_EQ(arbiter_host_set_action_callback(host, reenter, &state), ARBITER_OK);

    arbiter::BatchBuilder first("relay", 1);
    auto batch = positions(first, 1, 2);  // the counter flags player 1 at its second event
    ASSERT_EQ(arbiter_host_push(host, batch.data(), batch.size()), ARBITER_OK) << arbiter_host_last_error(host);
    EXPECT_EQ(state.calls, 1);
    EXPECT_EQ(state.push_status, ARBITER_ERR_INVALID_ARGUMENT);
    EXPECT_NE(state.push_error.find("called from inside the action callback"), std::string::npos)
        << state.push_error;

    // The host survived the destroy it was asked for inside, and the replacement hears the
    // next action.
    arbiter::BatchBuilder second("relay", 2);
    auto next = positions(second, 2, 2);
    ASSERT_EQ(arbiter_host_push(host, next.data(), next.size()), ARBITER_OK) << arbiter_host_last_error(host);
    EXPECT_EQ(state.calls, 1);
    EXPECT_EQ(state.replacement_calls, 1);
    arbiter_host_destroy(host);
}

}  // namespace
