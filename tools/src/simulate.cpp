#include "arbiter/tools/simulate.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

#include "arbiter/host/untrusted_text.hpp"
#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/parse.hpp"
#include "arbiter/tools/profiles.hpp"
#include "arbiter/tools/truth.hpp"
#include "player.hpp"
#include "scheduler.hpp"
#include "world.hpp"

namespace arbiter::tools {

namespace {

// The relay's wall clock at the start of every simulated match (2026-09-21).
constexpr int64_t kStartedUnixUs = 1'790'000'000'000'000;

constexpr const char* kBodyNames[] = {
    "PlayerJoin", "PlayerLeave", "LatencySample",   "Order",      "PositionUpdate",
    "HitClaim",   "KillClaim",   "InventoryChange", "StatChange", "Stimulus"};
static_assert(std::size(kBodyNames) == std::variant_size_v<sim::Body>);

std::string format_double(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

}  // namespace

std::vector<PlayerMix> parse_player_mix(std::string_view text) {
    std::vector<PlayerMix> mix;
    std::map<std::string, size_t, std::less<>> seen;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view part = text.substr(start, end - start);
        start = end + 1;
        if (part.empty()) {
            if (end == text.size()) break;
            throw std::invalid_argument("--players: an empty entry (expected PROFILE=COUNT,...)");
        }
        size_t eq = part.find('=');
        if (eq == std::string_view::npos)
            throw std::invalid_argument("--players: '" + std::string(part) +
                                        "' is not PROFILE=COUNT");
        std::string name(part.substr(0, eq));
        if (!find_profile(name))
            throw std::invalid_argument("--players: unknown profile '" + name +
                                        "' (the profiles are: " + profile_names() + ")");
        auto count = parse_u64(part.substr(eq + 1));
        if (!count || *count > kMaxSimulatedPlayers)
            throw std::invalid_argument("--players: the count of '" + name +
                                        "' is not a number from 0 to " +
                                        std::to_string(kMaxSimulatedPlayers));
        if (seen.count(name))
            throw std::invalid_argument("--players: '" + name + "' appears twice");
        seen.emplace(name, mix.size());
        mix.push_back({name, static_cast<uint32_t>(*count)});
        if (end == text.size()) break;
    }
    return mix;
}

void check_options(const SimulationOptions& o) {
    if (o.out.empty()) throw std::invalid_argument("no output file");
    if (!(o.duration_s > 0) || o.duration_s > kMaxDurationS)
        throw std::invalid_argument("--duration-s must be above 0 and at most 86400 (a day)");
    if (!(o.tick_rate_hz >= 0.5) || o.tick_rate_hz > 1000)
        throw std::invalid_argument("--tick-rate must be from 0.5 to 1000 Hz");
    if (o.batch_events == 0 || o.batch_events > kMaxBatchEvents)
        throw std::invalid_argument("--batch-events must be from 1 to " +
                                    std::to_string(kMaxBatchEvents));
    if (o.relay_id.empty()) throw std::invalid_argument("--relay must not be empty");
    // Ingest refuses a string that is not UTF-8: every batch, or every join, would be.
    if (!host::is_valid_utf8(o.relay_id)) throw std::invalid_argument("--relay is not UTF-8");
    if (!host::is_valid_utf8(o.accounts)) throw std::invalid_argument("--accounts is not UTF-8");
    uint64_t total = 0;
    for (const PlayerMix& m : o.players) {
        if (!find_profile(m.profile))
            throw std::invalid_argument("unknown profile '" + m.profile + "'");
        total += m.count;
    }
    if (total == 0)
        throw std::invalid_argument("no players: --players PROFILE=COUNT,... names at least one");
    if (total > kMaxSimulatedPlayers)
        throw std::invalid_argument(std::to_string(total) + " players: at most " +
                                    std::to_string(kMaxSimulatedPlayers));
    if (o.duration_s * o.tick_rate_hz > 1e8)
        throw std::invalid_argument("more than 100 million ticks");
}

std::string simulated_account(const SimulationOptions& o, uint32_t id) {
    char number[16];
    std::snprintf(number, sizeof number, "%06u", id);
    if (!o.accounts.empty()) return o.accounts + "-" + number;
    return "sim-" + std::to_string(o.seed) + "-" + std::to_string(o.match_id) + "-" + number + "@" +
           o.relay_id;
}

SimulationSummary simulate(const SimulationOptions& o, const HumanRhythm& rhythm) {
    check_options(o);

    // Who is who: the profiles, shuffled over the player ids so that an id tells nothing.
    std::vector<const ProfileInfo*> assignment;
    for (const PlayerMix& m : o.players)
        assignment.insert(assignment.end(), m.count, find_profile(m.profile));
    Rng relay_rng(derive_seed(o.seed, 0));
    for (size_t i = assignment.size(); i > 1; --i)
        std::swap(assignment[i - 1], assignment[relay_rng.below(i)]);

    const auto player_count = static_cast<uint32_t>(assignment.size());
    sim::Squads squads(player_count, o.seed);
    std::vector<sim::Player> players;
    players.reserve(player_count);
    for (uint32_t id = 1; id <= player_count; ++id)
        players.emplace_back(id, simulated_account(o, id), *assignment[id - 1],
                             derive_seed(o.seed, id), rhythm, squads, o.tick_rate_hz);

    const sim::TickClock clock(o.tick_rate_hz);
    const auto ticks =
        static_cast<uint64_t>(std::max(1.0, std::round(o.duration_s * o.tick_rate_hz)));
    const int64_t end_us = clock.start_us(ticks);
    sim::Scheduler scheduler(clock, end_us);

    SimulationSummary summary;
    summary.out = o.out;
    summary.truth = o.truth.empty() ? default_truth_path(o.out) : o.truth;
    summary.players = player_count;
    summary.ticks = ticks;
    uint64_t by_kind[std::size(kBodyNames)] = {};
    uint64_t tick_boundaries = 0;

    StagedEventFile file(o.out);
    MatchStream stream(file, o.relay_id, o.match_id, o.batch_events);
    stream.add(0, 0, 0,
               build::MatchStart{.game = "arena",
                                 .map = "hills",
                                 .rules = "deathmatch",
                                 .rated = true,
                                 .tick_rate_hz = static_cast<float>(o.tick_rate_hz),
                                 .started_unix_us = kStartedUnixUs});
    for (sim::Player& p : players)
        p.join(scheduler);

    sim::TickContext ctx;
    ctx.out = &scheduler;
    ctx.squads = &squads;
    ctx.players = &players;
    ctx.hz = o.tick_rate_hz;
    double next_hiccup = 10.0 + relay_rng.exponential(60.0);
    std::vector<uint32_t> order;
    host::ProgressStretch progress(o.progress, "simulate", static_cast<uint64_t>(o.duration_s),
                                   host::ProgressUnit::seconds_of_play);
    for (uint64_t tick = 0; tick < ticks; ++tick) {
        ctx.tick = tick;
        progress.update(static_cast<uint64_t>(static_cast<double>(tick) / o.tick_rate_hz));
        ctx.t0 = static_cast<double>(clock.start_us(tick)) / 1e6;
        ctx.t1 = static_cast<double>(clock.start_us(tick + 1)) / 1e6;
        ctx.dt = ctx.t1 - ctx.t0;
        for (sim::Player& p : players)
            p.step(ctx);

        const std::vector<sim::SimEvent> events = scheduler.take(tick, order);
        for (uint32_t index : order) {
            const sim::SimEvent& event = events[index];
            ++by_kind[event.body.index()];
            std::visit([&](const auto& body) { stream.add(event.t_us, tick, event.player, body); },
                       event.body);
        }
        // The relay closes the tick; now and then it runs late itself.
        uint32_t lag_us = static_cast<uint32_t>(relay_rng.below(2000));
        if (ctx.t0 >= next_hiccup) {
            lag_us = 20'000 + static_cast<uint32_t>(relay_rng.below(60'000));
            next_hiccup = ctx.t0 + 10.0 + relay_rng.exponential(60.0);
        }
        const int64_t close_us = std::max(clock.start_us(tick + 1) - 1, stream.last_time_us());
        stream.add(close_us, tick, 0, build::TickBoundary{.tick_lag_us = lag_us});
        ++tick_boundaries;
        if (tick + 1 == ticks) {
            // A one-player match is a run whose length the client claims (seed 004).
            std::optional<int64_t> claimed;
            if (player_count == 1)
                claimed = players.front().claimed_length_us(static_cast<double>(end_us) / 1e6);
            stream.add(close_us, tick, 0,
                       build::MatchEnd{.reason = "finished",
                                       .claimed_length_us = claimed,
                                       .ended_unix_us = kStartedUnixUs + close_us});
        }
        stream.flush();
    }

    Truth truth;
    truth.generator = {{"command", "simulate"},
                       {"seed", std::to_string(o.seed)},
                       {"duration_s", format_double(o.duration_s)},
                       {"tick_rate_hz", format_double(o.tick_rate_hz)},
                       {"rhythm", rhythm.description()}};
    TruthMatch match;
    match.relay_id = o.relay_id;
    match.match_id = o.match_id;
    match.players.reserve(players.size());
    for (const sim::Player& p : players)
        match.players.push_back(
            {p.id(), p.account(), p.profile().name, p.profile().cheater, p.behaviour().params});
    truth.matches.push_back(std::move(match));
    // The truth first: should it fail, the match file is never moved into place.
    write_truth(summary.truth, truth);
    file.commit();

    summary.events = stream.events();
    summary.batches = file.batches();
    summary.bytes = file.bytes();
    summary.dropped_after_end = scheduler.dropped();
    summary.events_by_kind.emplace_back("MatchStart", 1);
    summary.events_by_kind.emplace_back("MatchEnd", 1);
    summary.events_by_kind.emplace_back("TickBoundary", tick_boundaries);
    for (size_t i = 0; i < std::size(kBodyNames); ++i)
        summary.events_by_kind.emplace_back(kBodyNames[i], by_kind[i]);
    return summary;
}

}  // namespace arbiter::tools
