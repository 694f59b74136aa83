// Saving and restoring the analyzer's state for a hot reload: every player's recent
// inputs, window counters, reaction pairs, positions and aim blocks, and what was
// reported, so that a reload in the middle of a window (or of a multi-hour precision
// session) changes nothing.
//
// Version 2 added the precision check (its positions, round trip, blocks and report);
// a version 1 blob still restores, its players starting their precision afresh. Version 3
// added the quantised-view check (the last yaw, the yaw changes kept, its report); older
// blobs restore with none seen.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kaladin_analyzer.hpp"

namespace arbiter::kaladin {

namespace {
constexpr const char* kStateTag = "KLD1";
constexpr uint32_t kStateVersion = 3;
// The checks a version 1 blob reports on (precision came with version 2), and those of a
// version 2 blob (the quantised view came with version 3).
constexpr size_t kVersion1Checks = 4;
constexpr size_t kVersion2Checks = 5;

// A position is saved as a double, but every one kept arrived as a float (the schema's
// Vec3): a value no float holds was not written by kaladin. (The range is checked first:
// converting a double beyond float's range is undefined.)
float get_float_coordinate(StateReader& in) {
    const double value = in.get_finite("position");
    if (!(std::fabs(value) <= std::numeric_limits<float>::max()) ||
        static_cast<double>(static_cast<float>(value)) != value)
        throw StateError("state blob has a position no event could carry (not a float)");
    return static_cast<float>(value);
}
}  // namespace

void KaladinAnalyzer::restore_precision(StateReader& in, PlayerState& p) {
    Ring<TrackPoint> points;
    const uint64_t point_count = in.get_count(8 + 3 * 8);
    points.reserve(point_count);
    for (uint64_t k = 0; k < point_count; ++k) {
        TrackPoint point;
        point.t_us = in.get_relay_time("position time");
        point.x = get_float_coordinate(in);
        point.y = get_float_coordinate(in);
        point.z = get_float_coordinate(in);
        if (!points.empty() && point.t_us < points.back().t_us)
            throw StateError("state blob has positions out of relay-time order");
        points.push_back(point);
    }
    p.positions.restore(std::move(points));
    std::vector<uint32_t> rtts;
    const uint64_t rtt_count = in.get_count(4);
    if (rtt_count > RoundTrip::kKeep) throw StateError("state blob keeps too many round trips");
    for (uint64_t k = 0; k < rtt_count; ++k)
        rtts.push_back(in.get<uint32_t>());
    p.rtt.restore(rtts);
    const bool has_first = in.get<uint8_t>() != 0;
    const int64_t first = in.get_relay_time("first aim");
    const int64_t last = in.get_relay_time("last aim");
    // The open block's index counts blocks from the first aim. 10^8 blocks of the shortest
    // allowed length (10 s) are 31 years of one session, and 10^8 of the longest (a day)
    // still keep first + index x block length within an int64.
    constexpr int64_t kMaxPrecisionBlocks = 100'000'000;
    const int64_t open_index = in.get_counter("precision block");
    if (open_index > kMaxPrecisionBlocks)
        throw StateError("state blob has precision block " + std::to_string(open_index) +
                         ", more blocks than any session holds");
    std::vector<double> open;
    const uint64_t open_count = in.get_count(8);
    for (uint64_t k = 0; k < open_count; ++k) {
        open.push_back(in.get_finite("aim error"));
        if (open.back() < 0) throw StateError("state blob has a negative aim error");
    }
    std::vector<PrecisionBlock> blocks;
    const uint64_t block_count = in.get_count(8 + 4 + 8);
    for (uint64_t k = 0; k < block_count; ++k) {
        PrecisionBlock b;
        b.from_us = in.get_relay_time("precision block start");
        b.aims = in.get<uint32_t>();
        b.spread_mrad = in.get_finite("block spread");
        blocks.push_back(b);
    }
    const uint64_t thin = in.get<uint64_t>();
    const uint64_t aims = in.get<uint64_t>();
    if (!has_first && (!open.empty() || !blocks.empty()))
        throw StateError("state blob has precision blocks without a first aim");
    p.precision.restore(has_first ? std::optional<int64_t>(first) : std::nullopt, last, open_index,
                        std::move(open), std::move(blocks), thin, aims);
    for (size_t c = kVersion1Checks; c < kVersion2Checks; ++c) {
        p.reported[c] = in.get_finite("reported score");
        p.tripped[c] = in.get<uint8_t>() != 0;
    }
}

void KaladinAnalyzer::restore_quantum(StateReader& in, PlayerState& p) const {
    if (in.get<uint8_t>() != 0) p.quantum.last_yaw = in.get_finite("yaw");
    const uint64_t count = in.get_count(8);
    if (count > settings_.quantum_window_changes + uint64_t{100000})
        throw StateError("state blob keeps too many yaw changes");
    for (uint64_t k = 0; k < count; ++k)
        p.quantum.changes.push_back(in.get_finite("yaw change"));
    for (size_t c = kVersion2Checks; c < kCheckCount; ++c) {
        p.reported[c] = in.get_finite("reported score");
        p.tripped[c] = in.get<uint8_t>() != 0;
    }
}

std::vector<uint8_t> KaladinAnalyzer::save_state() {
    // A baseline run is a batch job over a corpus, not a live service: it is not reloaded.
    if (collecting_) throw std::logic_error("kaladin saves no state while computing a baseline");
    StateWriter out(kStateTag, kStateVersion);
    out.put<uint64_t>(matches_.size());
    for (const auto& [key, match] : matches_) {
        out.put_string(key.relay_id);
        out.put<uint64_t>(key.match_id);
        out.put<double>(match.tick_rate_hz);
        out.put<int64_t>(match.started_unix_us);
        out.put<uint64_t>(match.players.size());
        for (const auto* entry : in_key_order(match.players)) {
            const auto& [id, p] = *entry;
            out.put<uint32_t>(id);
            out.put_string(p.tier);
            out.put<uint64_t>(p.inputs.recent().size());
            for (const Input& input : p.inputs.recent()) {
                out.put<int64_t>(input.t_us);
                out.put<uint64_t>(input.tick);
            }
            out.put<uint64_t>(p.inputs.distinct());
            out.put<uint64_t>(p.inputs.merged());
            out.put<uint8_t>(p.inputs.last_tick() ? 1 : 0);
            out.put<uint64_t>(p.inputs.last_tick().value_or(0));
            out.put<uint8_t>(p.first_input_us ? 1 : 0);
            out.put<int64_t>(p.first_input_us.value_or(0));
            out.put<uint32_t>(p.since_window);
            out.put<uint64_t>(p.reactions.pending().size());
            for (const auto& [stimulus, t_us] : p.reactions.pending()) {
                out.put<uint64_t>(stimulus);
                out.put<int64_t>(t_us);
            }
            out.put<uint64_t>(p.reactions.delays_us().size());
            for (int64_t d : p.reactions.delays_us())
                out.put<int64_t>(d);
            out.put<uint8_t>(p.reactions.lowest_rtt_us() ? 1 : 0);
            out.put<uint32_t>(p.reactions.lowest_rtt_us().value_or(0));
            out.put<double>(p.peak_rate);
            out.put<double>(p.min_cv);
            out.put<double>(p.min_entropy);
            for (size_t c = 0; c < kVersion1Checks; ++c) {
                out.put<double>(p.reported[c]);
                out.put<uint8_t>(p.tripped[c] ? 1 : 0);
            }
            // ---- version 2 ----
            out.put<uint64_t>(p.positions.points().size());
            for (const TrackPoint& point : p.positions.points()) {
                out.put<int64_t>(point.t_us);
                out.put<double>(point.x);
                out.put<double>(point.y);
                out.put<double>(point.z);
            }
            const std::vector<uint32_t> rtts = p.rtt.samples();
            out.put<uint64_t>(rtts.size());
            for (uint32_t rtt : rtts)
                out.put<uint32_t>(rtt);
            const PrecisionTracker& precision = p.precision;
            out.put<uint8_t>(precision.first_us() ? 1 : 0);
            out.put<int64_t>(precision.first_us().value_or(0));
            out.put<int64_t>(precision.last_us());
            out.put<int64_t>(precision.open_index());
            out.put<uint64_t>(precision.open_errors().size());
            for (double error : precision.open_errors())
                out.put<double>(error);
            out.put<uint64_t>(precision.blocks().size());
            for (const PrecisionBlock& b : precision.blocks()) {
                out.put<int64_t>(b.from_us);
                out.put<uint32_t>(b.aims);
                out.put<double>(b.spread_mrad);
            }
            out.put<uint64_t>(precision.thin_blocks());
            out.put<uint64_t>(precision.aims());
            for (size_t c = kVersion1Checks; c < kVersion2Checks; ++c) {
                out.put<double>(p.reported[c]);
                out.put<uint8_t>(p.tripped[c] ? 1 : 0);
            }
            // ---- version 3 ----
            out.put<uint8_t>(p.quantum.last_yaw ? 1 : 0);
            if (p.quantum.last_yaw) out.put<double>(*p.quantum.last_yaw);
            out.put<uint64_t>(p.quantum.changes.size());
            for (double change : p.quantum.changes)
                out.put<double>(change);
            for (size_t c = kVersion2Checks; c < kCheckCount; ++c) {
                out.put<double>(p.reported[c]);
                out.put<uint8_t>(p.tripped[c] ? 1 : 0);
            }
        }
    }
    return out.finish();
}

void KaladinAnalyzer::restore_state(std::span<const uint8_t> blob) {
    // Everything is read into a new map first: a blob refused half-way changes nothing.
    StateReader in(blob, kStateTag, kStateVersion);
    std::map<MatchKey, MatchState> matches;
    const uint64_t match_count = in.get_count(8 + 8 + 8 + 8 + 8);
    for (uint64_t m = 0; m < match_count; ++m) {
        MatchKey key;
        key.relay_id = in.get_string();
        key.match_id = in.get<uint64_t>();
        MatchState match;
        match.tick_rate_hz = in.get_finite("tick rate");
        match.started_unix_us = in.get_relay_time("match start");
        const uint64_t player_count = in.get_count(4 + 8);
        for (uint64_t i = 0; i < player_count; ++i) {
            const uint32_t id = in.get<uint32_t>();
            PlayerState p;
            p.tier = in.get_string();
            Ring<Input> recent;
            const uint64_t input_count = in.get_count(16);
            recent.reserve(input_count);
            for (uint64_t k = 0; k < input_count; ++k) {
                Input input;
                input.t_us = in.get_relay_time("input time");
                input.tick = in.get<uint64_t>();
                if (!recent.empty() && input.t_us < recent.back().t_us)
                    throw StateError("state blob has inputs out of relay-time order");
                recent.push_back(input);
            }
            const uint64_t distinct = in.get<uint64_t>();
            const uint64_t merged = in.get<uint64_t>();
            const bool has_tick = in.get<uint8_t>() != 0;
            const uint64_t tick = in.get<uint64_t>();
            p.inputs.restore(std::move(recent), distinct, merged,
                             has_tick ? std::optional<uint64_t>(tick) : std::nullopt);
            const bool has_first = in.get<uint8_t>() != 0;
            const int64_t first = in.get_relay_time("first input");
            if (has_first) p.first_input_us = first;
            p.since_window = in.get<uint32_t>();
            std::map<uint64_t, int64_t> pending;
            const uint64_t pending_count = in.get_count(16);
            for (uint64_t k = 0; k < pending_count; ++k) {
                const uint64_t stimulus = in.get<uint64_t>();
                pending[stimulus] = in.get_relay_time("stimulus time");
            }
            Ring<int64_t> delays;
            const uint64_t delay_count = in.get_count(8);
            delays.reserve(delay_count);
            for (uint64_t k = 0; k < delay_count; ++k)
                delays.push_back(in.get_relay_time("reaction delay"));
            const bool has_rtt = in.get<uint8_t>() != 0;
            const uint32_t rtt = in.get<uint32_t>();
            p.reactions.restore(std::move(pending), std::move(delays),
                                has_rtt ? std::optional<uint32_t>(rtt) : std::nullopt);
            p.peak_rate = in.get_finite("peak rate");
            p.min_cv = in.get_finite("CV");
            p.min_entropy = in.get_finite("entropy");
            for (size_t c = 0; c < kVersion1Checks; ++c) {
                p.reported[c] = in.get_finite("reported score");
                p.tripped[c] = in.get<uint8_t>() != 0;
            }
            if (in.version() >= 2) restore_precision(in, p);
            if (in.version() >= 3) restore_quantum(in, p);
            if (p.inputs.recent().empty() && p.first_input_us)
                throw StateError("state blob has a player with a first input but none kept");
            match.players.emplace(id, std::move(p));
        }
        matches.emplace(std::move(key), std::move(match));
    }
    in.finish();
    matches_ = std::move(matches);
}

}  // namespace arbiter::kaladin
