// Saving and restoring the analyzer's state for a hot reload: every player's allowance,
// the measurements in progress, what was reported and the engine's reports, so that a
// reload in the middle of a match changes nothing (and a player whose allowance was sent
// before the reload is still judged after it).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "extension_data.hpp"
#include "luanti_analyzer.hpp"

namespace arbiter::luanti {

namespace {

constexpr const char* kStateTag = "LUA1";
constexpr uint32_t kStateVersion = 1;

// Positions arrive as float32 (events.fbs): a restored one beyond that range is damage,
// and keeping coordinates within it keeps every distance and speed finite.
constexpr double kLargestCoordinate = 3.5e38;
constexpr double kLargestDistance = 1e300;

double get_coordinate(StateReader& in, const char* what) {
    const double value = in.get_finite(what);
    if (std::fabs(value) > kLargestCoordinate)
        throw StateError(std::string("state blob has a ") + what + " beyond any position");
    return value;
}

double get_distance(StateReader& in, const char* what) {
    const double value = in.get_finite(what);
    if (value < 0 || value > kLargestDistance)
        throw StateError(std::string("state blob has a ") + what + " out of range");
    return value;
}

bool get_flag(StateReader& in, const char* what) {
    const auto value = in.get<uint8_t>();
    if (value > 1) throw StateError(std::string("state blob has a bad ") + what + " flag");
    return value == 1;
}

void put_optional(StateWriter& out, const std::optional<double>& value) {
    out.put<uint8_t>(value ? 1 : 0);
    out.put<double>(value.value_or(0.0));
}

std::optional<double> get_optional_score(StateReader& in) {
    const bool present = get_flag(in, "reported");
    const double value = in.get_finite("reported score");
    if (value < 0 || value > 1) throw StateError("state blob has a reported score outside 0 to 1");
    return present ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

std::vector<uint8_t> LuantiAnalyzer::save_state() {
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        out.put<uint64_t>(match.players.size());
        // In id order, whatever the hash map's: the same state is the same bytes.
        for (const auto* entry : in_key_order(match.players)) {
            const auto& [id, p] = *entry;
            out.put<uint32_t>(id);
            out.put<uint8_t>(p.allowance ? 1 : 0);
            const Allowance a = p.allowance.value_or(Allowance{});
            out.put<double>(a.speed);
            out.put<double>(a.jump);
            out.put<double>(a.gravity);
            out.put<uint8_t>(a.fast);
            out.put<uint8_t>(a.fly);
            out.put<uint8_t>(a.noclip);
            out.put<uint8_t>(a.attached);

            out.put<int64_t>(static_cast<int64_t>(p.steps));
            out.put<uint8_t>(p.position ? 1 : 0);
            const Position at = p.position.value_or(Position{});
            out.put<double>(at.x);
            out.put<double>(at.y);
            out.put<double>(at.z);
            out.put<int64_t>(p.position_us);

            const SpeedTrack& s = p.speed;
            out.put<uint8_t>(s.started);
            out.put<int64_t>(s.window_start_us);
            out.put<double>(s.window_x);
            out.put<double>(s.window_y);
            out.put<int64_t>(s.run_windows);
            out.put<int64_t>(s.run_start_us);
            out.put<double>(s.run_distance_m);
            out.put<double>(s.run_fastest_mps);

            const FlyTrack& f = p.fly;
            out.put<uint64_t>(f.recent.size());
            for (const HeightSample& sample : f.recent) {
                out.put<int64_t>(sample.t_us);
                out.put<double>(sample.z);
            }
            out.put<uint8_t>(f.hovering);
            out.put<int64_t>(f.hover_start_us);
            out.put<double>(f.start_x);
            out.put<double>(f.start_y);
            out.put<double>(f.start_z);
            out.put<double>(f.top_z);

            const NoclipTrack& n = p.noclip;
            out.put<uint8_t>(n.active);
            out.put<int64_t>(static_cast<int64_t>(n.last_step));
            out.put<double>(n.x);
            out.put<double>(n.y);
            out.put<double>(n.distance_m);
            out.put<int64_t>(n.start_us);
            out.put<double>(n.start_x);
            out.put<double>(n.start_y);
            out.put<double>(n.start_z);
            out.put<int64_t>(n.steps);
            out.put_string(p.inside_node);

            put_optional(out, p.speed_reported);
            put_optional(out, p.fly_reported);
            put_optional(out, p.noclip_reported);
            out.put<uint64_t>(p.engine.counts().size());
            for (const auto& [type, count] : p.engine.counts()) {
                out.put_string(type);
                out.put<int64_t>(count);
            }
        }
    }
    return out.finish();
}

void LuantiAnalyzer::restore_state(std::span<const uint8_t> blob) {
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, MatchState> matches;
    const uint64_t match_count = in.get_count(8 + 8 + 8);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        if (matches.count(key)) throw StateError("state blob lists a match twice");
        MatchState& match = matches[key];
        const uint64_t player_count = in.get_count(4 + 1 + 24 + 4);
        for (uint64_t i = 0; i < player_count; ++i) {
            const uint32_t id = in.get<uint32_t>();
            if (match.players.count(id)) throw StateError("state blob lists a player twice");
            PlayerState& p = match.players[id];

            const bool has_allowance = get_flag(in, "allowance");
            Allowance a;
            for (double* factor : {&a.speed, &a.jump, &a.gravity}) {
                *factor = in.get_finite("allowance factor");
                if (*factor < 0 || *factor > kLargestFactor)
                    throw StateError("state blob has an allowance factor outside 0 to 1000");
            }
            a.fast = get_flag(in, "fast");
            a.fly = get_flag(in, "fly");
            a.noclip = get_flag(in, "noclip");
            a.attached = get_flag(in, "attached");
            if (has_allowance) p.allowance = a;

            p.steps = static_cast<uint64_t>(in.get_counter("step"));
            const bool has_position = get_flag(in, "position");
            Position at;
            at.x = get_coordinate(in, "position");
            at.y = get_coordinate(in, "position");
            at.z = get_coordinate(in, "position");
            if (has_position) p.position = at;
            p.position_us = in.get_relay_time("position time");

            SpeedTrack& s = p.speed;
            s.started = get_flag(in, "speed window");
            s.window_start_us = in.get_relay_time("speed window start");
            s.window_x = get_coordinate(in, "speed window position");
            s.window_y = get_coordinate(in, "speed window position");
            s.run_windows = in.get_counter("speed window");
            s.run_start_us = in.get_relay_time("speed run start");
            s.run_distance_m = get_distance(in, "speed run distance");
            s.run_fastest_mps = get_distance(in, "speed run fastest window");

            FlyTrack& f = p.fly;
            const uint64_t samples = in.get_count(16);
            f.recent.reserve(samples);
            for (uint64_t k = 0; k < samples; ++k) {
                HeightSample sample;
                sample.t_us = in.get_relay_time("height time");
                sample.z = get_coordinate(in, "height");
                if (!f.recent.empty() && sample.t_us < f.recent.back().t_us)
                    throw StateError("state blob has heights out of relay-time order");
                f.recent.push_back(sample);
            }
            f.hovering = get_flag(in, "hovering");
            f.hover_start_us = in.get_relay_time("hover start");
            f.start_x = get_coordinate(in, "hover start");
            f.start_y = get_coordinate(in, "hover start");
            f.start_z = get_coordinate(in, "hover start");
            f.top_z = get_coordinate(in, "hover top");

            NoclipTrack& n = p.noclip;
            n.active = get_flag(in, "noclip stretch");
            n.last_step = static_cast<uint64_t>(in.get_counter("noclip step"));
            n.x = get_coordinate(in, "noclip position");
            n.y = get_coordinate(in, "noclip position");
            n.distance_m = get_distance(in, "noclip distance");
            n.start_us = in.get_relay_time("noclip start");
            n.start_x = get_coordinate(in, "noclip start");
            n.start_y = get_coordinate(in, "noclip start");
            n.start_z = get_coordinate(in, "noclip start");
            n.steps = in.get_counter("noclip step");
            p.inside_node = in.get_string();
            if (p.inside_node.size() > kLongestName)
                throw StateError("state blob has a node name longer than any kept");

            p.speed_reported = get_optional_score(in);
            p.fly_reported = get_optional_score(in);
            p.noclip_reported = get_optional_score(in);
            const uint64_t types = in.get_count(8 + 8);
            std::vector<std::pair<std::string, int64_t>> counts;
            counts.reserve(types);
            for (uint64_t k = 0; k < types; ++k) {
                std::string type = in.get_string();
                const int64_t count = in.get_counter("engine report");
                if (metric_part(type) != type)
                    throw StateError("state blob has an engine report type no metric can name");
                counts.emplace_back(std::move(type), count);
            }
            if (!p.engine.restore(std::move(counts)))
                throw StateError("state blob has engine reports out of order or too many types");
        }
    }
    in.finish();
    matches_ = std::move(matches);  // only a blob read whole replaces the state
}

}  // namespace arbiter::luanti
