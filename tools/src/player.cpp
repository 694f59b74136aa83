#include "player.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace arbiter::tools::sim {

namespace {
constexpr double kTwoPi = 6.283185307179586;
constexpr double kAccelerationMps2 = 6.0;  // a person speeds up and slows down at most this fast
constexpr double kKeyRepeatDelayS = 0.25;  // a held key starts repeating after this
constexpr double kKeyRepeatRateHz = 40.0;  // then repeats this often (several per tick)
constexpr double kSquadRadiusM = 35.0;     // players stay this close to their squad's anchor
constexpr const char* kStimulusKinds[] = {"enemy_visible", "ability_ready", "objective_alert"};
// A person's aim: a median angular error of 12 to 35 mrad (0.7 to 2 degrees) that widens by
// 5 to 15 % an hour. An assumption, not a measurement: human pointing scatters by a few
// per cent of each movement, a degree or more for the tens of degrees a flick covers, and
// fatigue over hours is modest. A 2-D normal error has its median at 1.1774 sigma.
constexpr double kHumanAimLoMrad = 12.0, kHumanAimHiMrad = 35.0;
constexpr double kHumanFatigueLo = 0.05, kHumanFatigueHi = 0.15;
constexpr double kRayleighMedian = 1.1774100225154747;  // sqrt(2 ln 2)
constexpr double kKeepSentS = 3.0;  // position updates remembered for others to see

double round3(double value) {
    return std::round(value * 1000.0) / 1000.0;
}

double approach(double value, double target, double step) {
    return value < target ? std::min(value + step, target) : std::max(value - step, target);
}

const char* tier_of(double rating) {
    if (rating < 1200) return "bronze";
    if (rating < 1600) return "silver";
    if (rating < 2000) return "gold";
    if (rating < 2300) return "platinum";
    return "master";
}
}  // namespace

Player::Player(uint32_t id, std::string account, const ProfileInfo& profile, uint64_t seed,
               const HumanRhythm& rhythm, const Squads& squads, double hz)
    : id_(id),
      profile_(&profile),
      rng_(seed),
      behaviour_(profile.make(rng_)),
      account_(std::move(account)),
      squads_(&squads),
      squad_(squads.squad_of(id)),
      hz_(hz),
      stream_(rhythm.stream(rng_)),
      aim_rng_(mix64(seed ^ 0xa1a1a1a1a1a1a1a1ull)) {
    const Behaviour& b = behaviour_;

    clock_epoch_us_ =
        1'700'000'000'000'000 + static_cast<int64_t>(rng_.below(100'000'000'000'000ull));
    clock_drift_ = rng_.uniform(-100e-6, 100e-6);
    send_phase_ = rng_.uniform(0.0, 0.4);
    relay_phase_ = rng_.uniform(0.0, 0.5);
    address_hash_ = mix64(seed ^ 0xadd7e55ull);
    jitter_seed_ = mix64(seed ^ 0x717e4a11ull);
    if (behaviour_.aim_spread_mrad <= 0) {
        behaviour_.aim_spread_mrad = aim_rng_.uniform(kHumanAimLoMrad, kHumanAimHiMrad);
        behaviour_.aim_fatigue_per_h = aim_rng_.uniform(kHumanFatigueLo, kHumanFatigueHi);
        behaviour_.params.emplace_back("aim_mrad", round3(behaviour_.aim_spread_mrad));
        behaviour_.params.emplace_back("aim_fatigue_per_h", round3(behaviour_.aim_fatigue_per_h));
    }
    rating_ = static_cast<float>(std::round(rng_.uniform(800.0, 2600.0)));

    line_drop_at_ = b.reconnect_spam_every_s > 0 ? rng_.uniform(2.0, 2.0 + b.reconnect_spam_every_s)
                                                 : 5.0 + rng_.exponential(b.reconnect_every_s);
    spike_start_ = 2.0 + rng_.exponential(b.lag_spike_every_s);
    spike_end_ = spike_start_ + rng_.uniform(0.3, b.lag_spike_max_s);
    loss_start_ = 2.0 + rng_.exponential(b.loss_every_s);
    loss_end_ = loss_start_ + rng_.uniform(5.0, 15.0);
    loss_p_ = rng_.uniform(0.05, 0.2);
    next_latency_ = rng_.uniform(0.0, 1.0);

    const Vec2 anchor = squads.anchor(squad_, 0.0);
    x_ = anchor.x + rng_.uniform(-30.0, 30.0);
    y_ = anchor.y + rng_.uniform(-30.0, 30.0);
    heading_ = rng_.uniform(0.0, kTwoPi);
    next_speed_change_ = rng_.uniform(0.0, 2.0);
    next_jump_ = rng_.uniform(3.0, 20.0);
    hack_start_ = rng_.uniform(2.0, 6.0);
    hack_end_ = hack_start_ + rng_.uniform(5.0, 15.0);
    next_teleport_ = rng_.uniform(3.0, 8.0);
    fly_start_ = rng_.uniform(3.0, 8.0);
    fly_end_ = fly_start_ + rng_.uniform(5.0, 15.0);
    fly_target_ = rng_.uniform(8.0, 25.0);

    if (b.inputs == InputModel::human) {
        next_input_ = rng_.uniform(0.3, 2.0);
        next_gap();  // the actions of the first input
    } else {
        next_input_ = rng_.uniform(0.3, 1.0);
    }
    if (b.hold_key_every_s > 0) plan_hold(1.0);
    next_stimulus_ = rng_.uniform(0.5, 3.0);
    next_engagement_ = b.shots_per_s > 0 ? rng_.uniform(1.0, 4.0) : rng_.uniform(2.0, 20.0);
    next_pickup_ = rng_.uniform(1.0, 10.0);
    next_dup_ = rng_.uniform(2.0, 5.0);
    next_experience_ = b.experience_per_s > 0 ? rng_.uniform(0.5, 2.0) : rng_.uniform(2.0, 15.0);
}

