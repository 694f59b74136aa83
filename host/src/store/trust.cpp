// Seed 000's trust score ("Default weighting algorithm"), 0 to 12000.
//
// One change from the seed's formula, on purpose: the seed says anti-cheat points "can
// drive the score to zero alone" and that 5 or more are the maximum penalty "regardless of
// age/games/commends", but its anti-cheat term (-points / 25 * 6000) takes only 1200 off
// at 5 points. Here 5 points take off the most the positive factors can add (6000 base +
// 7000), so that 5 points are zero whatever else the account has, as the seed intends.
#include <algorithm>
#include <cmath>

#include "store/store.hpp"

namespace arbiter::host {

namespace {

// NaN and infinities count as absent, negatives as zero (seed 000's NaN guards).
double guarded(double value) {
    return std::isfinite(value) ? std::max(0.0, value) : 0.0;
}

}  // namespace

double trust_score(const TrustFactors& f) {
    const double age = std::min(guarded(f.account_age_days), 365.0) / 365.0 * 1500.0;
    // The first 20 games count for nothing: an idle account earns no trust.
    const double games =
        std::min(std::max(guarded(f.rated_games_played) - 20.0, 0.0), 500.0) / 500.0 * 3000.0;
    const double seasons = std::min(guarded(f.season_participation), 8.0) / 8.0 * 1000.0;
    const double commends = std::min(guarded(f.commend_rate), 0.5) / 0.5 * 1500.0;
    const double reports = -std::min(guarded(f.report_rate), 0.3) / 0.3 * 2000.0;
    const double abandons = -std::min(guarded(f.abandon_rate), 0.1) / 0.1 * 2000.0;
    const double anti_cheat = -std::min(guarded(f.anti_cheat_points), 5.0) / 5.0 * 13000.0;
    const double raw = 6000.0 + age + games + seasons + commends + reports + abandons + anti_cheat;
    return std::clamp(std::floor(raw), 0.0, 12000.0);
}

}  // namespace arbiter::host
