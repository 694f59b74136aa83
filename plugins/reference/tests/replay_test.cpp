// End to end: one recorded match per area (hits, items, stats, sessions, clock) through
// the `arbiter` executable, the host loading the built reference plugin from
// server_config.toml; and the bundled sample match. Honest players, lag included, must come
// out Clear, the cheaters FlagForReview on the check that fits.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arbiter/sdk/batch_builder.hpp>

#include "arbiter/host/event_file.hpp"

namespace {

using arbiter::BatchBuilder;
namespace build = arbiter::build;

constexpr int64_t kTickUs = 50'000;
constexpr int64_t kStartUnixUs = 1'790'000'000'000'000;

int64_t us(double s) {
    return std::llround(s * 1e6);
}

build::PlayerJoin player_join(std::string account, bool reconnect, std::string version,
                              uint64_t address) {
    build::PlayerJoin j;
    j.account_id = std::move(account);
    j.client_version = std::move(version);
    j.handshake = "arena/7";
    j.address_hash = address;
    j.reconnect = reconnect;
    return j;
}

// The events of one match, sorted by relay time, cut into batches of a quarter second.
class Recording {
  public:
    template <class E>
    Recording& at(double t_s, uint32_t player, E body) {
        const int64_t t = us(t_s);
        events_.push_back({t, [=](BatchBuilder& b) {
                               b.add(t, static_cast<uint64_t>(t / kTickUs), player, body);
                           }});
        return *this;
    }