build::PlayerJoin Player::join_event(bool reconnect) {
    return build::PlayerJoin{.account_id = account_,
                             .client_version = "1.4.2",
                             .handshake = "arena/7",
                             .connection_id = (static_cast<uint64_t>(id_) << 20) | connections_++,
                             .address_hash = address_hash_,
                             .rating = rating_,
                             .rating_tier = tier_of(rating_),
                             .reconnect = reconnect};
}

void Player::join(Scheduler& out) {
    out.at(1, id_, join_event(false));
}

int64_t Player::claimed_length_us(double length_s) const {
    return std::llround(length_s * 1e6 * behaviour_.clock_rate * (1.0 + clock_drift_));
}

fb::Vec3 Player::position() const {
    return fb::Vec3(static_cast<float>(x_), static_cast<float>(y_),
                    static_cast<float>(terrain_height(x_, y_) + z_off_));
}

void Player::step(TickContext& ctx) {
    if (!session(ctx)) {
        skip(ctx);
        return;
    }
    network(ctx);
    if (tabbed_out(ctx)) {
        // Connected and standing still: positions go on, nothing else comes from the client.
        if (dead_) {
            respawn(ctx);
        } else {
            movement(ctx);
        }
        skip(ctx);
        return;
    }
    stimuli(ctx);
    if (dead_) {
        respawn(ctx);
    } else {
        movement(ctx);
    }
    inputs(ctx);
    held_key(ctx);
    if (!dead_) combat(ctx);
    economy(ctx);
}

// ---- session: joins, dropped lines, reconnects ----------------------------------------

bool Player::session(TickContext& ctx) {
    const double now = ctx.t0;
    const Behaviour& b = behaviour_;
    const bool spam = b.reconnect_spam_every_s > 0;
    if (!connected_) {
        if (now < rejoin_at_) return false;
        connected_ = true;
        ctx.out->at(to_us(now + relay_phase_ * ctx.dt), id_, join_event(true));
        line_drop_at_ = now + (spam ? b.reconnect_spam_every_s * rng_.uniform(0.8, 1.2)
                                    : 5.0 + rng_.exponential(b.reconnect_every_s));
        return true;
    }
    if (now < line_drop_at_) return true;
    // Not while a lag spike holds packets back: they must arrive before the leave.
    if (now >= spike_start_ && now < spike_end_) return true;
    connected_ = false;
    // A spammer quits (the relay hears at once); a dropped line times out a while later.
    // Either way after every packet already on its way.
    const double leave = now + (spam ? behaviour_.base_rtt_s + 0.02 : 1.5);
    ctx.out->at(to_us(leave), id_, build::PlayerLeave{.reason = spam ? "quit" : "timeout"});
    rejoin_at_ = leave + (spam ? rng_.uniform(0.3, 1.0) : rng_.uniform(1.0, 5.0));
    return false;
}

