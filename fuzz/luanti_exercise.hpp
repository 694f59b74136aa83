// A Luanti match for the luanti plugin's state harness: the events its checks read (the
// allowance, good and bad; positions supported and not, a server teleport; steps inside
// walkable nodes; the engine's reports), with lost input and a leave, of relay
// "fuzz-relay", match 1, players 1 to 3 (the ids a blob most likely holds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>

namespace arbiter::fuzz {

inline build::Extension luanti_extension(const std::string& type, const std::string& json) {
    return build::Extension{.type_name = type,
                            .data = std::vector<uint8_t>(json.begin(), json.end())};
}

inline std::vector<std::vector<uint8_t>> luanti_exercise_batches() {
    std::vector<std::vector<uint8_t>> batches;
    BatchBuilder builder("fuzz-relay", 1);
    builder.add(0, 0, 0,
                build::MatchStart{.game = "luanti", .map = "", .rules = "", .tick_rate_hz = 11});
    for (uint32_t player = 1; player <= 3; ++player) {
        build::PlayerJoin join;
        join.account_id = "player-" + std::to_string(player);
        builder.add(1000, 0, player, join);
    }
    builder.add(2000, 0, 1, luanti_extension("luanti.allowance", "{}"));
    builder.add(2000, 0, 2, luanti_extension("luanti.allowance", R"({"fast":true,"noclip":true})"));
    builder.add(2000, 0, 3, luanti_extension("luanti.allowance", R"({"speed":"x"})"));
    builder.add(2001, 0, 3, luanti_extension("luanti.allowance", R"({"jump":2,"gravity":0.5})"));
    batches.push_back(builder.finish());
    for (int64_t step = 1; step <= 60; ++step) {
        const int64_t t = step * 90'000;
        const auto tick = static_cast<uint64_t>(step);
        for (uint32_t player = 1; player <= 3; ++player) {
            const float x = static_cast<float>(step) * (player == 1 ? 1.2f : 0.4f);
            build::Position position;
            position.position = fb::Vec3(x, 0, player == 2 ? 4.0f : 0.0f);
            position.on_ground = player != 2;
            position.server_teleport = step == 30 && player == 1;
            builder.add(t, tick, player, position);
            if (player == 1 || step % 3 != 0)
                builder.add(t, tick, player,
                            luanti_extension("luanti.inside", R"({"node":"default:stone"})"));
        }
        if (step % 10 == 0)
            builder.add(t + 1, tick, 3,
                        luanti_extension("luanti.cheat", R"({"type":"moved_too_fast"})"));
        if (step == 40)
            builder.add(t + 1, tick, 3,
                        luanti_extension("luanti.allowance", R"({"attached":true})"));
        batches.push_back(builder.finish());
    }
    // Batches 61 to 63 lost, as the host would say.
    BatchBuilder lost("fuzz-relay", 1, 63);
    lost.add(6'000'000, 66, 0, build::InputLost{61, 63, 5'400'001, 6'000'000});
    batches.push_back(lost.finish());
    BatchBuilder after("fuzz-relay", 1, 64);
    build::Position back;
    back.position = fb::Vec3(100, 0, 0);
    back.on_ground = false;
    after.add(6'000'000, 66, 1, back);
    after.add(6'000'001, 66, 2, build::PlayerLeave{});
    batches.push_back(after.finish());
    return batches;
}

}  // namespace arbiter::fuzz
