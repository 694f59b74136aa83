// End to end: a recorded match through the `arbiter` executable, the host loading the
// built lagpool plugin from server_config.toml. The match: an honest fast player who
// digs as fast as the game allows, an honest player through lag spikes and packet loss,
// one the server teleports twice, a speed hacker and a digging bot, on a relay that
// stalls twice for 8 s. The honest players must come out Clear, the cheaters
// FlagForReview.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/event_file.hpp"
#include "match_script.hpp"

namespace {

using namespace lagpool_test;

struct Outcome {
    int exit_status = -1;
    std::string out;
};

Outcome run_command(const std::string& command) {
    Outcome outcome;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return outcome;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
        outcome.out.append(buffer, n);
    const int status = pclose(pipe);
    outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return outcome;
}

Timeline recorded_match() {
    constexpr int64_t kLength = 100 * kSecond;
    Timeline timeline;
    add_match_frame(timeline, {1, 2, 3, 4, 5}, kLength, /*max_noise_us=*/250'000);
    // 1: honest, fast: 19.5 m/s, jumping, digging at the game's limit.
    add_runner(timeline, {.player = 1,
                          .to_us = kLength,
                          .speed = [](double) { return 19.5; },
                          .jumps = true,
                          .seed = 101});
    add_actor(timeline, {.player = 1,
                         .from_us = 0,
                         .to_us = kLength,
                         .interval_us = 150'000,
                         .jitter_us = 20'000,
                         .seed = 102});
    // 2: honest, 17 m/s, through a 0.8 s and a 3 s lag spike with 10 % packet loss.
    add_runner(timeline, {.player = 2,
                          .to_us = kLength,
                          .speed = [](double) { return 17.0; },
                          .seed = 103,
                          .packet_loss = 0.1,
                          .spikes = {{20 * kSecond, 20'800'000}, {50 * kSecond, 53 * kSecond}}});
    // 3: honest, 6 m/s, respawned 300 m away by the server twice.
    add_runner(timeline, {.player = 3,
                          .to_us = kLength,
                          .speed = [](double) { return 6.0; },
                          .seed = 104,
                          .server_teleports = {40 * kSecond, 80 * kSecond}});
    // 4: speed hack, 32 m/s from 20 to 60 s.
    add_runner(timeline, {.player = 4,
                          .to_us = kLength,
                          .speed = [](double t) { return t >= 20.0 && t < 60.0 ? 32.0 : 10.0; },
                          .seed = 105});
    // 5: walks, and a bot digs for it every 60 ms from 10 to 90 s.
    add_runner(timeline,
               {.player = 5, .to_us = kLength, .speed = [](double) { return 5.0; }, .seed = 106});
    add_actor(timeline, {.player = 5,
                         .from_us = 10 * kSecond,
                         .to_us = 90 * kSecond,
                         .interval_us = 60'000,
                         .jitter_us = 5'000,
                         .seed = 107});
    // The whole server lags: two 8 s stalls.
    timeline.stall(30 * kSecond, 8 * kSecond);
    timeline.stall(65 * kSecond, 8 * kSecond);
    return timeline;
}

// Writes the match and a config of the lagpool plugin (its table's lines in
// `plugin_config`), runs `arbiter replay --json` and returns each player's assessment.
std::map<uint32_t, nlohmann::json> replay(const std::string& name, const Timeline& timeline,
                                          const std::string& plugin_config = "") {
    const std::filesystem::path dir = std::filesystem::path(LAGPOOL_WORK_DIR) / name;
    std::filesystem::create_directories(dir);
    const auto events = dir / "lagpool-match.arbev";
    const auto config = dir / "server_config.toml";
    arbiter::host::write_event_file(events, timeline.batches(200, "lagpool-relay", 7));
    {
        std::ofstream out(config);
        out << "[host]\nserver_id = \"lagpool-replay-test\"\nlog_level = \"warn\"\n\n"
            << "[aggregation]\nmonitor_threshold = 0.3\nreview_threshold = 0.7\n\n"
            << "[plugins.lagpool]\nlibrary = \"" << LAGPOOL_PLUGIN << "\"\n"
            << plugin_config;
        EXPECT_TRUE(out.good());
    }

    const auto outcome =
        run_command(std::string("'") + ARBITER_EXE + "' replay '" + config.string() + "' '" +
                    events.string() + "' --json 2>'" + (dir / "stderr.txt").string() + "'");
    EXPECT_EQ(outcome.exit_status, 0) << outcome.out;

    std::map<uint32_t, nlohmann::json> assessments;
    size_t start = 0;
    while (start < outcome.out.size()) {
        size_t end = outcome.out.find('\n', start);
        if (end == std::string::npos) end = outcome.out.size();
        if (end > start) {
            auto line = nlohmann::json::parse(outcome.out.substr(start, end - start));
            assessments[line["player"].get<uint32_t>()] = line;
        }
        start = end + 1;
    }
    return assessments;
}

std::string top_code(std::map<uint32_t, nlohmann::json>& assessments, uint32_t player) {
    const auto& signals = assessments[player]["signals"];
    return signals.empty() ? std::string() : signals[0]["code"].get<std::string>();
}

TEST(Replay, ARecordedMatchIsAssessedCorrectly) {
    auto assessments = replay("recorded", recorded_match());
    ASSERT_EQ(assessments.size(), 5u);
    for (uint32_t honest : {1u, 2u, 3u})
        EXPECT_EQ(assessments[honest]["action"], "Clear") << assessments[honest].dump(2);
    for (uint32_t cheater : {4u, 5u})
        EXPECT_EQ(assessments[cheater]["action"], "FlagForReview") << assessments[cheater].dump(2);

    EXPECT_EQ(top_code(assessments, 4), "movement.overdraw");
    EXPECT_EQ(top_code(assessments, 5), "dig.overdraw");
    EXPECT_EQ(assessments[4]["signals"][0]["plugin"], "lagpool");
    EXPECT_EQ(assessments[4]["signals"][0]["evidence"]["budget"], "movement");
}

// Digs whose time the server states (Luanti: get_dig_params().time, from the node and the
// tool), each after its "dig" order as the Luanti bridge sends them: 1.0 s a dig. One
// player digs at that pace, another ten times as fast; only the stated budget decides.
TEST(Replay, StatedDigTimesOverdrawnTenTimesOverAreFlaggedAndAtRealPaceAreNot) {
    constexpr int64_t kLength = 60 * kSecond;
    Timeline timeline;
    add_match_frame(timeline, {1, 2}, kLength);
    add_actor(timeline, {.player = 1,
                         .from_us = kSecond,
                         .to_us = kLength,
                         .interval_us = kSecond,
                         .jitter_us = 100'000,
                         .seed = 201,
                         .stat = "dig_time",
                         .stated_s = 1.0});
    add_actor(timeline, {.player = 2,
                         .from_us = kSecond,
                         .to_us = kLength,
                         .interval_us = 100'000,
                         .jitter_us = 10'000,
                         .seed = 202,
                         .stat = "dig_time",
                         .stated_s = 1.0});
    auto assessments = replay("stated", timeline,
                              "[plugins.lagpool.config.kinds.movement]\n"
                              "[plugins.lagpool.config.kinds.dig_time]\ncost = \"stated\"\n");
    ASSERT_EQ(assessments.size(), 2u);
    EXPECT_EQ(assessments[1]["action"], "Clear") << assessments[1].dump(2);
    EXPECT_EQ(assessments[2]["action"], "FlagForReview") << assessments[2].dump(2);
    EXPECT_EQ(top_code(assessments, 2), "dig_time.overdraw");
    EXPECT_EQ(assessments[2]["signals"][0]["evidence"]["latest"]["stated_s"], 1.0);
}

}  // namespace