bool Player::tabbed_out(TickContext& ctx) {
    const Behaviour& b = behaviour_;
    if (b.tab_out_every_s <= 0) return false;
    const double now = ctx.t0;
    if (now >= away_end_) {
        away_start_ = std::max(away_end_, now) + 10.0 + rng_.exponential(b.tab_out_every_s);
        away_end_ = away_start_ + rng_.uniform(20.0, std::max(20.0, b.tab_out_max_s));
    }
    away_ = now >= away_start_;
    return away_;
}

void Player::skip(TickContext& ctx) {
    while (next_input_ < ctx.t1)
        next_input_ += next_gap();
    if (behaviour_.hold_key_every_s > 0 && (hold_pressed_ || hold_start_ < ctx.t1)) {
        hold_pressed_ = false;
        plan_hold(ctx.t1);
    }
    engaged_ = false;
    next_engagement_ = std::max(next_engagement_, ctx.t1);
    next_stimulus_ = std::max(next_stimulus_, ctx.t1);
}

// ---- network: round trips, lag spikes, packet loss ------------------------------------

double Player::oneway(double t) {
    const double base =
        0.5 * behaviour_.base_rtt_s * rng_.uniform(0.95, 1.1) + rng_.uniform(0.0, 0.002);
    return behaviour_.extra_jitter_s > 0 ? base + queue_delay(t) : base;
}

// A jittery link's extra delay is queueing delay: it rises and falls, but smoothly (here at
// most half a second per second: a value in [0, extra_jitter_s) every 0.3 s, straight
// lines between), so that it delays and bunches packets without reordering them, as one
// queue does. Each value comes from the player's seed and its index, not from the stream
// of draws, so a packet sent ahead of time (an answer to a stimulus) sees the same link.
double Player::queue_delay(double t) const {
    constexpr double kKnotS = 0.3;
    const double at = std::max(0.0, t) / kKnotS;
    const auto i = static_cast<uint64_t>(at);
    auto knot = [&](uint64_t k) {
        const uint64_t h = mix64(jitter_seed_ ^ (k * 0x9e3779b97f4a7c15ull));
        return static_cast<double>(h >> 11) * 0x1.0p-53 * behaviour_.extra_jitter_s;
    };
    const double f = at - static_cast<double>(i);
    return knot(i) + f * (knot(i + 1) - knot(i));
}

double Player::rtt_now() {
    return behaviour_.base_rtt_s * rng_.uniform(0.9, 1.15);
}

double Player::send(TickContext& ctx, double t, Body body, bool may_be_lost) {
    double arrival;
    if (t >= spike_start_ && t < spike_end_) {
        // A spike that loses what it holds: the reliable packets (orders, claims) are sent
        // again and still arrive in the burst; the others (positions) are gone.
        if (may_be_lost && spike_loses_) return -1;
        // Held back by the spike, then delivered in a burst a few hundred microseconds apart.
        arrival = bursting_ ? burst_at_ + rng_.uniform(0.0001, 0.0004)
                            : spike_end_ + 0.5 * behaviour_.base_rtt_s;
        bursting_ = true;
        burst_at_ = arrival;
    } else {
        if (may_be_lost && t >= loss_start_ && t < loss_end_ && rng_.chance(loss_p_)) return -1;
        arrival = t + oneway(t);
        // The packets held back by the last spike went into one queue, and a packet sent
        // after it joins that queue behind them: it cannot overtake the burst.
        if (arrival <= burst_at_) {
            arrival = burst_at_ + 0.0002;
            burst_at_ = arrival;
        }
    }
    ctx.out->at(to_us(arrival), id_, std::move(body));
    return arrival;
}

