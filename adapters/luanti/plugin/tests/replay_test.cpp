// End to end: Luanti players as the bridge sends them, written to an event file and
// replayed by the `arbiter` executable, which finds the plugin by its bundled name
// (`library = "luanti"`). Honest walkers, jumpers, a fall from a tower and a runner with
// the fast privilege are Clear; a speeder, a hoverer and a player through stone, none
// allowed to, are flagged by the matching check; the same walk through stone with the
// noclip privilege is Clear.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/event_file.hpp"
#include "luanti_script.hpp"

namespace {

using namespace luanti_test;

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

std::vector<Player> players() {
    return {
        {.id = 1, .name = "walker", .path = [](double t) { return walking(t, 4); }},
        {.id = 2,
         .name = "jumper",
         .path =
             [](double t) {
                 Step s = walking(t, 4);
                 s.z = jump_height(std::fmod(t, 1.5));
                 s.on_ground = s.z <= 0;
                 return s;
             }},
        {.id = 3,
         .name = "faller",
         .path =
             [](double t) {
                 // On a 50 m tower until 5 s, then off its edge at walking speed, to the ground.
                 Step s = walking(t, 4);
                 const double tau = t - 5;
                 s.z = tau <= 0 ? 50 : std::max(0.0, 50 - 0.5 * 9.81 * tau * tau);
                 s.on_ground = tau <= 0 || s.z <= 0;
                 return s;
             }},
        {.id = 4,
         .name = "courier",
         .allowance = R"({"fast":true})",
         .path = [](double t) { return walking(t, 20, 200); }},
        {.id = 5,
         .name = "speeder",
         .allowance = R"({"speed":1,"fast":false})",
         .path = [](double t) { return walking(t, 12, 100); },
         .extras = {{2 * kSecond, "luanti.cheat", R"({"type":"moved_too_fast"})"}}},
        {.id = 6,
         .name = "hoverer",
         .path =
             [](double t) {
                 // Up 3 m at 5 s as if jumping, and stays there.
                 Step s = walking(t, 4);
                 s.z = t < 5 ? 0 : std::min(3.0, 6 * (t - 5));
                 s.on_ground = t < 5;
                 return s;
             }},
        {.id = 7,
         .name = "mole",
         .path =
             [](double t) {
                 // Through a hill of stone from 10 to 30 s.
                 Step s = walking(t, 4);
                 s.inside = t >= 10 && t < 30;
                 return s;
             }},
        {.id = 8,
         .name = "builder",
         .allowance = R"({"noclip":true})",
         .path =
             [](double t) {
                 Step s = walking(t, 4);
                 s.inside = t >= 10 && t < 30;
                 return s;
             }},
    };
}

TEST(Replay, LuantiPlayersAreJudgedByTheirOwnAllowance) {
    const std::filesystem::path dir = LUANTI_WORK_DIR;
    std::filesystem::create_directories(dir);
    const auto events = dir / "luanti-match.arbev";
    const auto config = dir / "server_config.toml";
    arbiter::host::write_event_file(events, luanti_match(players(), 60 * kSecond));
    {
        std::ofstream out(config);
        out << "[host]\nserver_id = \"luanti-replay-test\"\nlog_level = \"warn\"\n\n"
            << "[plugins.luanti]\nlibrary = \"luanti\"\n";
        ASSERT_TRUE(out.good());
    }
    const auto outcome =
        run_command(std::string("'") + ARBITER_EXE + "' replay '" + config.string() + "' '" +
                    events.string() + "' --json 2>'" + (dir / "stderr.txt").string() + "'");
    ASSERT_EQ(outcome.exit_status, 0) << outcome.out;

    std::map<std::string, nlohmann::json> by_name;
    size_t start = 0;
    while (start < outcome.out.size()) {
        size_t end = outcome.out.find('\n', start);
        if (end == std::string::npos) end = outcome.out.size();
        if (end > start) {
            auto line = nlohmann::json::parse(outcome.out.substr(start, end - start));
            by_name[line["account_id"].get<std::string>()] = line;
        }
        start = end + 1;
    }
    ASSERT_EQ(by_name.size(), 8u) << outcome.out;
    for (const char* honest : {"walker", "jumper", "faller", "courier", "builder"})
        EXPECT_EQ(by_name[honest]["action"], "Clear") << by_name[honest].dump(2);
    const std::map<std::string, std::string> caught = {
        {"speeder", "luanti.speed"}, {"hoverer", "luanti.fly"}, {"mole", "luanti.noclip"}};
    for (const auto& [name, code] : caught) {
        const auto& assessment = by_name[name];
        EXPECT_EQ(assessment["action"], "FlagForReview") << assessment.dump(2);
        ASSERT_FALSE(assessment["signals"].empty()) << name;
        EXPECT_EQ(assessment["signals"][0]["code"], code) << assessment.dump(2);
        EXPECT_EQ(assessment["signals"][0]["plugin"], "luanti");
        EXPECT_EQ(assessment["signals"].size(), 1u) << assessment.dump(2);
    }
    // Why, for a reviewer: the speed against the limit the allowance gives, and what the
    // engine's own anti-cheat said.
    const auto& evidence = by_name["speeder"]["signals"][0]["evidence"];
    EXPECT_GT(evidence["speed_mps"].get<double>(), 11.0);
    EXPECT_DOUBLE_EQ(evidence["limit_mps"].get<double>(), 4.0 * 1.3);
    EXPECT_EQ(evidence["allowance"]["fast"], false);
    EXPECT_EQ(evidence["engine_reports"]["moved_too_fast"], 1);
}

}  // namespace