    std::vector<std::vector<uint8_t>> batches(const std::string& relay, uint64_t match) const {
        auto events = events_;
        std::stable_sort(events.begin(), events.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        BatchBuilder builder(relay, match);
        std::vector<std::vector<uint8_t>> out;
        int64_t current = 0;
        for (const auto& [t, add] : events) {
            if (t / 250'000 != current && builder.event_count() > 0)
                out.push_back(builder.finish());
            current = t / 250'000;
            add(builder);
        }
        if (builder.event_count() > 0) out.push_back(builder.finish());
        return out;
    }

  private:
    std::vector<std::pair<int64_t, std::function<void(BatchBuilder&)>>> events_;
};

// A match frame: start, joins, positions at 20 Hz for every player (with a 0.8 s lag spike
// and its burst for player 1 at 20 s), the relay's ticks, and `end` at `length_s`, sent
// for `end_player` (0: the whole match).
Recording frame(const std::vector<uint32_t>& players, double length_s,
                build::MatchEnd end = build::MatchEnd{}, uint32_t end_player = 0) {
    Recording r;
    build::MatchStart start;
    start.game = "arena";
    start.tick_rate_hz = 20.0f;
    start.started_unix_us = kStartUnixUs;
    r.at(0.0, 0, start);
    for (uint32_t p : players) {
        r.at(0.001 * p, p, player_join("account-" + std::to_string(p), false, "1.4.2", 1000 + p));
        for (double t = 0.05; t < length_s; t += 0.05) {
            const double received = p == 1 && t > 20.0 && t <= 20.8 ? 20.8 + t / 1000.0 : t;
            r.at(received, p, build::Position{.position = {float(p * 10), float(t), 0}});
        }
    }
    for (double t = 0.049; t < length_s; t += 0.05)
        r.at(t, 0, build::TickBoundary{.tick_lag_us = 500});
    end.ended_unix_us = kStartUnixUs + us(length_s);
    r.at(length_s, end_player, end);
    return r;
}

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

std::map<uint32_t, nlohmann::json> parse(const std::string& out) {
    std::map<uint32_t, nlohmann::json> assessments;
    size_t start = 0;
    while (start < out.size()) {
        size_t end = out.find('\n', start);
        if (end == std::string::npos) end = out.size();
        if (end > start) {
            auto line = nlohmann::json::parse(out.substr(start, end - start));
            assessments[line["player"].get<uint32_t>()] = line;
        }
        start = end + 1;
    }
    return assessments;
}

// Writes the match and a server_config.toml with `plugin_config` under the plugin's
// config table, replays it, and returns each player's assessment.
std::map<uint32_t, nlohmann::json> replay(const std::string& name, const Recording& match,
                                          const std::string& plugin_config) {
    const std::filesystem::path dir = std::filesystem::path(REFERENCE_WORK_DIR) / name;
    std::filesystem::create_directories(dir);
    const auto events = dir / "match.arbev";
    const auto config = dir / "server_config.toml";
    arbiter::host::write_event_file(events, match.batches("relay-" + name, 1));
    {
        std::ofstream out(config);
        out << "[host]\nserver_id = \"reference-replay-test\"\nlog_level = \"warn\"\n\n"
            << "[aggregation]\nmonitor_threshold = 0.3\nreview_threshold = 0.7\n\n"
            << "[plugins.reference]\nlibrary = \"" << REFERENCE_PLUGIN << "\"\n\n"
            << plugin_config;
    }
    const auto outcome =
        run_command(std::string("'") + ARBITER_EXE + "' replay '" + config.string() + "' '" +
                    events.string() + "' --json 2>'" + (dir / "stderr.txt").string() + "'");
    EXPECT_EQ(outcome.exit_status, 0) << outcome.out;
    return parse(outcome.out);
}

std::string top_code(const nlohmann::json& assessment) {
    const auto& signals = assessment["signals"];
    return signals.empty() ? std::string() : signals[0]["code"].get<std::string>();
}

void expect(std::map<uint32_t, nlohmann::json>& assessments, const std::vector<uint32_t>& honest,
            const std::map<uint32_t, std::string>& cheaters) {
    ASSERT_EQ(assessments.size(), honest.size() + cheaters.size());
    for (uint32_t p : honest)
        EXPECT_EQ(assessments[p]["action"], "Clear") << assessments[p].dump(2);
    for (const auto& [p, code] : cheaters) {
        EXPECT_EQ(assessments[p]["action"], "FlagForReview") << assessments[p].dump(2);
        EXPECT_EQ(top_code(assessments[p]), code) << assessments[p].dump(2);
    }
}

const char* kWeapons = R"([plugins.reference.config.hits.weapons.rifle]
range_m = 80.0
rounds_per_minute = 600.0
max_damage = 12.0
)";

build::Hit hit(uint32_t target, double range_m, double damage = 10.0) {
    return build::Hit{.target_player = target,
                      .weapon = "rifle",
                      .range_m = static_cast<float>(range_m),
                      .damage = static_cast<float>(damage)};
}

TEST(Replay, HitsMatch) {
    // 1 honest, 8 shots a second through its lag spike; 2 beyond range; 3 through walls;
    // 4 rapid fire, 25 shots a second; 5 the target, honest.
    Recording r = frame({1, 2, 3, 4, 5}, 60.0);
    for (double t = 5.0; t < 50.0; t += 0.125) {
        const double received = t > 20.0 && t <= 20.8 ? 20.8 + t / 1000.0 + 0.0001 : t;
        auto h = hit(5, 30.0 + std::fmod(t * 7.0, 50.0));
        h.claimed_tick = static_cast<uint64_t>(t / 0.05);
        r.at(received, 1, h);
    }
    for (int i = 0; i < 10; ++i)
        r.at(10.0 + i * 3.0, 2, hit(5, 150.0));
    for (int i = 0; i < 5; ++i) {
        auto h = hit(5, 40.0);
        h.line_of_sight = false;
        r.at(12.0 + i * 5.0, 3, h);
    }
    for (double t = 15.0; t < 25.0; t += 0.04)
        r.at(t, 4, hit(5, 30.0));
    auto assessments = replay("hits", r, kWeapons);
    expect(assessments, {1, 5},
           {{2, "hits.range"}, {3, "hits.line_of_sight"}, {4, "hits.fire_rate"}});
    EXPECT_EQ(assessments[2]["signals"][0]["plugin"], "reference");
    EXPECT_GT(assessments[2]["signals"][0]["evidence"]["range_m"].get<double>(), 100.0);
}

TEST(Replay, ItemsMatch) {
    // 1 honest; 2 doubles a stack; 3 holds the crown twice; 4 potions faster than they
    // respawn; 5 an item the game does not have.
    Recording r = frame({1, 2, 3, 4, 5}, 120.0);
    auto inv = [](const char* id, int32_t delta, int32_t after, const char* source) {
        return build::Inventory{
            .item_id = id, .delta = delta, .count_after = after, .source = source};
    };
    int wood = 0;
    for (int i = 0; i < 30; ++i) {
        wood += 2;
        r.at(2.0 + i * 3.0, 1, inv("wood", 2, wood, "pickup"));
    }
    r.at(5.0, 1, inv("crown", 1, 1, "pickup"));
    for (int i = 0; i < 4; ++i)
        r.at(10.0 + i * 31.0, 1, inv("potion", 1, i + 1, "pickup"));
    r.at(10.0, 2, inv("wood", 40, 40, "pickup"));
    r.at(20.0, 2, inv("wood", 40, 80, "trade"));
    r.at(10.0, 3, inv("crown", 1, 1, "pickup"));
    r.at(30.0, 3, inv("crown", 1, 2, "trade"));
    for (int i = 0; i < 8; ++i)
        r.at(10.0 + i * 5.0, 4, inv("potion", 1, i + 1, "pickup"));
    r.at(10.0, 5, inv("godsword", 1, 1, "pickup"));
    auto assessments = replay("items", r, R"([plugins.reference.config.items.items.wood]
stack = 64
[plugins.reference.config.items.items.potion]
stack = 8
respawn_s = 30.0
[plugins.reference.config.items.items.crown]
unique = true
)");
    expect(assessments, {1},
           {{2, "items.stack"}, {3, "items.unique"}, {4, "items.rate"}, {5, "items.unknown"}});
}

TEST(Replay, StatsMatch) {
    // 1 honest, hurt when hit; 2 farms experience; 3 takes 30 hits and no damage;
    // 4 spends gold that never goes down.
    Recording r = frame({1, 2, 3, 4}, 120.0);
    double xp1 = 0, xp2 = 0;
    for (int i = 0; i < 10; ++i)
        r.at(5.0 + i * 11.0, 1,
             build::Stat{.stat = "experience", .delta = 40, .value_after = xp1 += 40});
    for (int i = 0; i < 50; ++i)
        r.at(5.0 + i * 2.0, 2,
             build::Stat{.stat = "experience", .delta = 400, .value_after = xp2 += 400});
    for (int i = 0; i < 30; ++i) {
        r.at(10.0 + i, 3, hit(1, 20.0));
        r.at(10.02 + i, 1,
             build::Stat{.stat = "damage_taken", .delta = 10, .value_after = 10.0 * (i + 1)});
        r.at(10.5 + i, 1, hit(3, 20.0));
    }
    r.at(5.0, 4, build::Stat{.stat = "resource.gold", .delta = 100, .value_after = 100});
    for (int i = 0; i < 4; ++i)
        r.at(20.0 + i * 10.0, 4,
             build::Stat{.stat = "resource.gold", .delta = -25, .value_after = 100});
    auto assessments = replay("stats", r, kWeapons);
    expect(assessments, {1},
           {{2, "stats.xp_rate"}, {3, "stats.invulnerable"}, {4, "stats.resource"}});
}

TEST(Replay, SessionsMatch) {
    // 1 honest, drops twice; 2 reconnects every 5 s; 3 a modified client; 4 honest, whose
    // account 5 also joins from elsewhere.
    Recording r = frame({1, 2, 3, 4}, 90.0);
    auto join = player_join;
    for (double t : {20.0, 60.0}) {
        r.at(t, 1, build::PlayerLeave{.reason = "timeout"});
        r.at(t + 3.0, 1, join("account-1", true, "1.4.2", 1001));
    }
    for (int i = 0; i < 12; ++i) {
        r.at(10.0 + i * 5.0, 2, build::PlayerLeave{.reason = "quit"});
        r.at(11.0 + i * 5.0, 2, join("account-2", true, "1.4.2", 1002));
    }
    r.at(0.5, 3, join("account-3", true, "1.4.2-hax", 1003));
    r.at(30.0, 5, join("account-4", false, "1.4.2", 77));
    auto assessments = replay("sessions", r, R"([plugins.reference.config.sessions]
client_versions = ["1.4.2"]
handshakes = ["arena/7"]
)");
    expect(assessments, {1, 4},
           {{2, "sessions.reconnect_spam"},
            {3, "sessions.client_version"},
            {5, "sessions.two_places"}});
}

TEST(Replay, ClockMatch) {
    // 1 honest orders through its lag spike; 2 a client clock 30 % fast; 3 claims its run
    // took 80 s of the 100 s the relay saw.
    // The run's end names the player whose run it was.
    build::MatchEnd end;
    end.claimed_length_us = us(80.0);
    Recording r = frame({1, 2, 3}, 100.0, end, 3);
    for (double t = 1.0; t < 95.0; t += 0.25) {
        const double received = t > 20.0 && t <= 20.8 ? 20.8 + t / 1000.0 + 0.0001 : t;
        r.at(received, 1,
             build::Order{.claimed_tick = static_cast<uint64_t>(t / 0.05),
                          .client_time_us = 9'000'000 + us(t)});
        r.at(t, 2,
             build::Order{.claimed_tick = static_cast<uint64_t>(t * 1.3 / 0.05),
                          .client_time_us = us(t * 1.3)});
    }
    auto assessments = replay("clock", r, "");
    expect(assessments, {1}, {{2, "clock.tick_ahead"}, {3, "clock.run_length"}});
}

TEST(Replay, TheSampleMatchGetsTheReadmesReferenceSignals) {
    // The sample's reference table, with this build's plugin (the other plugins of
    // samples/server_config.toml are other targets): the new areas add nothing to it.
    const std::filesystem::path dir = std::filesystem::path(REFERENCE_WORK_DIR) / "sample";
    std::filesystem::create_directories(dir);
    const auto config = dir / "server_config.toml";
    {
        std::ofstream out(config);
        out << "[host]\nserver_id = \"sample-host\"\nlog_level = \"warn\"\n\n"
            << "[aggregation]\nmonitor_threshold = 0.3\nreview_threshold = 0.7\n\n"
            << "[plugins.reference]\nlibrary = \"" << REFERENCE_PLUGIN << "\"\n\n"
            << "[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = 1.1\n"
            << "window_s = 1.0\n";
    }
    const std::filesystem::path samples = ARBITER_SAMPLES_DIR;
    const auto outcome =
        run_command(std::string("'") + ARBITER_EXE + "' replay '" + config.string() + "' '" +
                    (samples / "sample-match.arbev").string() + "' --json");
    ASSERT_EQ(outcome.exit_status, 0) << outcome.out;
    auto assessments = parse(outcome.out);
    ASSERT_EQ(assessments.size(), 6u) << outcome.out;
    for (uint32_t p : {1u, 2u, 3u, 4u}) {
        EXPECT_EQ(assessments[p]["action"], "Clear") << assessments[p].dump(2);
        EXPECT_TRUE(assessments[p]["signals"].empty()) << assessments[p].dump(2);
    }
    // README: mallory reference:movement.speed 0.90; trent movement.speed 1.00 and
    // movement.teleport 0.95, and nothing else from this plugin.
    std::map<uint32_t, std::map<std::string, double>> scores;
    for (uint32_t p : {5u, 6u}) {
        EXPECT_EQ(assessments[p]["action"], "FlagForReview") << assessments[p].dump(2);
        for (const auto& signal : assessments[p]["signals"])
            scores[p][signal["code"].get<std::string>()] =
                std::round(signal["weighted_score"].get<double>() * 100.0) / 100.0;
    }
    EXPECT_EQ(scores[5], (std::map<std::string, double>{{"movement.speed", 0.90}}));
    EXPECT_EQ(scores[6], (std::map<std::string, double>{{"movement.speed", 1.00},
                                                        {"movement.teleport", 0.95}}));
}

}  // namespace
