#include "kaladin_analyzer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cv.hpp"
#include "entropy.hpp"
#include "rate.hpp"

namespace arbiter::kaladin {

namespace {
// A check reports again only when its score rises by at least this much.
constexpr double kReportStep = 0.05;
// The far tails a baseline's signals begin at (docs/detection.md, "Population baselines":
// the 99th percentile marks one honest player in a hundred by construction).
constexpr double kHighTail = 99.9;
constexpr double kLowTail = 0.1;
// Intervals a timing signal's evidence lists (about 8 KB of its 64 KiB); `intervals` gives
// how many the window had.
constexpr size_t kMaxIntervalsInEvidence = 1000;

int64_t to_us(double seconds) {
    return static_cast<int64_t>(std::llround(seconds * 1e6));
}

BaselineFile load_baseline(std::span<const uint8_t> bytes) {
    try {
        return BaselineFile::read(bytes);
    } catch (const StateError& error) {
        throw StateError(std::string("kaladin refuses its baseline file: ") + error.what());
    }
}
}  // namespace

const char* check_code(Check check) {
    switch (check) {
        case Check::rate:
            return "timing.rate";
        case Check::cv:
            return "timing.cv";
        case Check::entropy:
            return "timing.entropy";
        case Check::reaction:
            return "timing.reaction";
        case Check::precision:
            return "aim.precision";
        case Check::quantum:
            return "aim.quantised";
    }
    return "timing";
}

KaladinAnalyzer::KaladinAnalyzer(const Context& context)
    : Analyzer(context), settings_(Settings::parse(context.config)) {
    if (!context.baseline.empty()) baseline_ = load_baseline(context.baseline);
}

void KaladinAnalyzer::configure(const Context& context) {
    // Both parsed before either is kept: all or nothing.
    Settings settings = Settings::parse(context.config);
    std::optional<BaselineFile> baseline;
    if (!context.baseline.empty()) baseline = load_baseline(context.baseline);
    settings_ = settings;
    baseline_ = std::move(baseline);
}

Limit KaladinAnalyzer::limit(Check check, const std::string& tier, double tick_rate_hz) const {
    Limit out;
    Metric metric = Metric::peak_rate;
    double tail = kHighTail;
    switch (check) {
        case Check::rate:
            out.value = settings_.rate_limit_per_min;
            break;
        case Check::cv:
            out.value = settings_.cv_limit;
            metric = Metric::min_cv;
            tail = kLowTail;
            break;
        case Check::entropy:
            out.value = settings_.entropy_limit_bits;
            metric = Metric::min_entropy;
            tail = kLowTail;
            break;
        case Check::reaction:
            out.value = settings_.reaction_limit_ms;
            metric = Metric::median_reaction;
            tail = kLowTail;
            break;
        case Check::precision:
            // No baseline metric yet (the baseline file holds none): the fixed default.
            out.value = settings_.precision_spread_limit_mrad;
            return out;
        case Check::quantum:
            out.value = settings_.quantum_max_step_rad;
            return out;
    }
    if (!baseline_) return out;
    // The player's own tier when it has enough samples, else every tier pooled, else the
    // fixed default.
    const TierBaseline* chosen = nullptr;
    // A player without a tier was collected as "unrated" (fold_into_baseline).
    const std::string own = tier.empty() ? "unrated" : tier;
    for (const std::string& name : {own, std::string(BaselineFile::kPooledTier)}) {
        auto it = baseline_->tiers.find(name);
        if (it != baseline_->tiers.end() &&
            it->second[metric].samples >= settings_.baseline_min_samples) {
            chosen = &it->second;
            out.tier = name;
            break;
        }
    }
    if (!chosen) return out;
    double value = (*chosen)[metric].at(tail);
    // The trip-wires stay fixed (hard floors): a baseline never moves a signal's limit
    // past its trip-wire, so a signal always comes before a trip-wire.
    if (check == Check::rate)
        value = std::min(value, rate_tripwire(settings_.rate_tripwire_per_min,
                                              settings_.rate_tripwire_tick_share, tick_rate_hz));
    if (check == Check::reaction) value = std::max(value, settings_.reaction_tripwire_ms);
    if (check == Check::cv) value *= settings_.cv_baseline_margin;
    out.value = value;
    out.from_baseline = true;
    out.percentile = tail;
    out.samples = (*chosen)[metric].samples;
    return out;
}

Evidence KaladinAnalyzer::limit_evidence(const Limit& limit) const {
    Evidence e;
    e.add("value", limit.value);
    if (limit.from_baseline) {
        e.add("source", "baseline")
            .add("tier", limit.tier)
            .add("percentile", limit.percentile)
            .add("samples", limit.samples)
            .add("corpus_matches", baseline_->matches)
            .add("corpus_from_unix_us", baseline_->corpus_from_unix_us)
            .add("corpus_to_unix_us", baseline_->corpus_to_unix_us);
    } else if (baseline_) {
        e.add("source", "fixed default: the baseline has too few samples for this tier")
            .add("min_samples", settings_.baseline_min_samples);
    } else {
        e.add("source", "fixed default: no baseline file configured");
    }
    return e;
}

KaladinAnalyzer::PlayerState& KaladinAnalyzer::player(MatchState& match, uint32_t id) {
    return match.players[id];
}

void KaladinAnalyzer::on_batch(const Batch& batch, Signals& signals) {
    MatchState& match = matches_[batch.match()];
    // Past a few thousand players their tracks are out of the caches: each group of events
    // asks for its players' positions before the first of them is handled.
    for_each_event_looking_ahead(
        batch.events(), match.players, [](const PlayerState& p) { p.positions.prefetch(); },
        [&](const fb::Event& event) { on_event(match, event, signals); });
    host().gauge("tracked_matches", static_cast<double>(matches_.size()));
}

void KaladinAnalyzer::on_event(MatchState& match, const fb::Event& event, Signals& signals) {
    const uint32_t id = event.player();
    const int64_t t_us = event.relay_time_us();
    switch (event.body_type()) {
        case fb::EventBody::MatchStart: {
            const auto* start = event.body_as_MatchStart();
            if (start->tick_rate_hz() > 0) match.tick_rate_hz = start->tick_rate_hz();
            match.started_unix_us = start->started_unix_us();
            break;
        }
        case fb::EventBody::PlayerJoin:
            if (id != 0)
                player(match, id).tier =
                    std::string(str(event.body_as_PlayerJoin()->rating_tier()));
            break;
        case fb::EventBody::LatencySample:
            if (id != 0) {
                PlayerState& p = player(match, id);
                const uint32_t rtt = event.body_as_LatencySample()->rtt_us();
                p.reactions.rtt(rtt);
                p.rtt.add(rtt);
            }
            break;
        case fb::EventBody::PositionUpdate:
            if (id != 0) {
                const fb::Vec3* at = event.body_as_PositionUpdate()->position();
                PlayerState& p = player(match, id);
                if (at) p.positions.add(t_us, at->x(), at->y(), at->z());
                if (const auto* look = event.body_as_PositionUpdate()->look())
                    on_look(id, p, *look, signals);
            }
            break;
        case fb::EventBody::HitClaim:
            if (id != 0)
                if (const auto* look = event.body_as_HitClaim()->look())
                    on_look(id, player(match, id), *look, signals);
            break;
        case fb::EventBody::Stimulus:
            // A stimulus to one player; one to the whole match (player 0) carries no
            // round trip of a single player and is not timed.
            if (id != 0)
                player(match, id).reactions.stimulus(event.body_as_Stimulus()->stimulus_id(), t_us);
            break;
        case fb::EventBody::Order: {
            if (id == 0) break;
            const auto* order = event.body_as_Order();
            PlayerState& p = player(match, id);
            if (order->look()) on_look(id, p, *order->look(), signals);
            if (order->response_to() != 0 &&
                p.reactions.response(order->response_to(), t_us, settings_.reaction_keep_pairs))
                check_reactions(id, p, signals);
            if (order->has_target() && order->target() && order->target_player() != 0 &&
                order->target_player() != id)
                on_aim(match, id, p, *order, t_us, signals);
            if (p.inputs.add(t_us, event.tick(), order->repeat())) {
                if (!p.first_input_us) p.first_input_us = t_us;
                on_input(match, id, p, signals);
            }
            break;
        }
        case fb::EventBody::InputLost:
            on_input_lost(match);
            break;
        default:
            break;
    }
}

void KaladinAnalyzer::on_input_lost(MatchState& match) {
    for (auto& [id, p] : match.players) {
        // The inputs in the lost batches are unknown, so an interval from the last input
        // before the gap to the first after it is no interval: the windows (and the rate
        // window's start) begin again after it. Positions are not interpolated across it.
        // Reaction pairs stay, and so do pending stimuli: the relay timed both ends of a
        // pair, so a stimulus before the gap answered after it is still a true delay.
        p.inputs.restart();
        p.first_input_us.reset();
        p.since_window = 0;
        p.positions.clear();
        p.quantum.last_yaw.reset();  // no change spans the gap; those seen stay
    }
    host().count("input_lost");
}

void KaladinAnalyzer::on_input(MatchState& match, uint32_t id, PlayerState& p, Signals& signals) {
    const double hz = match.tick_rate_hz > 0 ? match.tick_rate_hz : settings_.tick_rate_hz;
    const int64_t now = p.inputs.recent().back().t_us;
    const int64_t rate_window_us = to_us(settings_.rate_window_s);
    const int64_t span_us = to_us(settings_.window_s);
    p.inputs.prune(now, std::max(rate_window_us, span_us), settings_.window_intervals + 1);

    // Sustained rate, on every input.
    const RateMeasure rate = measure_rate(p.inputs.recent(), rate_window_us, *p.first_input_us);
    if (rate.full) p.peak_rate = std::max(p.peak_rate, rate.per_min);
    const double tripwire =
        rate_tripwire(settings_.rate_tripwire_per_min, settings_.rate_tripwire_tick_share, hz);
    const Limit rate_limit = limit(Check::rate, p.tier, hz);
    if (!collecting_ && rate.per_min > rate_limit.value) {
        const bool tripped = rate.per_min > tripwire;
        Evidence e;
        e.add("inputs_per_min", rate.per_min)
            .add("limit", limit_evidence(rate_limit))
            .add("tripwire_per_min", tripwire)
            .add("tick_rate_hz", hz)
            .add("window_s", settings_.rate_window_s)
            .add("window_from_us", rate.from_us)
            .add("window_to_us", rate.to_us)
            .add("inputs", rate.inputs)
            .add("orders_merged_so_far", p.inputs.merged())
            .add("counting", "distinct relay ticks; held-key repeats merged");
        report(id, p, Check::rate,
               tripped ? 1.0 : rate_score(rate.per_min, rate_limit.value, tripwire), tripped,
               rate_limit, std::move(e), signals);
    }

    // CV and entropy, every window_step inputs, on long windows (docs/detection.md, "Checks").
    if (++p.since_window < settings_.window_step) return;
    auto window = newest_window(p.inputs.recent(), settings_.window_intervals, span_us);
    if (!window) return;
    p.since_window = 0;
    const double tick_us = 1e6 / hz;
    const auto cv = trimmed_cv(window->intervals_us);
    const EntropyMeasure entropy = binned_entropy(window->intervals_us, tick_us);
    if (cv) p.min_cv = p.min_cv < 0 ? *cv : std::min(p.min_cv, *cv);
    p.min_entropy = p.min_entropy < 0 ? entropy.bits : std::min(p.min_entropy, entropy.bits);
    if (collecting_) return;
    auto window_evidence = [&](Evidence e) {
        // The intervals themselves, so that a reviewer sees their spread (the review page
        // draws them as a histogram), not only the figure computed from them.
        // The newest kMaxIntervalsInEvidence of them, so that a long window (the settings
        // allow 100,000 intervals) still fits the host's 64 KiB of evidence.
        std::vector<double> intervals_ms;
        const size_t n = window->intervals_us.size();
        const size_t from = n > kMaxIntervalsInEvidence ? n - kMaxIntervalsInEvidence : 0;
        intervals_ms.reserve(n - from);
        for (size_t i = from; i < n; ++i)
            intervals_ms.push_back(static_cast<double>(window->intervals_us[i]) / 1e3);
        return e.add("window_s", static_cast<double>(window->to_us - window->from_us) / 1e6)
            .add("window_from_us", window->from_us)
            .add("window_to_us", window->to_us)
            .add("intervals", window->intervals_us.size())
            .add("inputs", window->intervals_us.size() + 1)
            .add("intervals_ms", std::span<const double>(intervals_ms));
    };
    const Limit cv_limit = limit(Check::cv, p.tier, hz);
    if (cv && *cv < cv_limit.value) {
        Evidence e;
        e.add("cv", *cv)
            .add("limit", limit_evidence(cv_limit))
            .add("trimmed", "the single shortest and longest interval left out");
        if (cv_limit.from_baseline) e.add("baseline_margin", settings_.cv_baseline_margin);
        report(id, p, Check::cv, cv_score(*cv, cv_limit.value, settings_.cv_score_at_limit),
               false, cv_limit,
               window_evidence(std::move(e)), signals);
    }
    const Limit entropy_limit = limit(Check::entropy, p.tier, hz);
    if (entropy.bits < entropy_limit.value) {
        Evidence e;
        e.add("entropy_bits", entropy.bits)
            .add("limit", limit_evidence(entropy_limit))
            .add("bins_used", entropy.bins)
            .add("bin_ms", tick_us / 1e3);
        report(id, p, Check::entropy, entropy_score(entropy.bits, entropy_limit.value), false,
               entropy_limit, window_evidence(std::move(e)), signals);
    }
}

void KaladinAnalyzer::check_reactions(uint32_t id, PlayerState& p, Signals& signals) {
    if (collecting_ || p.reactions.pairs() < settings_.reaction_min_pairs) return;
    const std::vector<double> times = p.reactions.corrected_ms();
    const double med = median(times);
    const Limit l = limit(Check::reaction, p.tier, 0.0);
    if (med >= l.value) return;
    const bool tripped = med < settings_.reaction_tripwire_ms;
    const auto under =
        std::count_if(times.begin(), times.end(), [&](double t) { return t < l.value; });
    Evidence e;
    e.add("median_ms", med)
        .add("limit", limit_evidence(l))
        .add("tripwire_ms", settings_.reaction_tripwire_ms)
        .add("pairs", times.size())
        .add("pairs_under_limit", static_cast<uint64_t>(under))
        .add("fastest_ms", *std::min_element(times.begin(), times.end()))
        .add("lowest_rtt_ms", p.reactions.lowest_rtt_us()
                                  ? static_cast<double>(*p.reactions.lowest_rtt_us()) / 1e3
                                  : 0.0)
        .add("window", "the last " + std::to_string(settings_.reaction_keep_pairs) +
                           " relay-timed stimulus-response pairs")
        .add("correction", "the player's lowest measured round trip, taken off every pair");
    report(id, p, Check::reaction,
           tripped ? 1.0 : reaction_score(med, l.value, settings_.reaction_tripwire_ms), tripped, l,
           std::move(e), signals);
}

void KaladinAnalyzer::on_aim(MatchState& match, uint32_t id, PlayerState& p, const fb::Order& order,
                             int64_t t_us, Signals& signals) {
    // The player's own position as the relay last received it (it travelled with the
    // order), and the target's as the relay received it one round trip and the game's
    // view delay before the order arrived: what the player's screen showed.
    const auto own = p.positions.latest(t_us);
    if (!own) return;
    const auto target_it = match.players.find(order.target_player());
    if (target_it == match.players.end()) return;
    const int64_t rewind_us = p.rtt.median_us() + to_us(settings_.precision_view_delay_ms / 1e3);
    const auto target = target_it->second.positions.at(t_us - rewind_us);
    if (!target) return;
    const fb::Vec3& aim = *order.target();
    const auto error =
        aim_error_mrad(*own, {aim.x(), aim.y(), aim.z()}, *target, settings_.precision_min_range_m);
    if (!error) return;
    if (p.precision.add(t_us, *error, to_us(settings_.precision_block_s),
                        settings_.precision_min_aims))
        check_precision(id, p, signals);
}

void KaladinAnalyzer::check_precision(uint32_t id, PlayerState& p, Signals& signals) {
    if (collecting_) return;
    const PrecisionLimits limits{.min_session_s = settings_.precision_min_session_s,
                                 .min_blocks = settings_.precision_min_blocks,
                                 .spread_limit_mrad = settings_.precision_spread_limit_mrad,
                                 .widening_limit = settings_.precision_widening_limit,
                                 .widening_floor_mrad = settings_.precision_widening_floor_mrad};
    const PrecisionMeasure m =
        measure_precision(p.precision.blocks(), p.precision.session_s(), limits);
    if (!m.flags) return;
    const Limit l = limit(Check::precision, p.tier, 0.0);
    std::string spreads;
    for (const PrecisionBlock& b : p.precision.blocks()) {
        char text[32];
        std::snprintf(text, sizeof text, "%s%.2f", spreads.empty() ? "" : " ", b.spread_mrad);
        spreads += text;
    }
    Evidence limit_e;
    limit_e.add("value", l.value)
        .add("source", "fixed default: population baselines hold no precision metric yet");
    Evidence e;
    e.add("widest_block_spread_mrad", m.widest_mrad)
        .add("limit", std::move(limit_e))
        .add("early_spread_mrad", m.early_mrad)
        .add("late_spread_mrad", m.late_mrad)
        .add("widening", m.widening)
        .add("widening_limit", limits.widening_limit)
        .add("widening_floor_mrad", limits.widening_floor_mrad)
        .add("allowed_late_mrad", m.allowed_late_mrad)
        .add("blocks_per_third", m.third)
        .add("session_s", m.session_s)
        .add("min_session_s", limits.min_session_s)
        .add("session_from_us", p.precision.first_us().value_or(0))
        .add("session_to_us", p.precision.last_us())
        .add("block_s", settings_.precision_block_s)
        .add("blocks", m.blocks)
        .add("blocks_with_too_few_aims", p.precision.thin_blocks())
        .add("aims", m.aims)
        .add("min_aims_per_block", settings_.precision_min_aims)
        .add("block_spreads_mrad", spreads)
        .add("measure",
             "per block, the median angle seen from the player between an aimed order's target "
             "point and the target player's position as the relay received it one round trip "
             "(the median of the last 9 samples) and the view delay before the order; any "
             "error of that estimate widens it")
        .add("view_delay_ms", settings_.precision_view_delay_ms);
    report(id, p, Check::precision, precision_score(m.widest_mrad, l.value), false, l, std::move(e),
           signals);
}

void KaladinAnalyzer::on_look(uint32_t id, PlayerState& p, const fb::Look& look, Signals& signals) {
    if (!p.quantum.add(look.yaw(), settings_.quantum_window_changes)) return;
    if (p.quantum.changes.size() < settings_.quantum_window_changes) return;
    const auto fit =
        fit_quantum(p.quantum.changes, settings_.quantum_tolerance, min_step_for(look.yaw()));
    if (!fit || !(fit->step_rad < settings_.quantum_max_step_rad)) return;
    const Limit l = limit(Check::quantum, p.tier, settings_.tick_rate_hz);
    report(id, p, Check::quantum, settings_.quantum_score, false, l,
           Evidence()
               .add("step_rad", fit->step_rad)
               .add("step_deg", fit->step_rad * 180.0 / 3.141592653589793)
               .add("max_step_rad", settings_.quantum_max_step_rad)
               .add("changes", fit->changes)
               .add("worst_residual_steps", fit->worst_residual)
               .add("tolerance_steps", settings_.quantum_tolerance)
               .add("largest_multiple", fit->largest_multiple)
               .add("measure",
                    "every one of the player's latest yaw changes is a whole multiple of one "
                    "step finer than any mouse count turns the view"),
           signals);
}

void KaladinAnalyzer::report(uint32_t id, PlayerState& p, Check check, double score, bool tripwire,
                             const Limit&, Evidence evidence, Signals& signals) {
    const auto c = static_cast<size_t>(check);
    if (tripwire) {
        if (p.tripped[c]) return;
        p.tripped[c] = true;
    } else {
        // At the limit exactly the score is 0; nothing to say yet.
        if (score <= 0) return;
        if (p.reported[c] >= 0 && score < p.reported[c] + kReportStep) return;
    }
    p.reported[c] = std::max(p.reported[c], score);
    evidence.add("tripwire", tripwire);
    signals.emit({.player = id,
                  .code = check_code(check),
                  .score = score,
                  .confidence = 1.0,
                  .evidence = std::move(evidence),
                  .tripwire = tripwire});
    host().count(std::string("signals.") + check_code(check));
}

void KaladinAnalyzer::on_match_end(const MatchKey& key, Signals& signals) {
    auto it = matches_.find(key);
    if (it == matches_.end()) return;
    // The last block of aims counts as it stands (if it has enough of them).
    for (auto* entry : in_key_order(it->second.players)) {
        auto& [id, p] = *entry;
        if (p.precision.close(to_us(settings_.precision_block_s), settings_.precision_min_aims))
            check_precision(id, p, signals);
    }
    if (collecting_) fold_into_baseline(it->second);
    matches_.erase(it);
}

void KaladinAnalyzer::baseline_begin() {
    collecting_.emplace();
    matches_.clear();
}

void KaladinAnalyzer::fold_into_baseline(const MatchState& match) {
    collecting_->add_match(match.started_unix_us);
    for (const auto* entry : in_key_order(match.players)) {
        const auto& [id, p] = *entry;
        if (!p.first_input_us) continue;  // a spectator or an idle player tells nothing
        const std::string tier = p.tier.empty() ? "unrated" : p.tier;
        collecting_->add_player(tier);
        if (p.peak_rate >= 0) collecting_->add(tier, Metric::peak_rate, p.peak_rate);
        const int64_t span = p.inputs.recent().back().t_us - *p.first_input_us;
        if (span >= to_us(settings_.rate_window_s))
            collecting_->add(
                tier, Metric::match_rate,
                static_cast<double>(p.inputs.distinct()) * 60e6 / static_cast<double>(span));
        if (p.min_cv >= 0) collecting_->add(tier, Metric::min_cv, p.min_cv);
        if (p.min_entropy >= 0) collecting_->add(tier, Metric::min_entropy, p.min_entropy);
        if (p.reactions.pairs() >= settings_.reaction_min_pairs)
            collecting_->add(tier, Metric::median_reaction, median(p.reactions.corrected_ms()));
    }
}

std::vector<uint8_t> KaladinAnalyzer::baseline_end() {
    if (!collecting_) throw std::logic_error("baseline_end without baseline_begin");
    // Matches whose end never came (a corpus cut short) count as they stand.
    for (const auto& [key, match] : matches_)
        fold_into_baseline(match);
    matches_.clear();
    auto blob = collecting_->finish().write();
    collecting_.reset();
    return blob;
}

}  // namespace arbiter::kaladin