void Player::network(TickContext& ctx) {
    const double now = ctx.t0;
    const Behaviour& b = behaviour_;
    if (now >= spike_end_) {
        // (From now, not from the last spike: the line may have been down since.)
        spike_start_ = std::max(spike_end_, now) + 3.0 + rng_.exponential(b.lag_spike_every_s);
        spike_end_ = spike_start_ + rng_.uniform(0.3, b.lag_spike_max_s);
        spike_reported_ = false;
        bursting_ = false;
        // (Drawn only where spikes may lose, so that every other player's draws stay.)
        spike_loses_ = b.lag_spike_loss_share > 0 && rng_.chance(b.lag_spike_loss_share);
    }
    if (!spike_reported_ && now >= spike_start_) {
        // The first round trip the relay measures after the spike spans the silence.
        const double rtt = spike_end_ - spike_start_ + b.base_rtt_s;
        ctx.out->at(to_us(spike_end_ + 0.5 * b.base_rtt_s), id_,
                    build::Latency{.rtt_us = static_cast<uint32_t>(std::llround(rtt * 1e6))});
        spike_reported_ = true;
    }
    if (b.clock_step_every_s > 0) {
        // The system clock corrected by NTP: the client's timestamps jump, by up to a second
        // either way; its ticks stay in step with the relay's.
        if (next_clock_step_ <= 0) next_clock_step_ = now + rng_.exponential(b.clock_step_every_s);
        if (now >= next_clock_step_) {
            clock_steps_us_ += std::llround(rng_.uniform(-1.0, 1.0) * 1e6);
            next_clock_step_ = now + rng_.exponential(b.clock_step_every_s);
        }
    }
    if (now >= loss_end_) {
        loss_start_ = std::max(loss_end_, now) + rng_.exponential(b.loss_every_s);
        loss_end_ = loss_start_ + rng_.uniform(5.0, 15.0);
        loss_p_ = rng_.uniform(0.05, 0.2);
    }
    if (now >= next_latency_) {
        const bool quiet = now >= spike_start_ - 0.2 && now < spike_end_ + 0.5;
        if (!quiet)
            ctx.out->at(
                to_us(now + relay_phase_ * ctx.dt), id_,
                build::Latency{.rtt_us = static_cast<uint32_t>(std::llround(rtt_now() * 1e6))});
        while (next_latency_ <= now)
            next_latency_ += 1.0;
    }
}

// ---- stimuli and reactions -------------------------------------------------------------

void Player::stimuli(TickContext& ctx) {
    const double now = ctx.t0;
    if (now < next_stimulus_) return;
    const Behaviour& b = behaviour_;
    const double t = now + relay_phase_ * ctx.dt;
    const uint64_t stimulus_id = (static_cast<uint64_t>(id_) << 32) | ++stimuli_;
    ctx.out->at(to_us(t), id_,
                build::Stimulus{.stimulus_id = stimulus_id,
                                .kind = kStimulusKinds[rng_.below(std::size(kStimulusKinds))]});
    if (rng_.chance(b.response_chance)) {
        const double reaction = b.inhuman_reactions ? rng_.uniform(b.reaction_lo_s, b.reaction_hi_s)
                                                    : std::max(0.14, rng_.lognormal(0.27, 0.25));
        const double answer = t + oneway(t) + reaction;
        if (answer < line_drop_at_) {
            build::Order o = order("command", answer, false, true);
            o.response_to = stimulus_id;
            send(ctx, answer, std::move(o), false);
        }
    }
    next_stimulus_ = now + 0.5 + rng_.exponential(1.5);  // one every 2 s on average
}

// ---- movement --------------------------------------------------------------------------

