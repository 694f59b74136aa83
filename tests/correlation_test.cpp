// Tier 6 as evidence ([correlation]): what other servers reported of an account, read from
// the store, adds up with what this server sees, as a source the operator weighs and
// classifies; timing elsewhere stays timing; dismissed flags and this server's own do not
// count. Real hosts, the echo test plugin (a 0.9 signal for player 1, "account-1", on
// every position update) at weight 0.6, and one SQLite store.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "support/host_helpers.hpp"
#include "support/temp_dir.hpp"

namespace arbiter {
namespace {

using nlohmann::json;

class Correlation : public ::testing::Test {
  protected:
    std::string config(const std::string& server_id, bool correlate,
                       const std::string& extra_plugin_keys = "",
                       const std::string& correlation_keys = "") const {
        return "[host]\nserver_id = \"" + server_id +
               "\"\nwork_dir = " + test::toml_literal(dir_.path()) +
               "\n\n[store]\npath = " + test::toml_literal(dir_ / "review.db") +
               "\ncommit_interval_ms = 20\n" +
               (correlate ? "\n[correlation]\nenabled = true\n" + correlation_keys : "") +
               test::plugin_table("echo", test::test_plugin("echo")) + "weight = 0.6\n" +
               extra_plugin_keys;
    }

    // One match of 10 batches on `relay` through a host of its own; player 1's final
    // assessment, once the host has closed (its store flushed).
    host::Assessment play(const std::string& config_text, const std::string& relay) {
        auto config = test::parse(config_text, dir_.path());
        auto store = host::attach_store(config);
        host::Host host(std::move(config), std::move(store));
        BatchBuilder builder(relay, test::kTestMatch);
        for (int i = 0; i < 10; ++i) {
            const auto problem = host.push(test::echo_batch(builder, 1'000'000 + i * 50'000));
            EXPECT_FALSE(problem) << *problem;
        }
        host.end_match(relay, test::kTestMatch);
        auto assessment = host.assessment({relay, test::kTestMatch, 1});
        EXPECT_TRUE(host.close());
        return assessment.value_or(host::Assessment{});
    }

    json dossier(const std::string& subject) {
        host::StoreSettings store;
        store.path = (dir_ / "review.db").string();
        host::ReviewStore review(store);
        const auto found = review.dossier(subject);
        return found ? json::parse(found->json) : json();
    }

    test::TempDir dir_;
};

TEST_F(Correlation, TwoServersEachAtMonitorAddUpToReview) {
    // Alone, each server puts account-1 at Monitor (0.54 against a review threshold of 0.7).
    const auto first = play(config("server-a", false), "relay-a");
    EXPECT_EQ(first.action, host::Action::monitor);
    EXPECT_NEAR(first.combined_score, 0.54, 1e-9);
    const auto without = play(config("server-b", false), "relay-b");
    EXPECT_EQ(without.action, host::Action::monitor);

    // With [correlation], a third server that sees the same 0.54 itself adds the strongest
    // of what the other two reported (0.54, not the two combined): 1 - 0.46^2.
    const auto with = play(config("server-c", true), "relay-c");
    EXPECT_EQ(with.action, host::Action::flag_for_review);
    EXPECT_NEAR(with.combined_score, 1 - 0.46 * 0.46, 1e-9);
    const auto check = test::find_check(with, "correlation", "elsewhere.validation");
    ASSERT_TRUE(check);
    EXPECT_EQ(check->model_class, host::ModelClass::validation);
    EXPECT_NEAR(check->weighted(), 0.54, 1e-9);
    const json evidence = json::parse(check->evidence_json);
    EXPECT_EQ(evidence["servers"], json({"server-a", "server-b"}));
    EXPECT_EQ(evidence["strongest"]["plugin"], "echo");

    // Its signals restate what others reported: the store does not count them as flags.
    const json stored = dossier("account-1");
    for (const auto& event : stored["events"]) EXPECT_NE(event["plugin"], "correlation");
}

TEST_F(Correlation, TheAnswerArrivesWhileTheMatchIsPlayed) {
    play(config("server-a", false), "relay-a");
    // The store is read off the event thread; its answer joins the aggregation at a later
    // batch, so the relay hears FlagForReview during the match, not only at its end.
    auto config_b = test::parse(config("server-b", true), dir_.path());
    auto store = host::attach_store(config_b);
    host::Host host(std::move(config_b), std::move(store));
    BatchBuilder builder("relay-b", test::kTestMatch);
    host::Action action = host::Action::clear;
    for (int i = 0; i < 400 && action != host::Action::flag_for_review; ++i) {
        ASSERT_FALSE(host.push(test::echo_batch(builder, 1'000'000 + i * 50'000)));
        action = host.assessment({"relay-b", test::kTestMatch, 1})->action;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(action, host::Action::flag_for_review);
    EXPECT_EQ(host.counters().correlation_signals, 1u);
    // Stamped with the player's first relay time, whichever batch the answer came with.
    const auto check = test::find_check(*host.assessment({"relay-b", test::kTestMatch, 1}),
                                        "correlation", "elsewhere.validation");
    ASSERT_TRUE(check);
    EXPECT_EQ(check->reported_at_us, 1'000'000);
    EXPECT_TRUE(host.close());
}

TEST_F(Correlation, TheOperatorWeighsItAndMayClassifyIt) {
    play(config("server-a", false), "relay-a");
    // Half weight: 0.27 beside 0.54 stays under review (1 - 0.46 * 0.73 = 0.66).
    const auto halved = play(config("server-b", true, "", "weight = 0.5\n"), "relay-b");
    EXPECT_EQ(halved.action, host::Action::monitor);
    EXPECT_NEAR(test::find_check(halved, "correlation", "elsewhere.validation")->weighted(), 0.27,
                1e-9);
    // Classified statistical: a class of its own, which needs a second class to reach review.
    const auto statistical =
        play(config("server-c", true, "", "class = \"statistical\"\n"), "relay-c");
    EXPECT_EQ(statistical.action, host::Action::monitor);
    EXPECT_EQ(test::find_check(statistical, "correlation", "elsewhere.validation")->model_class,
              host::ModelClass::statistical);
}

TEST_F(Correlation, TimingElsewhereStaysTimingSoItCannotFlagAlone) {
    // The echo plugin classed behavioural (as kaladin's timing checks are): two servers'
    // behavioural evidence adds up to 0.79, which without a second class is Monitor only.
    const std::string behavioural = "class = \"behavioural\"\n";
    play(config("server-a", false, behavioural), "relay-a");
    const auto with = play(config("server-b", true, behavioural), "relay-b");
    EXPECT_EQ(with.action, host::Action::monitor);
    EXPECT_NEAR(with.combined_score, 1 - 0.46 * 0.46, 1e-9);
    const auto check = test::find_check(with, "correlation", "elsewhere.behavioural");
    ASSERT_TRUE(check);
    EXPECT_EQ(check->model_class, host::ModelClass::behavioural);
}

TEST_F(Correlation, DismissedFlagsAndThisServersOwnDoNotCount) {
    play(config("server-a", false), "relay-a");
    // The same server again, on another relay: its own flags are not evidence from elsewhere.
    const auto again = play(config("server-a", true), "relay-a2");
    EXPECT_EQ(again.action, host::Action::monitor);
    EXPECT_FALSE(test::find_check(again, "correlation", "elsewhere.validation"));

    // A reviewer found account-1's flags a false positive: they no longer count anywhere.
    {
        host::StoreSettings store;
        store.path = (dir_ / "review.db").string();
        host::ReviewStore(store).record_verdict("account-1", "false_positive", "alice", "");
    }
    const auto after = play(config("server-b", true), "relay-b");
    EXPECT_EQ(after.action, host::Action::monitor);
    EXPECT_FALSE(test::find_check(after, "correlation", "elsewhere.validation"));
}

TEST(CorrelationConfig, NeedsAStoreAndKeepsItsSourceNameFree) {
    test::TempDir dir;
    auto problems = [&](const std::string& text) {
        try {
            test::parse(text, dir.path());
        } catch (const host::ConfigError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    EXPECT_NE(problems("[correlation]\nenabled = true\n").find("set [store] path or postgres"),
              std::string::npos);
    EXPECT_NE(problems("[store]\npath = \"a.db\"\n[correlation]\nenabled = true\n"
                       "class = \"social\"\n")
                  .find("correlation.class: expected \"validation\""),
              std::string::npos);
    EXPECT_NE(problems("[store]\npath = \"a.db\"\n[correlation]\nenabled = true\n" +
                       test::plugin_table("correlation", test::test_plugin("echo")))
                  .find("'correlation' names the store's signals"),
              std::string::npos);
    EXPECT_NE(problems("[store]\npath = \"a.db\"\n[correlation]\nwindow_days = 0\n")
                  .find("correlation.window_days"),
              std::string::npos);
}

}  // namespace
}  // namespace arbiter
