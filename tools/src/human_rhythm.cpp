#include "arbiter/tools/human_rhythm.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "human_rhythm_builtin.hpp"

namespace arbiter::tools {

namespace {
// A player needs this many inputs to be learnt from.
constexpr size_t kMinStepsPerPlayer = 20;
// A block of a real player's inputs lasts this many inputs, at least and at most.
constexpr uint32_t kMinBlock = 50;
constexpr uint32_t kMaxBlock = 300;
// Gaps below this are not quantised by a game loop: the times are taken as they are.
constexpr double kMinQuantumS = 0.010;
}  // namespace

HumanRhythm HumanRhythm::from_rows(const std::vector<TraceRow>& rows, const std::string& source,
                                   std::string description) {
    // Each player's actions, in the order of the file, grouped by (source, game, player).
    std::map<std::tuple<std::string_view, std::string_view, std::string_view>, size_t> index;
    struct Action {
        double t;
        std::string_view kind;
        bool repeat;
    };
    std::vector<std::vector<Action>> players;
    for (const TraceRow& row : rows) {
        if (!source.empty() && row.source != source) continue;
        auto [it, added] =
            index.emplace(std::tuple{std::string_view(row.source), std::string_view(row.game),
                                     std::string_view(row.player)},
                          players.size());
        if (added) players.emplace_back();
        bool repeat = row.repeat.value_or(row.action_kind == "command_repeat");
        std::string_view kind =
            row.action_kind == "command_repeat" ? std::string_view("command") : row.action_kind;
        players[it->second].push_back({row.t_seconds, kind, repeat});
    }

    HumanRhythm model;
    std::map<std::string_view, uint32_t> kind_ids;
    double smallest_gap = 0;
    for (auto& actions : players) {
        std::stable_sort(actions.begin(), actions.end(),
                         [](const Action& a, const Action& b) { return a.t < b.t; });
        const size_t begin = model.steps_.size();
        const size_t actions_begin = model.actions_.size();
        for (size_t i = 0; i < actions.size();) {
            size_t j = i;
            while (j < actions.size() && actions[j].t == actions[i].t)
                ++j;
            if (i > 0) {
                const double gap = actions[i].t - actions[i - 1].t;
                if (smallest_gap == 0 || gap < smallest_gap) smallest_gap = gap;
                Step step{static_cast<float>(gap), static_cast<uint32_t>(model.actions_.size()),
                          static_cast<uint16_t>(std::min<size_t>(j - i, UINT16_MAX))};
                for (size_t k = i; k < i + step.count; ++k) {
                    auto [kind, added] = kind_ids.emplace(
                        actions[k].kind, static_cast<uint32_t>(model.kind_names_.size()));
                    if (added) model.kind_names_.emplace_back(actions[k].kind);
                    model.actions_.push_back({kind->second, actions[k].repeat});
                }
                model.steps_.push_back(step);
            }
            i = j;
        }
        if (model.steps_.size() - begin < kMinStepsPerPlayer) {
            // Too short to learn a rhythm from: leave it out.
            model.actions_.resize(actions_begin);
            model.steps_.resize(begin);
            continue;
        }
        model.traces_.emplace_back(begin, model.steps_.size());
    }
    if (model.traces_.empty())
        throw std::runtime_error(
            "no player with at least " + std::to_string(kMinStepsPerPlayer) + " inputs" +
            (source.empty() ? std::string() : " from source '" + source + "'"));
    model.quantum_s_ = smallest_gap >= kMinQuantumS ? smallest_gap : 0.0;
    model.description_ = std::move(description) + ": " + std::to_string(model.traces_.size()) +
                         " players, " + std::to_string(model.steps_.size()) + " inputs";
    return model;
}

HumanRhythm HumanRhythm::from_file(const std::filesystem::path& path, const std::string& source) {
    auto format = trace_format_from_path(path).value_or(TraceFormat::csv);
    TraceReadResult read = read_trace_rows(path, format, OnBadRow::stop);
    if (!read.problems.empty()) throw std::runtime_error(read.problems.front().str(path.string()));
    try {
        return from_rows(read.rows, source, path.filename().string());
    } catch (const std::exception& error) {
        throw std::runtime_error(path.string() + ": " + error.what());
    }
}

HumanRhythm HumanRhythm::builtin() {
    HumanRhythm model;
    model.description_ = "built-in table (a summary of dev-actions.csv's 30 StarCraft II players)";
    model.quantum_s_ = builtin_rhythm::kQuantumS;
    return model;
}

double HumanRhythm::builtin_gap(Rng& rng) const {
    auto knots = builtin_rhythm::gap_knots();
    const double p = rng.uniform() * 100.0;
    auto upper = std::upper_bound(
        knots.begin(), knots.end(), p,
        [](double value, const builtin_rhythm::GapKnot& k) { return value < k.percentile; });
    if (upper == knots.begin()) return knots.front().gap_s;
    if (upper == knots.end()) return knots.back().gap_s;
    auto lower = upper - 1;
    const double f = (p - lower->percentile) / (upper->percentile - lower->percentile);
    return lower->gap_s + f * (upper->gap_s - lower->gap_s);
}

HumanRhythm::Stream::Stream(const HumanRhythm* model, Rng& rng) : model_(model) {
    if (model_->from_traces()) jump(rng);
}

void HumanRhythm::Stream::jump(Rng& rng) {
    const auto& [begin, end] = model_->traces_[rng.below(model_->traces_.size())];
    position_ = begin + rng.below(end - begin);
    end_ = end;
    left_in_block_ = kMinBlock + static_cast<uint32_t>(rng.below(kMaxBlock - kMinBlock + 1));
}

double HumanRhythm::Stream::next(Rng& rng, std::vector<InputAction>& actions) {
    actions.clear();
    double gap = 0;
    if (model_->from_traces()) {
        if (left_in_block_ == 0 || position_ >= end_) jump(rng);
        const Step& step = model_->steps_[position_++];
        --left_in_block_;
        gap = step.gap_s;
        for (uint32_t i = 0; i < step.count; ++i) {
            const Kind& kind = model_->actions_[step.first + i];
            actions.push_back({model_->kind_names_[kind.name], kind.repeat});
        }
    } else {
        gap = model_->builtin_gap(rng);
        auto multiplicities = builtin_rhythm::multiplicities();
        uint64_t total = 0;
        for (const auto& m : multiplicities)
            total += m.count;
        uint64_t pick = rng.below(total);
        uint16_t count = 1;
        for (const auto& m : multiplicities) {
            if (pick < m.count) {
                count = m.actions;
                break;
            }
            pick -= m.count;
        }
        auto kinds = builtin_rhythm::kind_shares();
        uint64_t kinds_total = 0;
        for (const auto& k : kinds)
            kinds_total += k.count;
        for (uint16_t i = 0; i < count; ++i) {
            uint64_t k_pick = rng.below(kinds_total);
            for (const auto& k : kinds) {
                if (k_pick < k.count) {
                    actions.push_back({k.kind, k.repeat});
                    break;
                }
                k_pick -= k.count;
            }
        }
    }
    if (model_->quantum_s_ > 0) {
        // Spread within the game loop the time was rounded to.
        gap += (rng.uniform() - 0.5) * model_->quantum_s_;
        gap = std::max(gap, 0.25 * model_->quantum_s_);
    }
    return gap;
}

std::filesystem::path default_human_traces() {
    if (const char* env = std::getenv("ARBITER_HUMAN_TRACES"); env && *env) return env;
    std::filesystem::path built_in = ARBITER_DEFAULT_HUMAN_TRACES;
    std::error_code ignored;
    if (std::filesystem::exists(built_in, ignored)) return built_in;
    return {};
}

}  // namespace arbiter::tools