void Player::movement(TickContext& ctx) {
    const double now = ctx.t0, dt = ctx.dt;
    const Behaviour& b = behaviour_;

    if (now >= next_speed_change_) {
        const double u = rng_.uniform();
        target_speed_ = u < 0.10   ? 0.0
                        : u < 0.40 ? rng_.uniform(1.5, 4.5)
                        : u < 0.75 ? rng_.uniform(6.0, 10.0)
                                   : rng_.uniform(12.0, 17.5);
        next_speed_change_ = now + rng_.uniform(2.0, 8.0);
    }
    if (b.speed_hack_mps > 0 && now >= hack_end_) {
        hack_start_ = hack_end_ + rng_.uniform(3.0, 10.0);
        hack_end_ = hack_start_ + rng_.uniform(5.0, 15.0);
    }
    if (away_) {
        target_speed_ = 0.0;
        next_jump_ = std::max(next_jump_, now + 1.0);
    }
    const bool hacking = b.speed_hack_mps > 0 && now >= hack_start_ && now < hack_end_;
    speed_ = hacking ? b.speed_hack_mps : approach(speed_, target_speed_, kAccelerationMps2 * dt);

    heading_ += rng_.normal() * 0.6 * std::sqrt(dt);
    const Vec2 anchor = squads_->anchor(squad_, now);
    const double dx = anchor.x - x_, dy = anchor.y - y_;
    const double away = std::hypot(dx, dy);
    if (away > kSquadRadiusM) {
        const double turn = std::remainder(std::atan2(dy, dx) - heading_, kTwoPi);
        heading_ += std::clamp(turn, -2.0 * dt, 2.0 * dt);
        if (away > 2 * kSquadRadiusM && target_speed_ < 6.0)
            target_speed_ = rng_.uniform(6.0, 10.0);
    }
    x_ += std::cos(heading_) * speed_ * dt;
    y_ += std::sin(heading_) * speed_ * dt;

    if (b.teleport_every_s > 0 && now >= next_teleport_) {
        // Two far jumps, then a shorter one that only a window of updates shows.
        const double distance =
            teleports_ % 3 == 2 ? rng_.uniform(60.0, 90.0) : rng_.uniform(120.0, 350.0);
        const double angle = rng_.uniform(0.0, kTwoPi);
        x_ += distance * std::cos(angle);
        y_ += distance * std::sin(angle);
        ++teleports_;
        next_teleport_ = now + b.teleport_every_s * rng_.uniform(0.7, 1.3);
    }

    if (b.fly_every_s > 0 && now >= fly_end_) {
        ++flights_;
        fly_start_ = fly_end_ + b.fly_every_s * rng_.uniform(0.7, 1.3);
        fly_end_ = fly_start_ + rng_.uniform(5.0, 15.0);
        // Every third flight goes under the terrain instead (no-clip).
        fly_target_ = flights_ % 3 == 2 ? -rng_.uniform(3.0, 6.0) : rng_.uniform(8.0, 25.0);
    }
    const bool flying = b.fly_every_s > 0 && now >= fly_start_ && now < fly_end_;
    if (flying) {
        airborne_ = true;
        const double climb = std::clamp(fly_target_ - z_off_, -4.0 * dt, 4.0 * dt);
        vz_ = climb / dt;
        z_off_ += climb;
    } else if (airborne_) {
        if (z_off_ < 0) {  // back out of the ground
            z_off_ = 0;
            vz_ = 0;
            airborne_ = false;
        } else {
            vz_ -= kGravity * dt;
            z_off_ += vz_ * dt;
            if (z_off_ <= 0) {
                z_off_ = 0;
                vz_ = 0;
                airborne_ = false;
            }
        }
    } else if (now >= next_jump_) {
        airborne_ = true;
        vz_ = kJumpSpeedMps;
        z_off_ += vz_ * dt;
        vz_ -= kGravity * dt;
        next_jump_ = now + rng_.uniform(5.0, 30.0);
    }
    health_ = std::min(100.0, health_ + 4.0 * dt);

    const double ground = terrain_height(x_, y_);
    build::Position update{.position = position(),
                           .velocity = fb::Vec3(static_cast<float>(std::cos(heading_) * speed_),
                                                static_cast<float>(std::sin(heading_) * speed_),
                                                static_cast<float>(vz_)),
                           .on_ground = !airborne_,
                           .ground_height = static_cast<float>(ground),
                           .server_teleport = false};
    const fb::Vec3 at = update.position;
    const double sent = now + send_phase_ * dt;
    const double arrival = send(ctx, sent, std::move(update), true);
    if (arrival >= 0) sent_position(sent, arrival, at);
}

void Player::sent_position(double sent, double arrival, const fb::Vec3& position) {
    // By arrival: a packet held by a lag spike arrives after later ones.
    auto at = sent_.end();
    while (at != sent_.begin() && std::prev(at)->arrival > arrival)
        --at;
    sent_.insert(at, Sent{sent, arrival, position});
    while (sent_.size() > 2 && sent_[1].arrival < arrival - kKeepSentS)
        sent_.pop_front();
}

std::optional<fb::Vec3> Player::seen_at(double t) const {
    // The last update the relay had at t, and the next, interpolated between.
    auto after = std::upper_bound(sent_.begin(), sent_.end(), t,
                                  [](double v, const Sent& s) { return v < s.arrival; });
    if (after == sent_.begin()) return std::nullopt;
    const Sent& before = *std::prev(after);
    if (after == sent_.end()) return before.position;
    const double f = (t - before.arrival) / (after->arrival - before.arrival);
    const fb::Vec3 &a = before.position, &b = after->position;
    return fb::Vec3(static_cast<float>(a.x() + f * (b.x() - a.x())),
                    static_cast<float>(a.y() + f * (b.y() - a.y())),
                    static_cast<float>(a.z() + f * (b.z() - a.z())));
}

