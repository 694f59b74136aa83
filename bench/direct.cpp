#include "direct.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "lagpool/src/budget.hpp"
#include "lagpool/src/cost.hpp"
#include "lagpool/src/server_lag.hpp"
#include "reference/src/movement.hpp"

namespace arbiter::bench {

// --- reference: ReferenceAnalyzer::on_position and forget_old, less the signals ---------

struct DirectPlayer {
    reference::Track track;
    reference::SpacingMedian spacing;  // as the plugin keeps it
};

struct DirectReference::State {
    reference::MovementLimits limits;
    std::unordered_map<uint32_t, DirectPlayer> players;
    uint64_t findings = 0;
};

DirectReference::DirectReference() : state_(std::make_unique<State>()) {}
DirectReference::~DirectReference() = default;
uint64_t DirectReference::findings() const {
    return state_->findings;
}

void DirectReference::on_position(const DirectUpdate& update) {
    using namespace reference;
    const MovementLimits& limits = state_->limits;
    DirectPlayer& player = state_->players[update.player];
    Track& track = player.track;
    const Sample sample{update.t_us, Vec3{update.x, update.y, update.z}};
    if (!track.samples.empty()) {
        const double jump = distance(track.samples.back().position, sample.position);
        if (jump > limits.teleport_distance && jump > single_update_reach_m(track, sample, limits))
            ++state_->findings;
    }
    track.samples.push_back(sample);
    player.spacing.pushed(track);
    // The plugin's horizons: the spacing is measured over a window, the longest lag
    // allowance and the second its look-back adds, and a second of slack; the track keeps a
    // window more.
    const int64_t horizon_us =
        static_cast<int64_t>((limits.window_s + limits.max_lag_allowance_s + 1.0) * 1e6) +
        1'000'000;
    const int64_t keep_us = static_cast<int64_t>(limits.window_s * 1e6) + horizon_us;
    while (track.samples.size() > 2 && track.samples[1].t_us < update.t_us - keep_us) {
        player.spacing.popping_front(track);
        track.samples.pop_front();
    }
    if (auto* rtts = track.rtts.find())
        while (!rtts->empty() && rtts->front().t_us < update.t_us - keep_us) rtts->pop_front();
    const int64_t typical_us = player.spacing.value(track, update.t_us - horizon_us);
    track.in_order = player.spacing.in_order();
    auto window = measure_window(track, track.samples.size() - 1, limits, typical_us);
    if (!window) return;
    if (excess_score(window->speed, limits.max_speed * limits.tolerance) > 0) ++state_->findings;
    if (window->distance_m > limits.max_speed * 2.0 * (window->elapsed_s + window->allowance_s))
        ++state_->findings;
}

// --- lagpool: LagpoolAnalyzer::on_position and charge, less the signals -----------------

namespace {
struct Kind {
    lagpool::Budget budget{0.0};
    int64_t updated_us = 0;
    int64_t reset_us = 0;
};
struct LagpoolPlayer {
    std::map<std::string, Kind> kinds;
    std::optional<lagpool::Vec3> position;
};
double seconds_between(int64_t from_us, int64_t to_us) {
    return to_us > from_us ? static_cast<double>(to_us - from_us) / 1e6 : 0.0;
}
}  // namespace

struct DirectLagpool::State {
    lagpool::MovementLimits limits;
    lagpool::ServerLag lag;
    double min_capacity_s = 5.0, lag_factor = 2.0, lag_halving_s = 60.0, grace_s = 5.0;
    std::map<uint32_t, LagpoolPlayer> players;
    uint64_t findings = 0;

    double capacity_at(int64_t t_us) const {
        return lagpool::budget_capacity(lag.estimate_s(t_us, lag_halving_s), min_capacity_s,
                                        lag_factor);
    }
};

DirectLagpool::DirectLagpool() : state_(std::make_unique<State>()) {}
DirectLagpool::~DirectLagpool() = default;
uint64_t DirectLagpool::findings() const {
    return state_->findings;
}

void DirectLagpool::on_position(const DirectUpdate& update) {
    State& s = *state_;
    auto it = s.players.find(update.player);
    if (it == s.players.end()) {
        LagpoolPlayer fresh;
        // The plugin's default kinds, each an empty budget.
        for (const char* name : {"dig", "movement"}) {
            Kind kind;
            kind.budget = lagpool::Budget(s.capacity_at(update.t_us));
            kind.updated_us = kind.reset_us = update.t_us;
            fresh.kinds.emplace(name, kind);
        }
        it = s.players.emplace(update.player, std::move(fresh)).first;
    }
    LagpoolPlayer& player = it->second;
    const lagpool::Vec3 to{update.x, update.y, update.z};
    if (!player.position) {
        player.position = to;
        return;
    }
    Kind& moves = player.kinds.at("movement");
    const double cost = lagpool::movement_cost(*player.position, to, s.limits).seconds;
    player.position = to;
    const double capacity = s.capacity_at(update.t_us);
    moves.budget.advance(capacity, seconds_between(moves.updated_us, update.t_us));
    moves.updated_us = std::max(moves.updated_us, update.t_us);
    if (moves.budget.grab(cost)) return;
    if (seconds_between(moves.reset_us, update.t_us) > std::max(s.grace_s, capacity)) ++s.findings;
}

}  // namespace arbiter::bench
