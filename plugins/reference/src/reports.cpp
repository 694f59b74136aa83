#include "reports.hpp"

namespace arbiter::reference {

namespace {
// A check reports again only when its score rises by at least this much.
constexpr double kReportStep = 0.05;
}  // namespace

void Reporter::report(Signal signal) {
    Reports& reports = reports_.get();
    const std::string code(signal.code);
    const double weighted = signal.score * signal.confidence;
    auto reported = reports.reported.find(code);
    // The epsilon keeps a rise of exactly one step (0.90 to 0.95) a rise in floating point.
    if (reported != reports.reported.end() && weighted < reported->second + kReportStep - 1e-9) {
        if (weighted <= reported->second) return;
        auto held = reports.held.find(code);
        if (held == reports.held.end() || weighted > held->second.score * held->second.confidence)
            reports.held[code] = {signal.score, signal.confidence, signal.evidence};
        return;
    }
    reports.reported[code] = weighted;
    reports.held.erase(code);
    signals_.emit(signal);
    host_.count("signals." + code);
}

void Reporter::report_held(uint32_t player_id) {
    Reports* reports = reports_.find();
    if (!reports) return;
    for (auto& [code, held] : reports->held) {
        signals_.emit({.player = player_id,
                       .code = code,
                       .score = held.score,
                       .confidence = held.confidence,
                       .evidence = held.evidence});
        reports->reported[code] = held.score * held.confidence;
        host_.count("signals." + code);
    }
    reports->held.clear();
}

void save_reports(StateWriter& out, const Reports& reports) {
    out.put<uint64_t>(reports.reported.size());
    for (const auto& [code, score] : reports.reported) {
        out.put_string(code);
        out.put<double>(score);
    }
    out.put<uint64_t>(reports.held.size());
    for (const auto& [code, held] : reports.held) {
        out.put_string(code);
        out.put<double>(held.score);
        out.put<double>(held.confidence);
        out.put_string(held.evidence.str());
    }
}

void restore_reports(StateReader& in, Reports& reports, bool with_held) {
    uint64_t reported = in.get_count(16);
    for (uint64_t i = 0; i < reported; ++i) {
        std::string code = in.get_string();
        reports.reported[code] = in.get_finite("reported score");
    }
    if (!with_held) return;
    for (uint64_t held = in.get_count(40); held > 0; --held) {
        std::string code = in.get_string();
        Reports::Held& h = reports.held[code];
        h.score = in.get_finite("held score");
        h.confidence = in.get_finite("held confidence");
        h.evidence = Evidence::from_str(in.get_string());
    }
}

}  // namespace arbiter::reference
