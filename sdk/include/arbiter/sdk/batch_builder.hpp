// Writes event batches: what a relay uses to hand Arbiter its events, and what tests
// and tools use to build matches in code.
//
//   arbiter::BatchBuilder builder("relay-eu-1", 42);
//   builder.add(t_us, tick, player, arbiter::build::Position{.position = {1, 0, 2}});
//   std::vector<uint8_t> bytes = builder.finish();   // one EventBatch; sequence advances
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <arbiter/arbiter_plugin.h>
#include <arbiter/events_generated.h>

namespace arbiter {

// One struct per event kind, mirroring abi/schema/events.fbs field for field.
namespace build {
struct MatchStart {
    std::string game, map, rules;
    bool rated = false;
    float tick_rate_hz = 20.0f;
    int64_t started_unix_us = 0;
};
struct MatchEnd {
    std::string reason = "finished";
    std::optional<int64_t> claimed_length_us = std::nullopt;
    int64_t ended_unix_us = 0;
};
struct PlayerJoin {
    std::string account_id, client_version, handshake;
    uint64_t connection_id = 0;
    uint64_t address_hash = 0;
    float rating = 0.0f;
    std::string rating_tier;
    bool reconnect = false;
};
struct PlayerLeave {
    std::string reason = "quit";
};
struct Latency {
    uint32_t rtt_us = 0;
};
struct Order {
    std::string kind = "command";
    uint32_t target_player = 0;
    std::optional<fb::Vec3> target = std::nullopt;
    bool repeat = false;
    std::optional<uint64_t> claimed_tick = std::nullopt;
    std::optional<int64_t> client_time_us = std::nullopt;
    uint64_t response_to = 0;
    std::optional<fb::Look> look = std::nullopt;     // schema 1.2; absent when unknown
    std::optional<fb::AimPoint> aim = std::nullopt;  // schema 1.2; absent when unknown
};
struct Position {
    fb::Vec3 position{0, 0, 0};
    fb::Vec3 velocity{0, 0, 0};
    std::optional<bool> on_ground = std::nullopt;
    std::optional<float> ground_height = std::nullopt;
    bool server_teleport = false;
    std::optional<fb::Look> look = std::nullopt;     // schema 1.2; absent when unknown
    std::optional<fb::AimPoint> aim = std::nullopt;  // schema 1.2; absent when unknown
};
struct Hit {
    uint32_t target_player = 0;
    std::string weapon;
    fb::Vec3 attacker_position{0, 0, 0}, target_position{0, 0, 0};
    float range_m = 0.0f;
    float damage = 0.0f;
    bool line_of_sight = true, target_alive = true, target_damageable = true;
    std::optional<uint64_t> claimed_tick = std::nullopt;
    std::optional<fb::Look> look = std::nullopt;     // schema 1.2; absent when unknown
    std::optional<fb::AimPoint> aim = std::nullopt;  // schema 1.2; absent when unknown
};
struct Kill {
    uint32_t target_player = 0;
    std::string weapon;
    fb::Vec3 attacker_position{0, 0, 0}, target_position{0, 0, 0};
    float range_m = 0.0f;
    bool line_of_sight = true;
    std::optional<uint64_t> claimed_tick = std::nullopt;
};
struct Inventory {
    std::string item_id;
    int32_t delta = 0;
    int32_t count_after = 0;
    std::string source;
};
struct Stat {
    std::string stat;
    double delta = 0.0;
    double value_after = 0.0;
};
struct Stimulus {
    uint64_t stimulus_id = 0;
    std::string kind;
};
struct TickBoundary {
    uint32_t tick_lag_us = 0;
};
struct Extension {
    std::string type_name;
    std::vector<uint8_t> data;
};
// Written by the host, never by a relay (ingest refuses it): here for a plugin's own
// tests of what it does when input is lost. Schema 1.1.
struct InputLost {
    uint64_t first_sequence = 0;
    uint64_t last_sequence = 0;
    std::optional<int64_t> last_heard_relay_us = std::nullopt;
    int64_t next_heard_relay_us = 0;
};
}  // namespace build

class BatchBuilder {
  public:
    BatchBuilder(std::string relay_id, uint64_t match_id, uint64_t first_sequence = 0)
        : relay_id_(std::move(relay_id)), match_id_(match_id), sequence_(first_sequence) {}

    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::MatchStart& e) {
        auto body = fb::CreateMatchStart(fbb_, text(e.game), text(e.map), text(e.rules), e.rated,
                                         e.tick_rate_hz, e.started_unix_us);
        return push(t_us, tick, player, fb::EventBody::MatchStart, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::MatchEnd& e) {
        auto reason = text(e.reason);
        fb::MatchEndBuilder b(fbb_);
        b.add_reason(reason);
        if (e.claimed_length_us) b.add_claimed_length_us(*e.claimed_length_us);
        b.add_ended_unix_us(e.ended_unix_us);
        return push(t_us, tick, player, fb::EventBody::MatchEnd, b.Finish().Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::PlayerJoin& e) {
        auto body = fb::CreatePlayerJoin(fbb_, text(e.account_id), text(e.client_version),
                                         text(e.handshake), e.connection_id, e.address_hash,
                                         e.rating, text(e.rating_tier), e.reconnect);
        return push(t_us, tick, player, fb::EventBody::PlayerJoin, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::PlayerLeave& e) {
        auto body = fb::CreatePlayerLeave(fbb_, text(e.reason));
        return push(t_us, tick, player, fb::EventBody::PlayerLeave, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Latency& e) {
        auto body = fb::CreateLatencySample(fbb_, e.rtt_us);
        return push(t_us, tick, player, fb::EventBody::LatencySample, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Order& e) {
        auto kind = text(e.kind);
        fb::OrderBuilder b(fbb_);
        b.add_kind(kind);
        b.add_target_player(e.target_player);
        if (e.target) {
            b.add_target(&*e.target);
            b.add_has_target(true);
        }
        b.add_repeat(e.repeat);
        if (e.claimed_tick) b.add_claimed_tick(*e.claimed_tick);
        if (e.client_time_us) b.add_client_time_us(*e.client_time_us);
        b.add_response_to(e.response_to);
        if (e.look) b.add_look(&*e.look);
        if (e.aim) b.add_aim(&*e.aim);
        return push(t_us, tick, player, fb::EventBody::Order, b.Finish().Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Position& e) {
        fb::PositionUpdateBuilder b(fbb_);
        b.add_position(&e.position);
        b.add_velocity(&e.velocity);
        if (e.on_ground) b.add_on_ground(*e.on_ground);
        if (e.ground_height) b.add_ground_height(*e.ground_height);
        b.add_server_teleport(e.server_teleport);
        if (e.look) b.add_look(&*e.look);
        if (e.aim) b.add_aim(&*e.aim);
        return push(t_us, tick, player, fb::EventBody::PositionUpdate, b.Finish().Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Hit& e) {
        auto weapon = text(e.weapon);
        fb::HitClaimBuilder b(fbb_);
        b.add_target_player(e.target_player);
        b.add_weapon(weapon);
        b.add_attacker_position(&e.attacker_position);
        b.add_target_position(&e.target_position);
        b.add_range_m(e.range_m);
        b.add_damage(e.damage);
        b.add_line_of_sight(e.line_of_sight);
        b.add_target_alive(e.target_alive);
        b.add_target_damageable(e.target_damageable);
        if (e.claimed_tick) b.add_claimed_tick(*e.claimed_tick);
        if (e.look) b.add_look(&*e.look);
        if (e.aim) b.add_aim(&*e.aim);
        return push(t_us, tick, player, fb::EventBody::HitClaim, b.Finish().Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Kill& e) {
        auto weapon = text(e.weapon);
        fb::KillClaimBuilder b(fbb_);
        b.add_target_player(e.target_player);
        b.add_weapon(weapon);
        b.add_attacker_position(&e.attacker_position);
        b.add_target_position(&e.target_position);
        b.add_range_m(e.range_m);
        b.add_line_of_sight(e.line_of_sight);
        if (e.claimed_tick) b.add_claimed_tick(*e.claimed_tick);
        return push(t_us, tick, player, fb::EventBody::KillClaim, b.Finish().Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Inventory& e) {
        auto body = fb::CreateInventoryChange(fbb_, text(e.item_id), e.delta, e.count_after,
                                              text(e.source));
        return push(t_us, tick, player, fb::EventBody::InventoryChange, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Stat& e) {
        auto body = fb::CreateStatChange(fbb_, text(e.stat), e.delta, e.value_after);
        return push(t_us, tick, player, fb::EventBody::StatChange, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Stimulus& e) {
        auto body = fb::CreateStimulus(fbb_, e.stimulus_id, text(e.kind));
        return push(t_us, tick, player, fb::EventBody::Stimulus, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::TickBoundary& e) {
        auto body = fb::CreateTickBoundary(fbb_, e.tick_lag_us);
        return push(t_us, tick, player, fb::EventBody::TickBoundary, body.Union());
    }
    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::Extension& e) {
        auto body = fb::CreateExtension(fbb_, text(e.type_name), fbb_.CreateVector(e.data));
        return push(t_us, tick, player, fb::EventBody::Extension, body.Union());
    }

    BatchBuilder& add(int64_t t_us, uint64_t tick, uint32_t player, const build::InputLost& e) {
        fb::InputLostBuilder b(fbb_);
        b.add_first_sequence(e.first_sequence);
        b.add_last_sequence(e.last_sequence);
        if (e.last_heard_relay_us) b.add_last_heard_relay_us(*e.last_heard_relay_us);
        b.add_next_heard_relay_us(e.next_heard_relay_us);
        return push(t_us, tick, player, fb::EventBody::InputLost, b.Finish().Union());
    }

    size_t event_count() const { return events_.size(); }
    uint64_t next_sequence() const { return sequence_; }
    const std::string& relay_id() const { return relay_id_; }
    uint64_t match_id() const { return match_id_; }

    // The batch of every event added since the last finish; the sequence then advances.
    std::vector<uint8_t> finish() {
        auto relay = fbb_.CreateString(relay_id_);
        auto events = fbb_.CreateVector(events_);
        fb::EventBatchBuilder b(fbb_);
        b.add_schema_major(ARB_SCHEMA_VERSION_MAJOR);
        b.add_schema_minor(ARB_SCHEMA_VERSION_MINOR);
        b.add_relay_id(relay);
        b.add_match_id(match_id_);
        b.add_sequence(sequence_);
        b.add_events(events);
        fbb_.Finish(b.Finish(), ARB_SCHEMA_FILE_IDENTIFIER);
        std::vector<uint8_t> bytes(fbb_.GetBufferPointer(),
                                   fbb_.GetBufferPointer() + fbb_.GetSize());
        fbb_.Clear();
        events_.clear();
        ++sequence_;
        return bytes;
    }

  private:
    flatbuffers::Offset<flatbuffers::String> text(const std::string& value) {
        return value.empty() ? 0 : fbb_.CreateString(value);
    }

    BatchBuilder& push(int64_t t_us, uint64_t tick, uint32_t player, fb::EventBody type,
                       flatbuffers::Offset<void> body) {
        events_.push_back(fb::CreateEvent(fbb_, t_us, tick, player, type, body));
        return *this;
    }

    std::string relay_id_;
    uint64_t match_id_;
    uint64_t sequence_;
    flatbuffers::FlatBufferBuilder fbb_{4096};
    std::vector<flatbuffers::Offset<fb::Event>> events_;
};

}  // namespace arbiter