void Player::respawn(TickContext& ctx) {
    if (ctx.t0 < respawn_at_) return;
    const Vec2 spawn = squads_->spawn(squad_);
    x_ = spawn.x + rng_.uniform(-10.0, 10.0);
    y_ = spawn.y + rng_.uniform(-10.0, 10.0);
    z_off_ = 0;
    vz_ = 0;
    airborne_ = false;
    speed_ = 0;
    dead_ = false;
    health_ = 100.0;
    // The server moved the player: the relay says so on the update, and drops what the
    // client sent before it (a lag spike may still hold some back).
    const double at = ctx.t0 + relay_phase_ * ctx.dt;
    ctx.out->discard_positions(id_, to_us(at));
    sent_position(at, at, position());
    ctx.out->at(to_us(at), id_,
                build::Position{.position = position(),
                                .velocity = fb::Vec3(0, 0, 0),
                                .on_ground = true,
                                .ground_height = static_cast<float>(terrain_height(x_, y_)),
                                .server_teleport = true});
}

// ---- inputs ----------------------------------------------------------------------------

build::Order Player::order(std::string_view kind, double t, bool repeat, bool with_target) {
    build::Order o;
    o.kind = std::string(kind);
    o.repeat = repeat;
    if (with_target)
        o.target = fb::Vec3(static_cast<float>(x_ + rng_.uniform(-30.0, 30.0)),
                            static_cast<float>(y_ + rng_.uniform(-30.0, 30.0)), 0.0f);
    const double rate = behaviour_.clock_rate;
    o.claimed_tick = static_cast<uint64_t>(std::floor(t * rate * hz_));
    o.client_time_us =
        clock_epoch_us_ + clock_steps_us_ + std::llround(t * 1e6 * rate * (1.0 + clock_drift_));
    return o;
}

void Player::aim(TickContext& ctx, double t, build::Order& o) {
    if (!engaged_ || dead_ || !valid_target(ctx, target_, *weapon_)) return;
    // The screen shows the target as the relay had it one downlink ago; the player's own
    // eye is where its client last said it was.
    const auto seen = (*ctx.players)[target_ - 1].seen_at(t - 0.5 * behaviour_.base_rtt_s);
    if (!seen) return;
    const Sent* eye = nullptr;
    for (const Sent& s : sent_)
        if (s.sent <= t && (!eye || s.sent > eye->sent)) eye = &s;
    if (!eye) return;
    const double ex = eye->position.x(), ey = eye->position.y(), ez = eye->position.z();
    const double dx = seen->x() - ex, dy = seen->y() - ey, dz = seen->z() - ez;
    const double range = std::sqrt(dx * dx + dy * dy + dz * dz);
    if (range < 1.0) return;
    // Two unit vectors across the line of sight, and an angular error along each.
    const double ux = dx / range, uy = dy / range, uz = dz / range;
    const double h = std::hypot(ux, uy);
    const double ax = h > 1e-9 ? -uy / h : 1.0, ay = h > 1e-9 ? ux / h : 0.0, az = 0.0;
    const double bx = uy * az - uz * ay, by = uz * ax - ux * az, bz = ux * ay - uy * ax;
    const double hours = t / 3600.0;
    const double spread =
        behaviour_.aim_spread_mrad * (1.0 + behaviour_.aim_fatigue_per_h * hours) / 1e3;
    const double sigma = spread / kRayleighMedian;
    const double ta = std::tan(aim_rng_.normal(0.0, sigma)),
                 tb = std::tan(aim_rng_.normal(0.0, sigma));
    o.target = fb::Vec3(static_cast<float>(ex + range * (ux + ta * ax + tb * bx)),
                        static_cast<float>(ey + range * (uy + ta * ay + tb * by)),
                        static_cast<float>(ez + range * (uz + ta * az + tb * bz)));
    o.target_player = target_;
}

double Player::next_gap() {
    const Behaviour& b = behaviour_;
    switch (b.inputs) {
        case InputModel::human:
            return stream_.next(rng_, pending_);
        case InputModel::metronome:
            return b.input_period_s;
        case InputModel::sustained_rate:
            return b.input_period_s * (0.4 + rng_.exponential(0.6));
        case InputModel::humanised:
            return b.input_period_s + rng_.uniform(0.0, b.input_jitter_s);
    }
    return 1.0;
}

void Player::inputs(TickContext& ctx) {
    while (next_input_ < ctx.t1) {
        const double t = next_input_;
        if (behaviour_.inputs == InputModel::human) {
            for (const InputAction& action : pending_) {
                const bool targeted = action.kind == "command" || action.kind == "command_update";
                build::Order o = order(action.kind, t, action.repeat, targeted);
                if (targeted && !action.repeat) aim(ctx, t, o);
                send(ctx, t, std::move(o), false);
            }
        } else {
            build::Order o = order("command", t, false, true);
            aim(ctx, t, o);
            send(ctx, t, std::move(o), false);
        }
        next_input_ += next_gap();
    }
}

