// `arbiter soak`: the plan (every player once, lengths in turn, long matches smaller), the
// sum of evaluations, the refusals, and a small slice of the soak itself through the
// bundled plugins with the sample config: honest players of every honest profile, none
// at FlagForReview, and nothing left behind in the work folder.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/tools/soak.hpp"
#include "support.hpp"

namespace arbiter::tools::test {
namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

SoakOptions options(uint32_t players) {
    SoakOptions o;
    o.players = players;
    o.work_dir = "/unused";
    return o;
}

TEST(SoakPlan, CoversEveryPlayerOnceWithTheLengthsInTurn) {
    SoakOptions o = options(10'000);
    const auto plan = plan_soak(o);
    uint64_t players = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
        EXPECT_EQ(plan[i].seed, 1 + i);
        EXPECT_EQ(plan[i].duration_s, o.durations_s[i % o.durations_s.size()]);
        // No match holds more than max_player_seconds: the two-hour ones are smaller.
        EXPECT_LE(plan[i].total() * plan[i].duration_s, o.max_player_seconds);
        EXPECT_LE(plan[i].total(), o.match_players);
        players += plan[i].total();
    }
    EXPECT_EQ(players, 10'000u);
    EXPECT_EQ(plan.front().total(), 250u);                  // 10 min: match_players
    EXPECT_EQ(plan[3].total(), 69u);                        // 2 h: 500,000 / 7,200
    EXPECT_EQ(plan.front().players.size(), 5u);             // every honest profile...
    EXPECT_EQ(plan.front().players.front().profile, "honest");
    EXPECT_EQ(plan.front().players.front().count, 50u);     // ...alike
}

TEST(SoakPlan, SplitsByWeightAndKeepsTheCount) {
    SoakOptions o = options(7);
    o.mix = parse_player_mix("honest=3,honest_tab_out=1");
    const auto plan = plan_soak(o);
    ASSERT_EQ(plan.size(), 1u);
    ASSERT_EQ(plan[0].players.size(), 2u);
    EXPECT_EQ(plan[0].players[0].count + plan[0].players[1].count, 7u);
    EXPECT_EQ(plan[0].players[0].count, 5u);  // 5.25 and 1.75: the larger remainder gets one
}

TEST(SoakPlan, RefusesWhatIsNotAnHonestSoak) {
    auto refused = [](SoakOptions o, const std::string& expected) {
        try {
            plan_soak(o);
            ADD_FAILURE() << "accepted; expected " << expected;
        } catch (const std::invalid_argument& error) {
            EXPECT_TRUE(contains(error.what(), expected)) << error.what();
        }
    };
    refused(options(0), "--players");
    SoakOptions cheat = options(10);
    cheat.mix = parse_player_mix("honest=1,speed_hack=1");
    refused(cheat, "'speed_hack' is a cheating profile");
    SoakOptions zero = options(10);
    zero.mix = parse_player_mix("honest=0");
    refused(zero, "every weight is 0");
    SoakOptions no_length = options(10);
    no_length.durations_s = {};
    refused(no_length, "--durations-s");
    SoakOptions too_long = options(10);
    too_long.durations_s = {600, 90'000};
    refused(too_long, "--durations-s");
}

TEST(SoakMerge, SumsProfilesChecksAndInput) {
    EvaluationReport a, b;
    a.profiles = {{"honest", false, 3, {2, 1, 0, 0}}};
    a.all_honest = {"all honest", false, 3, {2, 1, 0, 0}};
    a.honest_by_check["reference movement.speed"] = {1, 0};
    a.files = 1;
    a.events = 10;
    b.profiles = {{"honest_tab_out", false, 2, {2, 0, 0, 0}}, {"honest", false, 1, {0, 0, 1, 0}}};
    b.all_honest = {"all honest", false, 3, {2, 0, 1, 0}};
    b.honest_by_check["reference movement.speed"] = {1, 1};
    b.files = 1;
    b.events = 5;
    merge(a, b);
    ASSERT_EQ(a.profiles.size(), 2u);
    EXPECT_EQ(a.profiles[0].profile, "honest");
    EXPECT_EQ(a.profiles[0].players, 4u);
    EXPECT_EQ(a.profiles[0].actions[2], 1u);
    EXPECT_EQ(a.profiles[1].profile, "honest_tab_out");
    EXPECT_EQ(a.all_honest.players, 6u);
    EXPECT_EQ(a.honest_by_check["reference movement.speed"].monitor_or_above, 2u);
    EXPECT_EQ(a.honest_by_check["reference movement.speed"].flag_or_above, 1u);
    EXPECT_EQ(a.files, 2u);
    EXPECT_EQ(a.events, 15u);
}

// The suite's slice of the soak: 100 honest players of the five honest profiles in two
// matches (two and five minutes), through the three bundled plugins. `scripts/soak.sh`
// runs the whole of it (docs/recorded-matches.md has the figures).
TEST(SoakCommand, ASliceThroughTheBundledPluginsFlagsNoHonestPlayer) {
    TempDir dir;
    std::filesystem::create_directories(dir / "work");
    auto r = run_arbiter({"soak", SAMPLE_CONFIG, "--players", "100", "--match-players", "50",
                          "--durations-s", "120,300", "--seed", "7", "--work-dir",
                          (dir / "work").string(), "--json"},
                         dir.path());
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "match 2/2: seed 8, 300 s, 50 players")) << r.err;
    const auto report = nlohmann::json::parse(r.out);
    EXPECT_EQ(report["all_honest"]["players"], 100);
    EXPECT_EQ(report["all_honest"]["actions"]["FlagForReview"], 0) << r.out;
    EXPECT_EQ(report["all_honest"]["actions"]["ShadowRestrict"], 0) << r.out;
    EXPECT_EQ(report["profiles"].size(), 5u) << r.out;
    EXPECT_EQ(report["input"]["files"], 2);
    EXPECT_EQ(report["input"]["refused"], 0);
    EXPECT_TRUE(report["honest_by_check"].is_array());
    // Each match was deleted once evaluated, and the soak's own folder with them.
    EXPECT_TRUE(std::filesystem::is_empty(dir / "work"));
}

// Stopped half-way (SIGTERM, ^C, a hang-up), the soak removes the match it was writing, up
// to a gigabyte, and its folder, and ends by the signal.
TEST(SoakCommand, AnInterruptedSoakLeavesNothingBehind) {
    TempDir dir;
    const auto work = dir / "work";
    std::filesystem::create_directories(work);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::freopen("/dev/null", "w", stderr);
        ::execl(ARBITER_EXE, ARBITER_EXE, "soak", SAMPLE_CONFIG, "--players", "2000",
                "--durations-s", "600", "--work-dir", work.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Until the first match is being written into the soak's own folder.
    auto writing = [&] {
        for (const auto& folder : std::filesystem::directory_iterator(work))
            if (folder.is_directory() && !std::filesystem::is_empty(folder.path())) return true;
        return false;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!writing() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(writing()) << "no match was written within a minute";
    ::kill(pid, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    // Ended by the signal, as a shell (or systemd) expects of a program it stopped.
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    EXPECT_TRUE(std::filesystem::is_empty(work));
}

TEST(SoakCommand, BadArgumentsAreRefusedWithTheReason) {
    TempDir dir;
    struct Case {
        std::vector<std::string> args;
        int status;
        const char* expected;
    };
    const Case cases[] = {
        {{"soak"}, 1, "one config, please"},
        {{"soak", SAMPLE_CONFIG, "--players", "many"}, 1, "--players 'many'"},
        {{"soak", SAMPLE_CONFIG, "--durations-s", "600,,60"}, 1, "--durations-s '600,,60'"},
        {{"soak", SAMPLE_CONFIG, "--mix", "aimbot=1"}, 1, "'aimbot' is a cheating profile"},
        {{"soak", SAMPLE_CONFIG, "--mix", "nobody=1"}, 1, "--mix: unknown profile 'nobody'"},
        {{"soak", SAMPLE_CONFIG, "--players", "1", "--work-dir", "/nonexistent/x"}, 2,
         "cannot make a folder"},
        {{"soak", "absent.toml"}, 2, "absent.toml"},
    };
    for (const Case& c : cases) {
        auto r = run_arbiter(c.args, dir.path());
        EXPECT_EQ(r.exit_status, c.status) << c.expected << ": " << r.err;
        EXPECT_TRUE(contains(r.err, c.expected)) << r.err;
    }
}

}  // namespace
}  // namespace arbiter::tools::test
