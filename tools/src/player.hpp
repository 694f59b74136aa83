// One simulated player, tick by tick: a person on a network (movement, inputs, reactions,
// combat, items, experience, lag, loss, dropped lines), with the knobs of its profile's
// Behaviour turned. Everything it does is drawn from its own random stream, so a player
// does the same whatever the other players do (except being hit).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/tools/human_rhythm.hpp"
#include "arbiter/tools/profiles.hpp"
#include "arbiter/tools/random.hpp"
#include "scheduler.hpp"
#include "world.hpp"

namespace arbiter::tools::sim {

class Player;

// What a player sees of the match in one tick.
struct TickContext {
    uint64_t tick = 0;
    double t0 = 0;  // the tick opens, seconds
    double t1 = 0;  // the next tick opens
    double dt = 0;  // t1 - t0
    double hz = 0;  // ticks per second
    Scheduler* out = nullptr;
    const Squads* squads = nullptr;
    std::vector<Player>* players = nullptr;  // by id - 1
};

class Player {
  public:
    Player(uint32_t id, std::string account, const ProfileInfo& profile, uint64_t seed,
           const HumanRhythm& rhythm, const Squads& squads, double hz);

    // The join at the start of the match.
    void join(Scheduler& out);
    void step(TickContext& ctx);

    uint32_t id() const { return id_; }
    const ProfileInfo& profile() const { return *profile_; }
    const Behaviour& behaviour() const { return behaviour_; }
    const std::string& account() const { return account_; }
    // The length this client claims for a match of `length_s` (its clock's view).
    int64_t claimed_length_us(double length_s) const;
    // This player's position as the relay had received it at relay time `t` (seconds),
    // interpolated between its updates; what another player's screen shows of it.
    std::optional<fb::Vec3> seen_at(double t) const;

  private:
    // ---- the parts of a tick ----
    bool session(TickContext& ctx);  // false while the line is down
    bool tabbed_out(TickContext& ctx);  // true while the player is away from the keyboard
    void network(TickContext& ctx);
    void stimuli(TickContext& ctx);
    void movement(TickContext& ctx);
    void respawn(TickContext& ctx);
    void inputs(TickContext& ctx);
    void held_key(TickContext& ctx);
    void combat(TickContext& ctx);
    void economy(TickContext& ctx);
    // The line is down: what the person would have done is lost with it.
    void skip(TickContext& ctx);
    // The gap to the next input (and, for a human, the actions of that input).
    double next_gap();
    void plan_hold(double after);

    // Sends a packet at client time t: returns its relay arrival time, or a negative
    // number when the packet was lost.
    double send(TickContext& ctx, double t, Body body, bool may_be_lost);
    double oneway(double t);            // the delay of a packet sent at t
    double queue_delay(double t) const;  // a jittery link's extra delay at t
    double rtt_now();
    build::Order order(std::string_view kind, double t, bool repeat, bool with_target);
    // Points a targeted order at the player fought, when there is one in reach.
    void aim(TickContext& ctx, double t, build::Order& order);
    void sent_position(double sent, double arrival, const fb::Vec3& position);
    bool valid_target(const TickContext& ctx, uint32_t target, const Weapon& weapon) const;
    uint32_t pick_target(TickContext& ctx, const Weapon& weapon);
    // The relay applies a hit that arrived at `at`; true when it killed.
    bool take_hit(TickContext& ctx, double at, double damage);
    build::PlayerJoin join_event(bool reconnect);
    fb::Vec3 position() const;

    uint32_t id_;
    const ProfileInfo* profile_;
    Rng rng_;
    Behaviour behaviour_;
    std::string account_;
    const Squads* squads_;
    uint32_t squad_;
    double hz_ = 20.0;

    // the client's clock
    int64_t clock_epoch_us_ = 0;
    double clock_drift_ = 0;
    int64_t clock_steps_us_ = 0;  // what NTP steps have added to the client's clock
    double next_clock_step_ = 0;  // 0: not drawn yet
    double send_phase_ = 0;       // when in a tick the client sends, as a share of the tick
    double relay_phase_ = 0;      // when in a tick the relay produces this player's events

    // session
    bool connected_ = true;
    double line_drop_at_ = 0;  // next time the line goes down
    double rejoin_at_ = 0;
    uint32_t connections_ = 0;
    uint64_t address_hash_ = 0;
    float rating_ = 0;

    // away from the keyboard
    double away_start_ = 0, away_end_ = 0;
    bool away_ = false;

    // network
    double spike_start_ = 0, spike_end_ = 0;
    bool spike_reported_ = false;
    double burst_at_ = 0;  // arrival of the last packet of the latest burst
    uint64_t jitter_seed_ = 0;  // a jittery link's queueing delay (queue_delay)
    bool bursting_ = false;
    bool spike_loses_ = false;  // this spike loses the positions it holds (no burst of them)
    double loss_start_ = 0, loss_end_ = 0, loss_p_ = 0;
    double next_latency_ = 0;

    // movement
    double x_ = 0, y_ = 0, z_off_ = 0, vz_ = 0;
    double heading_ = 0, speed_ = 0, target_speed_ = 0;
    double next_speed_change_ = 0, next_jump_ = 0;
    bool airborne_ = false;
    double hack_start_ = 0, hack_end_ = 0;
    double next_teleport_ = 0;
    uint32_t teleports_ = 0;
    double fly_start_ = 0, fly_end_ = 0, fly_target_ = 0;
    uint32_t flights_ = 0;
    double health_ = 100.0;
    bool dead_ = false;
    double respawn_at_ = 0;

    // inputs
    HumanRhythm::Stream stream_;
    std::vector<InputAction> pending_;
    double next_input_ = 0;
    double hold_start_ = 0, hold_end_ = 0, next_repeat_ = 0;
    bool hold_pressed_ = false;
    fb::Vec3 hold_target_{0, 0, 0};

    // stimuli
    double next_stimulus_ = 0;
    uint32_t stimuli_ = 0;

    // aim: its own random stream, so that aiming changes no other draw
    Rng aim_rng_;
    // Position updates sent: client send time, relay arrival time (by arrival), position.
    struct Sent {
        double sent, arrival;
        fb::Vec3 position;
    };
    std::deque<Sent> sent_;

    // combat
    bool engaged_ = false;
    double next_engagement_ = 0, engagement_end_ = 0, next_shot_ = 0;
    const Weapon* weapon_ = &kRifle;
    uint32_t target_ = 0;

    // items and experience
    int32_t items_[std::size(kItems)] = {};
    double next_pickup_ = 0, next_dup_ = 0, next_experience_ = 0;
    double experience_ = 0, damage_taken_ = 0;
};

}  // namespace arbiter::tools::sim