void Player::plan_hold(double after) {
    hold_start_ = after + 1.0 + rng_.exponential(behaviour_.hold_key_every_s);
    hold_end_ = hold_start_ + rng_.uniform(0.5, 2.5);
}

void Player::held_key(TickContext& ctx) {
    if (behaviour_.hold_key_every_s <= 0) return;
    while (true) {
        if (!hold_pressed_) {
            if (hold_start_ >= ctx.t1) return;
            build::Order press = order("command", hold_start_, false, true);
            hold_target_ = *press.target;
            send(ctx, hold_start_, std::move(press), false);
            hold_pressed_ = true;
            next_repeat_ = hold_start_ + kKeyRepeatDelayS;
        }
        const double until = std::min(hold_end_, ctx.t1);
        while (next_repeat_ < until) {
            build::Order repeat = order("command", next_repeat_, true, false);
            repeat.target = hold_target_;
            send(ctx, next_repeat_, std::move(repeat), false);
            next_repeat_ += 1.0 / kKeyRepeatRateHz;
        }
        if (hold_end_ >= ctx.t1) return;
        hold_pressed_ = false;
        plan_hold(hold_end_);
    }
}

// ---- combat ----------------------------------------------------------------------------

bool Player::valid_target(const TickContext& ctx, uint32_t target, const Weapon& weapon) const {
    if (target == 0 || target == id_) return false;
    const Player& other = (*ctx.players)[target - 1];
    if (!other.connected_ || other.dead_) return false;
    // As the server computes range_m: in three dimensions.
    const fb::Vec3 a = position(), b = other.position();
    const double distance =
        std::sqrt((a.x() - b.x()) * (a.x() - b.x()) + (a.y() - b.y()) * (a.y() - b.y()) +
                  (a.z() - b.z()) * (a.z() - b.z()));
    if (behaviour_.hits_beyond_range) return distance >= 1.3 * std::max(weapon.range_m, 100.0);
    return distance <= weapon.range_m;
}

uint32_t Player::pick_target(TickContext& ctx, const Weapon& weapon) {
    uint32_t eligible[32];
    size_t count = 0;
    auto consider = [&](uint32_t squad) {
        for (uint32_t other = squads_->first(squad);
             other <= ctx.players->size() && count < std::size(eligible);
             other += squads_->stride())
            if (valid_target(ctx, other, weapon)) eligible[count++] = other;
    };
    // The player's own squad, and the neighbouring squads: near targets and far ones
    // (valid_target keeps those the player's weapon, or cheat, reaches).
    const uint32_t squads = squads_->count();
    uint32_t tried[5];
    size_t tried_count = 0;
    for (uint32_t offset : {0u, 1u, 2u, squads - 1, squads - 2}) {
        if (offset >= squads) continue;
        const uint32_t squad = (squad_ + offset) % squads;
        if (std::find(tried, tried + tried_count, squad) != tried + tried_count) continue;
        tried[tried_count++] = squad;
        consider(squad);
    }
    return count == 0 ? 0 : eligible[rng_.below(count)];
}

bool Player::take_hit(TickContext& ctx, double at, double damage) {
    if (!connected_ || dead_) return false;
    damage_taken_ += damage;
    health_ -= damage;
    ctx.out->at(to_us(at) + 1, id_,
                build::Stat{.stat = "damage_taken", .delta = damage, .value_after = damage_taken_});
    if (health_ > 0) return false;
    dead_ = true;
    respawn_at_ = at + kRespawnDelayS;
    engaged_ = false;
    next_engagement_ = std::max(next_engagement_, respawn_at_ + 1.0);
    return true;
}

