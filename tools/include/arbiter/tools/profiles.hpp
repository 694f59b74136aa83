// The player profiles the simulator can mix: the honest player and every cheat the
// bundled analyzers must catch (docs/recorded-matches.md, "The profiles", lists them).
//
// A profile is one small function that takes the honest player and turns one knob of a
// Behaviour. Cheaters are people too: they lag, hold keys, walk about and pick things up
// like everyone else; each profile changes only what its cheat changes, so that a check
// that fires on a profile fires on the cheat, not on some side effect.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arbiter/tools/random.hpp"

namespace arbiter::tools {

enum class InputModel {
    human,           // the human rhythm model (real traces), plus held keys
    metronome,       // a script with a fixed delay: one input every `input_period_s`
    sustained_rate,  // a bot at an inhuman rate: random gaps around `input_period_s`
    humanised,       // a fixed delay plus uniform jitter in [0, input_jitter_s)
};

struct Behaviour {
    // ---- a person on a network: every profile ----
    double base_rtt_s = 0.06;         // the round trip to the relay
    double lag_spike_every_s = 60.0;  // mean time between lag spikes (0.3 s to the next)...
    double lag_spike_max_s = 1.2;     // ...this long each
    double lag_spike_loss_share = 0;  // the share of spikes that lose the positions they hold
    double extra_jitter_s = 0.0;      // a queueing delay of up to this much (a jittery link)
    double clock_step_every_s =
        0.0;                     // mean time between steps of the client's clock (NTP); 0: none
    double loss_every_s = 90.0;  // mean time between stretches of packet loss
    double reconnect_every_s = 900.0;  // mean time between reconnects (a dropped line)
    double hold_key_every_s = 20.0;    // mean time between held keys (0 for none)
    // Away from the keyboard (tabbed out): this often on average (0: never), for 20 s up to
    // tab_out_max_s; the client stays connected and sends positions, standing still, and
    // nothing else.
    double tab_out_every_s = 0.0;
    double tab_out_max_s = 0.0;

    // ---- inputs ----
    InputModel inputs = InputModel::human;
    double input_period_s = 0.0;  // see InputModel
    double input_jitter_s = 0.0;
    // Stimuli: the chance of answering one, and the reaction time (before the network).
    double response_chance = 0.8;
    bool inhuman_reactions = false;  // uniform in [reaction_lo_s, reaction_hi_s)
    double reaction_lo_s = 0.0, reaction_hi_s = 0.0;

    // ---- aim: orders aimed at the player fought (an angle off the target, as seen) ----
    // The median angular error at the start of the match, milliradians, and how much it
    // widens an hour (0.1: 10 % more each hour). 0 and 0: a person's, which the player
    // draws from a stream of its own (so that drawing it changes no other draw).
    double aim_spread_mrad = 0.0;
    double aim_fatigue_per_h = 0.0;

    // ---- cheats: each 0 / false / 1 when off ----
    double speed_hack_mps = 0.0;          // runs at this speed in stretches of 5 to 15 s
    double teleport_every_s = 0.0;        // jumps 60 to 350 m in one update, this often
    double fly_every_s = 0.0;             // flies (or sinks under the terrain) this often
    double clock_rate = 1.0;              // the client's clock runs this much faster
    bool hits_beyond_range = false;       // hits on targets 1.3 to 5 times the weapon's range
    bool hits_through_walls = false;      // most hits without line of sight
    double shots_per_s = 0.0;             // rapid fire: this many shots a second
    bool duplicates_items = false;        // doubles a stack every few seconds; a unique item twice
    double experience_per_s = 0.0;        // experience gained per second (0: the game's pace)
    double reconnect_spam_every_s = 0.0;  // leaves and rejoins this often

    // What was drawn, by name, for the truth file.
    std::vector<std::pair<std::string, double>> params;
};

struct ProfileInfo {
    const char* name;
    bool cheater;
    const char* summary;
    Behaviour (*make)(Rng& rng);
};

// Every profile, honest first.
std::span<const ProfileInfo> profiles();
const ProfileInfo* find_profile(std::string_view name);
// "honest, speed_hack, ...".
std::string profile_names();

}  // namespace arbiter::tools
