#include "arbiter/tools/profiles.hpp"

#include <algorithm>
#include <cmath>

namespace arbiter::tools {

namespace {

Behaviour& note(Behaviour& b, const char* name, double value) {
    b.params.emplace_back(name, std::round(value * 1000.0) / 1000.0);
    return b;
}

// A person on a network: a round trip of 20 to 250 ms (median 60), lag spikes, packet
// loss, now and then a dropped line, a held key; a human rhythm and human reactions.
Behaviour honest(Rng& rng) {
    Behaviour b;
    b.base_rtt_s = std::clamp(rng.lognormal(0.060, 0.5), 0.020, 0.250);
    note(b, "rtt_ms", b.base_rtt_s * 1e3);
    return b;
}

// Honest players on harder terms, each alone so that a false positive names its cause.
// Lag spikes of up to 10 s, every two minutes on average: half of them end in a burst of
// everything they held, half lose the positions (orders and claims, sent reliably, still
// arrive in the burst).
Behaviour honest_long_spikes(Rng& rng) {
    Behaviour b = honest(rng);
    b.lag_spike_every_s = 120.0;
    b.lag_spike_max_s = 10.0;
    b.lag_spike_loss_share = 0.5;
    return b;
}

// A jittery link: a queueing delay that swings between 0 and 150 ms on top of the round
// trip, within a fraction of a second; packets bunch, but keep their order.
Behaviour honest_jittery(Rng& rng) {
    Behaviour b = honest(rng);
    b.extra_jitter_s = 0.150;
    return b;
}

// A client whose system clock NTP steps by up to a second, every five minutes on average.
Behaviour honest_ntp_steps(Rng& rng) {
    Behaviour b = honest(rng);
    b.clock_step_every_s = 300.0;
    return b;
}

// A player who tabs out for 20 s to 5 min, every ten minutes on average, and comes back.
Behaviour honest_tab_out(Rng& rng) {
    Behaviour b = honest(rng);
    b.tab_out_every_s = 600.0;
    b.tab_out_max_s = 300.0;
    return b;
}

// Runs at 1.7 to 2.4 times the 20 m/s limit, in stretches.
Behaviour speed_hack(Rng& rng) {
    Behaviour b = honest(rng);
    b.speed_hack_mps = rng.uniform(34.0, 48.0);
    return note(b, "speed_mps", b.speed_hack_mps);
}

// Jumps 120 to 350 m in one update (no tick of movement does that), or 60 to 90 m (a
// window no speed covers), every 8 to 20 s.
Behaviour teleport(Rng& rng) {
    Behaviour b = honest(rng);
    b.teleport_every_s = rng.uniform(8.0, 20.0);
    return note(b, "every_s", b.teleport_every_s);
}

// The client's clock runs 1.15 to 1.5 times as fast as the relay's: its orders claim ticks
// the relay has not opened yet and its own timestamps run ahead.
Behaviour clock_speedup(Rng& rng) {
    Behaviour b = honest(rng);
    b.clock_rate = rng.uniform(1.15, 1.5);
    return note(b, "clock_rate", b.clock_rate);
}

// Leaves the ground for 5 to 15 s at a time, 8 to 25 m up, or sinks under the terrain.
Behaviour fly(Rng& rng) {
    Behaviour b = honest(rng);
    b.fly_every_s = rng.uniform(10.0, 20.0);
    return note(b, "every_s", b.fly_every_s);
}

// Hits targets far beyond the weapon's range.
Behaviour hit_range(Rng& rng) {
    Behaviour b = honest(rng);
    b.hits_beyond_range = true;
    return b;
}

// Hits targets the server sees no line of sight to.
Behaviour hit_through_wall(Rng& rng) {
    Behaviour b = honest(rng);
    b.hits_through_walls = true;
    return b;
}

// Fires 25 to 40 shots a second from a rifle that fires at most 10.
Behaviour rapid_fire(Rng& rng) {
    Behaviour b = honest(rng);
    b.shots_per_s = rng.uniform(25.0, 40.0);
    return note(b, "shots_per_s", b.shots_per_s);
}

// Doubles a stack every few seconds (past the stack limit) and holds a unique item twice.
Behaviour item_dup(Rng& rng) {
    Behaviour b = honest(rng);
    b.duplicates_items = true;
    return b;
}

// Gains 150 to 500 experience a second; the game gives about 3 (docs: 20,000 an hour max).
Behaviour xp_rate(Rng& rng) {
    Behaviour b = honest(rng);
    b.experience_per_s = rng.uniform(150.0, 500.0);
    return note(b, "experience_per_s", b.experience_per_s);
}

// Leaves and rejoins every 4 to 9 s: 7 to 15 reconnects a minute (the limit is 5).
Behaviour reconnect_spam(Rng& rng) {
    Behaviour b = honest(rng);
    b.reconnect_spam_every_s = rng.uniform(4.0, 9.0);
    return note(b, "every_s", b.reconnect_spam_every_s);
}

// A script with a fixed delay of 100 to 250 ms: a CV near 0, one tick bin.
Behaviour metronome(Rng& rng) {
    Behaviour b = honest(rng);
    b.inputs = InputModel::metronome;
    b.input_period_s = rng.uniform(0.100, 0.250);
    b.hold_key_every_s = 0;
    b.response_chance = 0;  // a script does not look at the screen
    return note(b, "period_ms", b.input_period_s * 1e3);
}

// Answers stimuli 12 to 45 ms after it sees them (elite sprinters: about 160 ms).
Behaviour reaction_bot(Rng& rng) {
    Behaviour b = honest(rng);
    b.inhuman_reactions = true;
    b.response_chance = 0.98;
    b.reaction_lo_s = 0.012;
    b.reaction_hi_s = rng.uniform(0.030, 0.045);
    return note(b, "reaction_max_ms", b.reaction_hi_s * 1e3);
}

// Distinct inputs at 900 to 1,400 a minute, sustained, with irregular gaps (real players
// peak at 452 counted by distinct ticks).
Behaviour rate_bot(Rng& rng) {
    Behaviour b = honest(rng);
    b.inputs = InputModel::sustained_rate;
    b.input_period_s = 60.0 / rng.uniform(900.0, 1400.0);
    b.hold_key_every_s = 0;
    b.response_chance = 0;
    return note(b, "inputs_per_min", 60.0 / b.input_period_s);
}

// A fixed delay of 150 to 250 ms plus uniform jitter of up to 30 % of it: a CV of about
// 0.07 to 0.08 (above the 0.05 limit) but only one or two tick bins of entropy.
Behaviour humanised_bot(Rng& rng) {
    Behaviour b = honest(rng);
    b.inputs = InputModel::humanised;
    b.input_period_s = rng.uniform(0.150, 0.250);
    b.input_jitter_s = 0.3 * b.input_period_s;
    b.hold_key_every_s = 0;
    b.response_chance = 0;
    note(b, "delay_ms", b.input_period_s * 1e3);
    return note(b, "jitter_ms", b.input_jitter_s * 1e3);
}

// Aims within 0.5 to 2 mrad (a pixel or two of a 1080p screen at 90 degrees) of the target
// as its screen shows it, and never tires: a session's last hour as tight as its first.
Behaviour aimbot(Rng& rng) {
    Behaviour b = honest(rng);
    b.aim_spread_mrad = rng.uniform(0.5, 2.0);
    b.aim_fatigue_per_h = 0.0;
    return note(b, "aim_mrad", b.aim_spread_mrad);
}

constexpr ProfileInfo kProfiles[] = {
    {"honest", false,
     "a person: human movement, input rhythm from real traces, lag spikes, packet loss, "
     "a held key, human reactions",
     honest},
    {"honest_long_spikes", false, "an honest player with lag spikes of up to 10 s every ~2 min",
     honest_long_spikes},
    {"honest_jittery", false, "an honest player on a link whose queueing adds 0-150 ms",
     honest_jittery},
    {"honest_ntp_steps", false, "an honest player whose client clock NTP steps by up to 1 s",
     honest_ntp_steps},
    {"honest_tab_out", false, "an honest player who tabs out for 20 s to 5 min every ~10 min",
     honest_tab_out},
    {"speed_hack", true, "runs at 34-48 m/s (limit 20) in stretches of 5-15 s", speed_hack},
    {"teleport", true, "jumps 120-350 m (or 60-90 m) in one update, every 8-20 s", teleport},
    {"clock_speedup", true, "client clock 1.15-1.5x the relay's: claims future ticks",
     clock_speedup},
    {"fly", true, "airborne 8-25 m up for 5-15 s, or under the terrain", fly},
    {"hit_range", true, "hits targets 1.3-5x beyond the weapon's range", hit_range},
    {"hit_through_wall", true, "hits without line of sight", hit_through_wall},
    {"rapid_fire", true, "25-40 shots a second from a 10-a-second rifle", rapid_fire},
    {"item_dup", true, "doubles a stack past its limit; a unique item twice", item_dup},
    {"xp_rate", true, "150-500 experience a second (the game: about 3)", xp_rate},
    {"reconnect_spam", true, "leaves and rejoins every 4-9 s", reconnect_spam},
    {"metronome", true, "a script: one input every 100-250 ms, exactly", metronome},
    {"reaction_bot", true, "answers stimuli in 12-45 ms", reaction_bot},
    {"rate_bot", true, "900-1,400 distinct inputs a minute, sustained", rate_bot},
    {"humanised_bot", true, "a fixed 150-250 ms delay plus up to 30 % random jitter",
     humanised_bot},
    {"aimbot", true, "aims within 0.5-2 mrad of its target, hour after hour, never tiring", aimbot},
};

}  // namespace

std::span<const ProfileInfo> profiles() {
    return kProfiles;
}

const ProfileInfo* find_profile(std::string_view name) {
    for (const ProfileInfo& p : kProfiles)
        if (name == p.name) return &p;
    return nullptr;
}

std::string profile_names() {
    std::string out;
    for (const ProfileInfo& p : kProfiles)
        out += std::string(out.empty() ? "" : ", ") + p.name;
    return out;
}

}  // namespace arbiter::tools