void Player::combat(TickContext& ctx) {
    const double now = ctx.t0;
    const Behaviour& b = behaviour_;
    const bool rapid = b.shots_per_s > 0;
    if (!engaged_) {
        if (now < next_engagement_) return;
        engaged_ = true;
        engagement_end_ = now + rng_.uniform(2.0, 6.0);
        weapon_ = rapid || b.hits_beyond_range || rng_.chance(0.7) ? &kRifle : &kPistol;
        next_shot_ = now + rng_.uniform(0.0, 0.2);
        target_ = 0;
    }
    if (now >= engagement_end_) {
        engaged_ = false;
        next_engagement_ = now + (rapid ? rng_.uniform(2.0, 5.0) : 5.0 + rng_.exponential(15.0));
        return;
    }
    next_shot_ = std::max(next_shot_, now);  // no shots back in time (after a dropped line)
    while (next_shot_ < ctx.t1) {
        const double t = next_shot_;
        next_shot_ +=
            rapid ? rng_.uniform(0.85, 1.15) / b.shots_per_s
                  : (weapon_ == &kRifle ? rng_.uniform(0.11, 0.30) : rng_.uniform(0.26, 0.60));
        if (!valid_target(ctx, target_, *weapon_)) target_ = pick_target(ctx, *weapon_);
        if (target_ == 0 || !rng_.chance(rapid ? 0.9 : 0.45)) continue;
        Player& victim = (*ctx.players)[target_ - 1];
        const fb::Vec3 me = position(), them = victim.position();
        const double range = std::sqrt((me.x() - them.x()) * (me.x() - them.x()) +
                                       (me.y() - them.y()) * (me.y() - them.y()) +
                                       (me.z() - them.z()) * (me.z() - them.z()));
        const bool line_of_sight = !(b.hits_through_walls && rng_.chance(0.85));
        const auto claimed_tick = static_cast<uint64_t>(std::floor(t * b.clock_rate * hz_));
        build::Hit hit{.target_player = target_,
                       .weapon = std::string(weapon_->name),
                       .attacker_position = me,
                       .target_position = them,
                       .range_m = static_cast<float>(range),
                       .damage = static_cast<float>(
                           std::round(rng_.uniform(weapon_->min_damage, weapon_->max_damage))),
                       .line_of_sight = line_of_sight,
                       .target_alive = true,
                       .target_damageable = true,
                       .claimed_tick = claimed_tick};
        const double damage = hit.damage;
        const double arrival = send(ctx, t, std::move(hit), false);
        if (victim.take_hit(ctx, arrival, damage)) {
            ctx.out->at(to_us(arrival), id_,
                        build::Kill{.target_player = target_,
                                    .weapon = std::string(weapon_->name),
                                    .attacker_position = me,
                                    .target_position = them,
                                    .range_m = static_cast<float>(range),
                                    .line_of_sight = line_of_sight,
                                    .claimed_tick = claimed_tick});
            target_ = 0;
        }
    }
}

// ---- items and experience --------------------------------------------------------------

void Player::economy(TickContext& ctx) {
    const double now = ctx.t0;
    const double t = now + relay_phase_ * ctx.dt;
    const Behaviour& b = behaviour_;
    auto change = [&](size_t item, int32_t delta, const char* source) {
        items_[item] += delta;
        ctx.out->at(to_us(t), id_,
                    build::Inventory{.item_id = std::string(kItems[item].id),
                                     .delta = delta,
                                     .count_after = items_[item],
                                     .source = source});
    };
    if (now >= next_pickup_) {
        if (items_[kCrown] == 0 && rng_.chance(0.02)) {
            change(kCrown, 1, "pickup");
        } else {
            const size_t item = rng_.below(kCommonItems);
            const int32_t delta =
                kItems[item].stack < 16 ? 1 : 1 + static_cast<int32_t>(rng_.below(4));
            if (items_[item] + delta > kItems[item].stack) {
                change(item, -std::max(1, items_[item] / 2),
                       "craft");  // used up before the stack is full
            } else {
                change(item, delta, "pickup");
            }
        }
        next_pickup_ = now + 1.0 + rng_.exponential(9.0);
    }
    if (b.duplicates_items && now >= next_dup_) {
        if (items_[kCrown] < 2) {
            while (items_[kCrown] < 2)
                change(kCrown, 1, "trade");  // a unique item, twice
        } else {
            change(kWood, std::max(items_[kWood], 8),
                   "trade");  // the stack doubles, past its limit
        }
        next_dup_ = now + rng_.uniform(2.0, 5.0);
    }
    if (now >= next_experience_) {
        double delta, interval;
        if (b.experience_per_s > 0) {
            interval = rng_.uniform(1.0, 3.0);
            delta = std::round(b.experience_per_s * interval);
        } else {
            interval = 2.0 + rng_.exponential(12.0);
            delta = std::round(rng_.uniform(10.0, 60.0));
        }
        experience_ += delta;
        ctx.out->at(to_us(t), id_,
                    build::Stat{.stat = "experience", .delta = delta, .value_after = experience_});
        next_experience_ = now + interval;
    }
}

}  // namespace arbiter::tools::sim
