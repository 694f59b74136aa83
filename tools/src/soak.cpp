#include "arbiter/tools/soak.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <system_error>

#include "arbiter/tools/match_writer.hpp"
#include "arbiter/tools/profiles.hpp"
#include "arbiter/tools/truth.hpp"

namespace arbiter::tools {

namespace {

std::vector<PlayerMix> default_mix() {
    std::vector<PlayerMix> mix;
    for (const ProfileInfo& info : profiles())
        if (!info.cheater) mix.push_back({info.name, 1});
    return mix;
}

// `players` split over the mix's profiles by weight, largest remainders first, so that the
// counts add up and a profile of small weight still gets its share over many matches.
std::vector<PlayerMix> split(const std::vector<PlayerMix>& mix, uint32_t players) {
    uint64_t weights = 0;
    for (const PlayerMix& m : mix)
        weights += m.count;
    std::vector<PlayerMix> out;
    std::vector<std::pair<uint64_t, size_t>> remainders;  // (remainder, index), for the rest
    uint64_t given = 0;
    for (size_t i = 0; i < mix.size(); ++i) {
        const uint64_t exact = static_cast<uint64_t>(players) * mix[i].count;
        out.push_back({mix[i].profile, static_cast<uint32_t>(exact / weights)});
        given += exact / weights;
        remainders.emplace_back(exact % weights, i);
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; given < players; ++k, ++given)
        ++out[remainders[k % remainders.size()].second].count;
    std::erase_if(out, [](const PlayerMix& m) { return m.count == 0; });
    return out;
}

// Removes a file on every way out of a scope, ignoring a file that is not there.
struct RemovedAtExit {
    std::filesystem::path path;
    ~RemovedAtExit() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

}  // namespace

uint32_t SoakMatch::total() const {
    uint32_t n = 0;
    for (const PlayerMix& m : players)
        n += m.count;
    return n;
}

void check_options(const SoakOptions& o) {
    if (o.players == 0) throw std::invalid_argument("--players must be at least 1");
    if (o.match_players == 0 || o.match_players > kMaxSimulatedPlayers)
        throw std::invalid_argument("--match-players must be from 1 to " +
                                    std::to_string(kMaxSimulatedPlayers));
    if (!(o.max_player_seconds >= 1)) throw std::invalid_argument("max_player_seconds below 1");
    if (o.durations_s.empty()) throw std::invalid_argument("--durations-s needs a length");
    for (double d : o.durations_s)
        if (!(d > 0) || d > kMaxDurationS)
            throw std::invalid_argument("--durations-s: each must be above 0 and at most 86400");
    uint64_t weights = 0;
    for (const PlayerMix& m : o.mix) {
        const ProfileInfo* info = find_profile(m.profile);
        if (!info) throw std::invalid_argument("--mix: unknown profile '" + m.profile + "'");
        if (info->cheater)
            throw std::invalid_argument("--mix: '" + m.profile +
                                        "' is a cheating profile; the soak counts honest "
                                        "players' false positives (arbiter evaluate measures "
                                        "recall)");
        weights += m.count;
    }
    if (!o.mix.empty() && weights == 0)
        throw std::invalid_argument("--mix: every weight is 0");
    if (o.work_dir.empty()) throw std::invalid_argument("no work directory");
}

std::vector<SoakMatch> plan_soak(const SoakOptions& o) {
    check_options(o);
    const std::vector<PlayerMix> mix = o.mix.empty() ? default_mix() : o.mix;
    std::vector<SoakMatch> plan;
    uint32_t left = o.players;
    for (size_t i = 0; left > 0; ++i) {
        SoakMatch match;
        match.seed = o.seed + i;
        match.duration_s = o.durations_s[i % o.durations_s.size()];
        const auto fits = static_cast<uint32_t>(
            std::clamp(std::floor(o.max_player_seconds / match.duration_s), 1.0,
                       static_cast<double>(o.match_players)));
        const uint32_t players = std::min(left, fits);
        match.players = split(mix, players);
        plan.push_back(std::move(match));
        left -= players;
    }
    return plan;
}

EvaluationReport soak(const SoakOptions& o, const HumanRhythm& rhythm,
                      const std::function<std::unique_ptr<host::Host>()>& make_host,
                      const SoakListener& listener) {
    const std::vector<SoakMatch> plan = plan_soak(o);
    EvaluationReport total;
    for (size_t i = 0; i < plan.size(); ++i) {
        const SoakMatch& match = plan[i];
        SimulationOptions sim;
        sim.out = o.work_dir / ("soak-" + std::to_string(match.seed) + ".arbev");
        sim.truth = default_truth_path(sim.out);
        sim.seed = match.seed;
        sim.duration_s = match.duration_s;
        sim.tick_rate_hz = o.tick_rate_hz;
        sim.players = match.players;
        sim.match_id = match.seed;
        const RemovedAtExit match_file{sim.out}, truth_file{sim.truth};
        simulate(sim, rhythm);
        const Truth truth = read_truth(sim.truth);
        const std::unique_ptr<host::Host> host = make_host();
        const EvaluationReport report = evaluate(*host, {sim.out}, truth);
        merge(total, report);
        if (listener) listener(match, report, i + 1, plan.size());
    }
    return total;
}

}  // namespace arbiter::tools
