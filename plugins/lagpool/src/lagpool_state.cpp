// Saving and restoring the analyzer's state for a hot reload: every budget, the lag
// estimate and the overdraw windows, so that a reload in the middle of a match changes
// nothing.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "lagpool_analyzer.hpp"

namespace arbiter::lagpool {

namespace {
constexpr const char* kStateTag = "LGP1";
constexpr uint32_t kStateVersion = 1;
}  // namespace

std::vector<uint8_t> LagpoolAnalyzer::save_state() {
    // Maps keep their keys sorted, so the same state always makes the same blob.
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        out.put<double>(match.lag.value_s());
        out.put<int64_t>(match.lag.at_us());
        out.put<uint64_t>(match.players.size());
        // In id order, whatever the hash map's: the same state is the same bytes.
        for (const auto* entry : in_key_order(match.players)) {
            const auto& [id, player] = *entry;
            out.put<uint32_t>(id);
            out.put<uint8_t>(player.position ? 1 : 0);
            const Vec3 position = player.position.value_or(Vec3{});
            out.put<double>(position.x);
            out.put<double>(position.y);
            out.put<double>(position.z);
            out.put<uint64_t>(player.kinds.size());
            for (const auto& [name, kind] : player.kinds) {
                out.put_string(name);
                out.put<double>(kind.budget.capacity());
                out.put<double>(kind.budget.spent());
                out.put<int64_t>(kind.updated_us);
                out.put<int64_t>(kind.reset_us);
                out.put<uint8_t>(kind.reported ? 1 : 0);
                out.put<double>(kind.reported.value_or(0.0));
                out.put<uint64_t>(kind.overdraws.items().size());
                for (const Overdraw& o : kind.overdraws.items()) {
                    out.put<int64_t>(o.t_us);
                    out.put<double>(o.cost_s);
                    out.put<double>(o.available_s);
                    out.put<double>(o.capacity_s);
                }
            }
        }
    }
    return out.finish();
}

void LagpoolAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, MatchState> matches;
    const uint64_t match_count = in.get_count(8 + 8 + 8 + 8 + 8);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        MatchState& match = matches[key];
        const double lag_s = in.get_finite("lag estimate");
        const int64_t lag_at_us = in.get_relay_time("lag estimate time");
        if (lag_s < 0) throw StateError("state blob has a negative lag estimate");
        match.lag = ServerLag(lag_s, lag_at_us);
        const uint64_t player_count = in.get_count(4 + 1 + 24 + 8);
        for (uint64_t p = 0; p < player_count; ++p) {
            const uint32_t player_id = in.get<uint32_t>();
            PlayerState& player = match.players[player_id];
            const bool has_position = in.get<uint8_t>() != 0;
            Vec3 position;
            position.x = in.get_finite("position");
            position.y = in.get_finite("position");
            position.z = in.get_finite("position");
            if (has_position) player.position = position;
            const uint64_t kind_count = in.get_count(8 + 8 + 8 + 8 + 8 + 1 + 8 + 8);
            std::string previous;
            for (uint64_t k = 0; k < kind_count; ++k) {
                std::string name = in.get_string();
                // Written in name order, each once: anything else is no state of ours (and
                // kept out, it could make each insert a shift of every entry).
                if (k > 0 && name <= previous)
                    throw StateError("state blob lists the budget kinds of player " +
                                     std::to_string(player_id) + " out of order (kind " +
                                     std::to_string(k) + " of " + std::to_string(kind_count) + ")");
                KindState& kind = player.kinds[name];
                previous = std::move(name);
                const double capacity = in.get_finite("budget capacity");
                const double spent = in.get_finite("budget spent");
                try {
                    kind.budget = Budget::restored(capacity, spent);
                } catch (const std::invalid_argument& error) {
                    throw StateError(std::string("state blob has a bad budget: ") + error.what());
                }
                kind.updated_us = in.get_relay_time("budget time");
                kind.reset_us = in.get_relay_time("grace start");
                const bool reported = in.get<uint8_t>() != 0;
                const double reported_score = in.get_finite("reported score");
                if (reported) kind.reported = reported_score;
                const uint64_t overdraw_count = in.get_count(8 + 24);
                Ring<Overdraw> items;
                items.reserve(overdraw_count);
                for (uint64_t i = 0; i < overdraw_count; ++i) {
                    Overdraw o;
                    o.t_us = in.get_relay_time("overdraw time");
                    o.cost_s = in.get_finite("overdraw cost");
                    o.available_s = in.get_finite("overdraw budget");
                    o.capacity_s = in.get_finite("overdraw capacity");
                    if (!items.empty() && o.t_us < items.back().t_us)
                        throw StateError("state blob has overdraws out of relay-time order");
                    items.push_back(o);
                }
                kind.overdraws.restore(std::move(items));
            }
        }
    }
    in.finish();
    matches_ = std::move(matches);  // only a blob read whole replaces the state
}

}  // namespace arbiter::lagpool
