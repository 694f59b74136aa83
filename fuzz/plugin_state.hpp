// What the state-restore harnesses share. A state blob comes back from wherever the host
// kept it between two versions of a plugin (a file, another process), so a plugin must
// refuse a damaged one with an error and never crash, and a blob it accepts must leave
// it able to go on: after a restore the harness feeds a match that touches every check
// (joins, positions with a teleport, orders with ticks and targets, hits, kills, items,
// stats, stimuli, lost input, a leave), ends it and saves again.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <arbiter/sdk/batch_builder.hpp>
#include <arbiter/sdk/state.hpp>
#include <arbiter/sdk/testing.hpp>

namespace arbiter::fuzz {

// The input with its SDK seal (payload size and checksum, sdk/state.hpp) made right, so
// that mutations reach the plugin's own reader instead of dying at the checksum; the
// seal's checks have their unit tests. Inputs shorter than the header stay as they are.
inline std::vector<uint8_t> resealed(const uint8_t* data, size_t size) {
    std::vector<uint8_t> blob(data, data + size);
    if (blob.size() < detail::kStateHeaderSize) return blob;
    const std::span<const uint8_t> payload(blob.data() + detail::kStateHeaderSize,
                                           blob.size() - detail::kStateHeaderSize);
    const uint64_t payload_size = payload.size();
    uint64_t checksum = 0;  // by the blob's own seal, "ARBX" or "ARBS"; any other magic is refused
    if (!detail::seal_checksum(blob.data(), payload, checksum)) checksum = detail::xxh3_64(payload);
    std::memcpy(blob.data() + 12, &payload_size, 8);
    std::memcpy(blob.data() + 20, &checksum, 8);
    return blob;
}

// Batches of one match of relay "fuzz-relay", match 1 (the ids a blob most likely holds
// are those of the corpus, made from the same match).
inline std::vector<std::vector<uint8_t>> state_exercise_batches() {
    std::vector<std::vector<uint8_t>> batches;
    BatchBuilder builder("fuzz-relay", 1);
    build::MatchStart start;
    start.game = "fuzz";
    start.tick_rate_hz = 20;
    builder.add(0, 0, 0, start);
    for (uint32_t player = 1; player <= 3; ++player) {
        build::PlayerJoin join;
        join.account_id = "account-" + std::to_string(player);
        join.rating_tier = player == 1 ? "gold" : "bronze";
        builder.add(1000, 0, player, join);
    }
    batches.push_back(builder.finish());
    for (int64_t step = 1; step <= 40; ++step) {
        const int64_t t = step * 50'000;
        const auto tick = static_cast<uint64_t>(step);
        for (uint32_t player = 1; player <= 3; ++player) {
            const float x = static_cast<float>(step) * (player == 3 ? 3.0f : 0.5f);
            build::Position position;
            position.position = fb::Vec3(x, 0, 0);
            position.on_ground = true;
            position.ground_height = 0.0f;
            position.server_teleport = step == 20 && player == 2;
            builder.add(t, tick, player, position);
            build::Order order;
            order.kind = step % 2 ? "dig" : "command";
            order.claimed_tick = tick + (player == 3 ? 40 : 0);
            order.client_time_us = t;
            order.target_player = player % 3 + 1;
            order.target = fb::Vec3(x + 5, 0, 0);
            order.response_to = static_cast<uint64_t>(step - 1);
            builder.add(t + 1, tick, player, order);
            builder.add(t + 2, tick, player, build::Latency{40'000});
        }
        builder.add(t + 3, tick, 0, build::TickBoundary{1000});
        builder.add(t + 4, tick, 1, build::Stimulus{static_cast<uint64_t>(step), "shown"});
        build::Hit hit;
        hit.target_player = 2;
        hit.weapon = "rifle";
        hit.range_m = 30;
        hit.damage = 20;
        hit.claimed_tick = tick;
        builder.add(t + 5, tick, 1, hit);
        if (step % 10 == 0) {
            build::Kill kill;
            kill.target_player = 3;
            kill.weapon = "rifle";
            builder.add(t + 6, tick, 1, kill);
        }
        builder.add(t + 7, tick, 2, build::Inventory{"gem", 1, 1, "pickup"});
        builder.add(t + 8, tick, 3,
                    build::Stat{"experience", 10.0, 10.0 * static_cast<double>(step)});
        batches.push_back(builder.finish());
    }
    // Batches 41 to 43 lost, as the host would say.
    BatchBuilder lost("fuzz-relay", 1, 43);
    lost.add(2'500'000, 50, 0, build::InputLost{41, 43, 2'000'008, 2'500'000});
    batches.push_back(lost.finish());
    BatchBuilder after("fuzz-relay", 1, 44);
    build::Position back;
    back.position = fb::Vec3(100, 0, 0);
    after.add(2'500'000, 50, 1, back);
    after.add(2'500'001, 50, 2, build::PlayerLeave{});
    batches.push_back(after.finish());
    return batches;
}

// Restores `data`, resealed, into a fresh instance of T; when it is accepted, runs the
// match (`batches`, of relay "fuzz-relay", match 1) through it, ends the match and saves
// again. A game's plugin passes a match of its own game's events.
template <class T>
int restore_and_go_on(const uint8_t* data, size_t size,
                      const std::vector<std::vector<uint8_t>>& batches) {
    testing::Harness<T> harness;
    if (!harness.ok()) __builtin_trap();  // the default config must always create
    if (harness.restore_state(resealed(data, size)) != ARB_OK) return 0;
    for (const auto& batch : batches)
        (void)harness.feed(batch);
    (void)harness.end_match("fuzz-relay", 1);
    (void)harness.save_state();
    return 0;
}

template <class T>
int restore_and_go_on(const uint8_t* data, size_t size) {
    static const std::vector<std::vector<uint8_t>> batches = state_exercise_batches();
    return restore_and_go_on<T>(data, size, batches);
}

}  // namespace arbiter::fuzz
