// End to end: one recorded match per area (movement, hits, items, stats, sessions, clock)
// through the `arbiter` executable, the host loading the built reference plugin (and, for
// one account in two places, the accounts plugin) from server_config.toml; and the
// bundled sample match. Honest players, lag included, must come
// out Clear, the cheaters FlagForReview on the check that fits.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

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

// A folder of its own per test and process: ctest runs tests in parallel, and two builds'
// test runs may share a build tree.
std::filesystem::path work_dir(const std::string& name) {
    return std::filesystem::path(REFERENCE_WORK_DIR) / (name + "-" + std::to_string(::getpid()));
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
// config table (and `more_plugins`, other plugins' tables), replays it, and returns each
// player's assessment.
std::map<uint32_t, nlohmann::json> replay(const std::string& name, const Recording& match,
                                          const std::string& plugin_config,
                                          const std::string& more_plugins = "") {
    const std::filesystem::path dir = work_dir(name);
    std::filesystem::create_directories(dir);
    const auto events = dir / "match.arbev";
    const auto config = dir / "server_config.toml";
    arbiter::host::write_event_file(events, match.batches("relay-" + name, 1));
    {
        std::ofstream out(config);
        out << "[host]\nserver_id = \"reference-replay-test\"\nlog_level = \"warn\"\n\n"
            << "[aggregation]\nmonitor_threshold = 0.3\nreview_threshold = 0.7\n\n"
            << "[plugins.reference]\nlibrary = \"" << REFERENCE_PLUGIN << "\"\n\n"
            << plugin_config << "\n"
            << more_plugins;
    }
    const auto outcome =
        run_command(std::string("'") + ARBITER_EXE + "' replay '" + config.string() + "' '" +
                    events.string() + "' --json 2>'" + (dir / "stderr.txt").string() + "'");
    EXPECT_EQ(outcome.exit_status, 0) << outcome.out << "\n(see " << dir << ")";
    // Kept for a look when the replay failed; gone otherwise, one folder per run adding up.
    if (outcome.exit_status == 0) std::filesystem::remove_all(dir);
    return parse(outcome.out);
}

std::set<std::string> codes_of(const nlohmann::json& assessment) {
    std::set<std::string> out;
    for (const auto& signal : assessment["signals"])
        out.insert(signal["code"].get<std::string>());
    return out;
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
    // account 5 also joins from elsewhere: that one is the accounts plugin's to report, the
    // plugin built from these sources that runs unsharded.
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
    const std::string accounts =
        std::string("[plugins.accounts]\nlibrary = \"") + ACCOUNTS_PLUGIN + "\"\n";
    auto assessments = replay("sessions", r, R"([plugins.reference.config.sessions]
client_versions = ["1.4.2"]
handshakes = ["arena/7"]
)",
                              accounts);
    expect(assessments, {1, 4},
           {{2, "sessions.reconnect_spam"},
            {3, "sessions.client_version"},
            {5, "sessions.two_places"}});
    EXPECT_EQ(assessments[5]["signals"][0]["plugin"], "accounts") << assessments[5].dump(2);
    for (auto& [player, assessment] : assessments) {
        if (player == 5) continue;
        for (const auto& signal : assessment["signals"])
            EXPECT_NE(signal["plugin"], "accounts") << assessment.dump(2);
    }
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

// ---------------------------------------------------------------- movement

// Rolling terrain, as the server reports it under a player.
double terrain(double x, double y) {
    return 6.0 * std::sin(x / 45.0) + 3.0 * std::cos(y / 30.0);
}

// One player's movement at 20 Hz as the server sees it: where it is, whether it stands on the
// ground, and the terrain under it. Each tick the model gives the horizontal speed (along
// +x) and the height above the terrain (0: on the ground).
struct Spike {
    double at_s, silence_s;  // nothing heard for silence_s, then the updates in one burst
};

struct Track {
    uint32_t player = 0;
    double y = 0;
    bool ground_reports = true;
    std::vector<Spike> spikes = {};
    // Updates lost in [loss_from_s, loss_to_s), one in seven.
    double loss_from_s = -1, loss_to_s = -1;
};

template <class Model>
void add_track(Recording& r, const Track& track, double length_s, Model model) {
    double x = 0;
    int index = 0;
    for (double t = 0.05; t < length_s; t += 0.05, ++index) {
        const auto [speed, height] = model(t);
        x += speed * 0.05;
        double received = t;
        for (const Spike& spike : track.spikes)
            if (t > spike.at_s && t <= spike.at_s + spike.silence_s)
                received = spike.at_s + spike.silence_s + 0.0003 * (t - spike.at_s) / 0.05;
        if (t >= track.loss_from_s && t < track.loss_to_s && index % 7 == 0) continue;
        const double ground = terrain(x, track.y);
        build::Position p{.position = {float(x), float(track.y), float(ground + height)}};
        if (track.ground_reports) {
            p.on_ground = height == 0.0;
            p.ground_height = static_cast<float>(ground);
        }
        r.at(received, track.player, p);
    }
}

// Height of a jump at 4.5 m/s and 9.81 m/s² (0.92 s in the air) that starts every `every_s`
// seconds, the first at every_s - 0.5 s.
double hop(double t, double every_s) {
    const double into = std::fmod(t + 0.5, every_s);
    const double z = 4.5 * into - 0.5 * 9.81 * into * into;
    return z > 0 ? z : 0.0;
}

TEST(Replay, MovementMatch) {
    // 1 honest: runs at up to 19.5 m/s, stops and starts, jumps every 2.5 s, through lag
    // spikes of 0.8 s and 2.5 s in the middle of jumps and 14 % packet loss; 2 honest on a
    // server that reports no ground; 3 dashes from standing to 70 m/s; 4 runs at 27 m/s for
    // 8 s at a time; 5 flies 10 m up for 6 s; 6 sinks 4 m under the terrain for 5 s.
    const double length = 60.0;
    Recording r;
    build::MatchStart start;
    start.game = "arena";
    start.tick_rate_hz = 20.0f;
    start.started_unix_us = kStartUnixUs;
    r.at(0.0, 0, start);
    for (uint32_t p = 1; p <= 6; ++p)
        r.at(0.001 * p, p, player_join("account-" + std::to_string(p), false, "1.4.2", 1000 + p));
    for (double t = 0.049; t < length; t += 0.05)
        r.at(t, 0, build::TickBoundary{.tick_lag_us = 500});

    const Track honest{
        .player = 1, .spikes = {{20.1, 0.8}, {40.2, 2.5}}, .loss_from_s = 45.0, .loss_to_s = 55.0};
    add_track(r, honest, length, [](double t) {
        const double speed = t < 10   ? 19.5
                             : t < 20 ? 8.0
                             : t < 30 ? 19.5
                                      : (std::fmod(t, 10.0) < 5 ? 15.0 : 0.0);
        return std::pair{speed, hop(t, 2.5)};
    });
    add_track(r, Track{.player = 2, .y = 40, .ground_reports = false}, length, [](double t) {
        return std::pair{std::fmod(t, 6.0) < 3 ? 6.0 : 0.0, hop(t, 4.0)};
    });
    add_track(r, Track{.player = 3, .y = 80}, length, [](double t) {
        return std::pair{std::fmod(t, 10.0) >= 5 && std::fmod(t, 10.0) < 6.5 ? 70.0 : 0.0, 0.0};
    });
    add_track(r, Track{.player = 4, .y = 120}, length, [](double t) {
        return std::pair{std::fmod(t, 20.0) >= 5 && std::fmod(t, 20.0) < 13 ? 27.0 : 8.0, 0.0};
    });
    add_track(r, Track{.player = 5, .y = 160}, length, [](double t) {
        const double in = std::fmod(t, 15.0);
        return std::pair{8.0, in >= 5 && in < 11 ? 10.0 : hop(t, 3.0)};
    });
    add_track(r, Track{.player = 6, .y = 200}, length, [](double t) {
        const double in = std::fmod(t, 15.0);
        return std::pair{8.0, in >= 5 && in < 10 ? -4.0 : 0.0};
    });
    r.at(length, 0, build::MatchEnd{.ended_unix_us = kStartUnixUs + us(length)});
    auto assessments = replay("movement", r, "");
    ASSERT_EQ(assessments.size(), 6u);
    for (uint32_t p : {1u, 2u}) {
        EXPECT_EQ(assessments[p]["action"], "Clear") << assessments[p].dump(2);
        EXPECT_TRUE(assessments[p]["signals"].empty()) << assessments[p].dump(2);
    }
    const std::map<uint32_t, std::string> cheaters{{3, "movement.acceleration"},
                                                   {4, "movement.sustained_speed"},
                                                   {5, "movement.airborne"},
                                                   {6, "movement.below_terrain"}};
    for (const auto& [p, code] : cheaters) {
        EXPECT_EQ(assessments[p]["action"], "FlagForReview") << assessments[p].dump(2);
        EXPECT_TRUE(codes_of(assessments[p]).count(code)) << assessments[p].dump(2);
    }
    // The flyer and the no-clipper are caught by these checks alone: no speed, no teleport.
    EXPECT_EQ(codes_of(assessments[5]), std::set<std::string>{"movement.airborne"});
    EXPECT_EQ(codes_of(assessments[6]),
              (std::set<std::string>{"movement.airborne", "movement.below_terrain"}));
    for (const auto& signal : assessments[5]["signals"]) {
        EXPECT_GT(signal["evidence"]["airborne_s"].get<double>(), 2.0);
        EXPECT_EQ(signal["evidence"]["limit_s"].get<double>(), 2.0);
    }
}

// ---------------------------------------------------------------- hits, sessions, clock

TEST(Replay, HitTimingTargetStateAndDamage) {
    // 1 honest, claimed ticks right through its lag spike; 2 claims ticks 2 s in the past;
    // 3 hits a target the server says is dead; 4 hits for 30 with a 12-damage rifle; 5 the
    // target, honest.
    Recording r = frame({1, 2, 3, 4, 5}, 60.0);
    for (double t = 5.0; t < 50.0; t += 0.5) {
        const double received = t > 20.0 && t <= 20.8 ? 20.8 + t / 1000.0 + 0.0001 : t;
        auto h = hit(5, 30.0);
        h.claimed_tick = static_cast<uint64_t>(std::llround(t / 0.05));
        r.at(received, 1, h);
    }
    for (int i = 0; i < 8; ++i) {
        const double t = 10.0 + i * 4.0;
        auto h = hit(5, 30.0);
        h.claimed_tick = static_cast<uint64_t>(std::llround((t - 2.0) / 0.05));
        r.at(t, 2, h);
    }
    for (int i = 0; i < 5; ++i) {
        auto h = hit(5, 30.0);
        h.target_alive = false;
        r.at(12.0 + i * 5.0, 3, h);
    }
    for (int i = 0; i < 5; ++i)
        r.at(11.0 + i * 5.0, 4, hit(5, 30.0, 30.0));
    auto assessments = replay("hits-timing", r, kWeapons);
    expect(assessments, {1, 5}, {{2, "hits.timing"}, {3, "hits.target_state"}, {4, "hits.damage"}});
    const auto& timing = assessments[2]["signals"][0]["evidence"];
    EXPECT_NEAR(timing["offset_s"].get<double>(), -2.0, 0.06) << timing.dump();
    EXPECT_EQ(assessments[4]["signals"][0]["evidence"]["limit"].get<double>(), 12.0);
}

TEST(Replay, UnexpectedHandshake) {
    // 1 honest; 2 joins with a handshake the game does not use (a modified client that
    // reports the right version).
    Recording r = frame({1}, 30.0);
    build::PlayerJoin join = player_join("account-2", false, "1.4.2", 1002);
    join.handshake = "arena/7+inject";
    r.at(0.5, 2, join);
    auto assessments = replay("handshake", r, R"([plugins.reference.config.sessions]
client_versions = ["1.4.2"]
handshakes = ["arena/7"]
)");
    expect(assessments, {1}, {{2, "sessions.handshake"}});
    EXPECT_EQ(assessments[2]["signals"][0]["evidence"]["handshake"], "arena/7+inject");
}

TEST(Replay, ClockRate) {
    // 1 honest orders through its lag spike, its clock 9 s off the relay's (an offset is
    // latency); 2 a client clock 25 % fast whose orders claim no tick: only the rate of its
    // own timestamps gives it away.
    Recording r = frame({1, 2}, 100.0);
    for (double t = 1.0; t < 95.0; t += 0.25) {
        const double received = t > 20.0 && t <= 20.8 ? 20.8 + t / 1000.0 + 0.0001 : t;
        r.at(received, 1, build::Order{.client_time_us = 9'000'000 + us(t)});
        r.at(t, 2, build::Order{.client_time_us = 4'000'000 + us(t * 1.25)});
    }
    auto assessments = replay("clock-rate", r, "");
    expect(assessments, {1}, {{2, "clock.rate"}});
    EXPECT_NEAR(assessments[2]["signals"][0]["evidence"]["rate"].get<double>(), 1.25, 0.01);
}

TEST(Replay, TheSampleMatchGetsTheReadmesReferenceSignals) {
    // The sample's reference table, with this build's plugin (the other plugins of
    // samples/server_config.toml are other targets): the new areas add nothing to it.
    const std::filesystem::path dir = work_dir("sample");
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
    std::filesystem::remove_all(dir);
    auto assessments = parse(outcome.out);
    ASSERT_EQ(assessments.size(), 6u) << outcome.out;
    for (uint32_t p : {1u, 2u, 3u, 4u}) {
        EXPECT_EQ(assessments[p]["action"], "Clear") << assessments[p].dump(2);
        EXPECT_TRUE(assessments[p]["signals"].empty()) << assessments[p].dump(2);
    }
    // mallory runs at 32 m/s for 9 s: movement.speed 0.90, and movement.sustained_speed 0.83
    // (its mean speed, confidence 0.95); trent movement.speed 1.00, movement.teleport 0.95,
    // and the change of windowed speed his jumps make, movement.acceleration 1.00. Nothing
    // else from this plugin: every player of the sample stays on the ground.
    std::map<uint32_t, std::map<std::string, double>> scores;
    for (uint32_t p : {5u, 6u}) {
        EXPECT_EQ(assessments[p]["action"], "FlagForReview") << assessments[p].dump(2);
        for (const auto& signal : assessments[p]["signals"])
            scores[p][signal["code"].get<std::string>()] =
                std::round(signal["weighted_score"].get<double>() * 100.0) / 100.0;
    }
    EXPECT_EQ(scores[5], (std::map<std::string, double>{{"movement.speed", 0.90},
                                                        {"movement.sustained_speed", 0.83}}));
    EXPECT_EQ(scores[6], (std::map<std::string, double>{{"movement.acceleration", 1.00},
                                                        {"movement.speed", 1.00},
                                                        {"movement.teleport", 0.95}}));
}

}  // namespace
