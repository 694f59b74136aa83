// The pure movement checks added after speed and teleport (acceleration, sustained speed,
// airborne too long, below the terrain), at and around each of their limits, honest and
// cheating inputs alike, lag included.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "match_script.hpp"
#include "movement.hpp"

namespace arbiter::reference {
namespace {

using test::us;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class Case>
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    return info.param.name;
}

// ---------------------------------------------------------------- tracks

// A 20 Hz track along x through stretches of constant speed: {until_s, speed_mps}, the first
// from 0 s. Every sample the runner sent, received at once.
// Positions are computed from each stretch's start, not summed tick by tick, so that a speed
// of exactly 55 m/s over exactly 1 s is exactly 55 m.
std::vector<Sample> stretches(const std::vector<std::pair<double, double>>& parts) {
    std::vector<Sample> out{{0, {0, 0, 0}}};
    double x0 = 0;
    int64_t t0 = 0, t = 0;
    for (const auto& [until_s, speed] : parts) {
        while (t + test::kTickUs <= us(until_s)) {
            t += test::kTickUs;
            out.push_back({t, {x0 + speed * static_cast<double>(t - t0) / 1e6, 0, 0}});
        }
        x0 = out.back().position.x;
        t0 = t;
    }
    return out;
}

Track track_of(const std::vector<Sample>& samples) {
    Track track;
    track.samples.assign(samples.begin(), samples.end());
    return track;
}

// The runner of `stretches`, but the relay heard nothing in (from_s, from_s + silence_s]:
// the first update sent in it arrives at the end of the silence, the others are lost.
std::vector<Sample> late(const std::vector<Sample>& samples, double from_s, double silence_s) {
    std::vector<Sample> out;
    bool first = true;
    for (const Sample& s : samples) {
        if (s.t_us > us(from_s) && s.t_us <= us(from_s + silence_s)) {
            if (!first) continue;
            first = false;
            out.push_back({us(from_s + silence_s), s.position});
            continue;
        }
        out.push_back(s);
    }
    return out;
}

MovementLimits lag_cap(double max_lag_allowance_s) {
    MovementLimits limits;
    limits.max_lag_allowance_s = max_lag_allowance_s;
    return limits;
}

// ---------------------------------------------------------------- typical_interval_us

TEST(TypicalIntervalSince, CountsOnlyTheGapsEndingFromThen) {
    // 20 Hz from 0 to 4 s (80 gaps of 50 ms), then 2 Hz to 14 s (20 gaps of 500 ms).
    std::vector<Sample> samples = stretches({{4.0, 10.0}});
    for (int i = 1; i <= 20; ++i)
        samples.push_back({us(4.0 + 0.5 * i), {40.0 + 5.0 * i, 0, 0}});
    const Track track = track_of(samples);
    EXPECT_EQ(typical_interval_us(track), 50'000);
    EXPECT_EQ(typical_interval_us(track, std::numeric_limits<int64_t>::min()), 50'000);
    EXPECT_EQ(typical_interval_us(track, us(0.05)), 50'000);  // every gap
    EXPECT_EQ(typical_interval_us(track, us(4.0)), 500'000);  // 4.0 s ends a 50 ms gap
    EXPECT_EQ(typical_interval_us(track, us(4.0) + 1), 500'000);
    EXPECT_EQ(typical_interval_us(track, us(14.0)), 500'000);  // the last gap alone
    EXPECT_EQ(typical_interval_us(track, us(14.0) + 1), 0);    // no gap
    EXPECT_EQ(typical_interval_us(Track{}, 0), 0);
}

// ---------------------------------------------------------------- measure_acceleration

struct AccelCase {
    std::string name;
    std::vector<Sample> samples;
    MovementLimits limits;
    std::optional<double> acceleration;  // nullopt: no two windows yet
    double change_mps = 0;
    double allowance_s = 0;
    bool over = false;  // beyond max_acceleration × tolerance (55 m/s² by default)
};

void PrintTo(const AccelCase& c, std::ostream* os) {
    *os << c.name;
}

class MeasureAcceleration : public ::testing::TestWithParam<AccelCase> {};

TEST_P(MeasureAcceleration, Table) {
    const AccelCase& c = GetParam();
    const Track track = track_of(c.samples);
    const auto m = measure_acceleration(track, c.limits, typical_interval_us(track));
    ASSERT_EQ(m.has_value(), c.acceleration.has_value());
    if (!m) return;
    EXPECT_NEAR(m->acceleration, *c.acceleration, 1e-6);
    EXPECT_NEAR(m->change_mps, c.change_mps, 1e-6);
    EXPECT_NEAR(m->allowance_s, c.allowance_s, 1e-9);
    // The windows are consecutive: the later starts where the earlier ends.
    EXPECT_EQ(m->before.end.t_us, m->after.start.t_us);
    const double limit = c.limits.max_acceleration * c.limits.tolerance;
    EXPECT_EQ(excess_score(m->acceleration, limit) > 0, c.over) << m->acceleration;
}

// From standing to `speed` at 3 s, the track ending at 4 s: the windows [2, 3] and [3, 4],
// whose midpoints are 1 s apart, so the acceleration is the speed itself.
std::vector<Sample> from_rest(double speed) {
    return stretches({{3.0, 0.0}, {4.0, speed}});
}

INSTANTIATE_TEST_SUITE_P(
    Windows, MeasureAcceleration,
    ::testing::Values(
        AccelCase{"Empty", {}, {}, std::nullopt},
        AccelCase{"OneWindowOnly", stretches({{1.5, 10.0}}), {}, std::nullopt},
        AccelCase{"ExactlyTwoWindows", stretches({{2.0, 10.0}}), {}, 0.0},
        AccelCase{"SteadyRun", stretches({{6.0, 19.5}}), {}, 0.0},
        // At and around 55 m/s² (50 × 1.1).
        AccelCase{"JustUnderTheLimit", from_rest(54.9), {}, 54.9, 54.9},
        AccelCase{"AtTheLimit", from_rest(55.0), {}, 55.0, 55.0},
        AccelCase{"JustOverTheLimit", from_rest(55.1), {}, 55.1, 55.1, 0, true},
        AccelCase{"FarOver", from_rest(120.0), {}, 120.0, 120.0, 0, true},
        // Slowing down counts as much as speeding up.
        AccelCase{"StopDeadFrom60", stretches({{3.0, 60.0}, {4.0, 0.0}}), {}, 60.0, -60.0, 0, true},
        AccelCase{"StopDeadFromTheTopSpeed", stretches({{3.0, 19.5}, {4.0, 0.0}}), {}, 19.5, -19.5},
        // The speed changes inside the later window: half of the change shows.
        AccelCase{"ChangeMidWindow", stretches({{3.5, 0.0}, {4.0, 80.0}}), {}, 40.0, 40.0},
        // The limit comes from the config.
        AccelCase{"LowerLimitFromTheConfig", from_rest(30.0),
                  [] {
                      MovementLimits l;
                      l.max_acceleration = 20.0;
                      return l;
                  }(),
                  30.0, 30.0, 0, true},
        // Lag: 0.8 s of silence after 4.0 s, then the first update sent in it (its position
        // 0.75 s old), the others lost. The earlier window [3.8, 4.8] looks slow (4.875 m/s),
        // the later [4.8, 5.8] has its 0.75 s allowance: a change of 14.625 m/s, spread over
        // the 1 s between them and the 0.75 s wait.
        AccelCase{"LateUpdateIsSpreadOverTheWait",
                  late(stretches({{5.8, 19.5}}), 4.0, 0.8),
                  {},
                  14.625 / 1.75,
                  14.625,
                  0.75},
        // A silence longer than the cap (0.8 s against 0.5 s) is not widened for but spanned:
        // the later window starts at 4.0 s, before it ([4.0, 5.8], 35.1 m in 1.8 s), the
        // earlier one ends there ([3.0, 4.0]); both 19.5 m/s, no change. The divisor's wait
        // is still capped.
        AccelCase{"SilenceLongerThanTheCapIsSpanned", late(stretches({{5.8, 19.5}}), 4.0, 0.8),
                  lag_cap(0.5), 0.0, 0.0, 0.5},
        // No lag tolerance at all (a cap of 0): the late update starts the later window
        // ([4.8, 5.8]: 34.125 m in 1 s), the earlier one looks slow (4.875 m/s).
        AccelCase{"NoToleranceWithACapOfZero", late(stretches({{5.8, 19.5}}), 4.0, 0.8),
                  lag_cap(0.0), (34.125 - 4.875) / 1.0, 34.125 - 4.875, 0.0, false},
        // The same silence when a cheater leaps from rest to 150 m/s: the late update (x =
        // 7.5) makes the earlier window 7.5 m/s, the later one is 150 m/s with its
        // allowance, and the change over 1.75 s is still far over the limit.
        AccelCase{"SilenceDoesNotHideAHugeChange",
                  late(stretches({{4.0, 0.0}, {5.8, 150.0}}), 4.0, 0.8),
                  {},
                  142.5 / 1.75,
                  142.5,
                  0.75,
                  true}),
    case_name<AccelCase>);

TEST(MeasureAccelerationShape, AnHonestRunnerThroughALagSpikeNeverComesClose) {
    // 19.5 m/s with 0.8 s to 4 s of silence after 4 s, then every update sent meanwhile in
    // one burst 0.3 ms apart, or the first alone: every pair of windows, far under 55 m/s².
    for (const double silence : {0.8, 2.0, 4.0}) {
        const auto all = stretches({{14.0, 19.5}});
        std::vector<Sample> burst;
        int64_t next = us(4.0 + silence);
        for (const Sample& s : all) {
            if (s.t_us > us(4.0) && s.t_us <= us(4.0 + silence)) {
                burst.push_back({next, s.position});
                next += 300;
            } else {
                burst.push_back(s);
            }
        }
        for (const auto& samples : {burst, late(all, 4.0, silence)}) {
            Track track;
            double worst = 0;
            for (const Sample& s : samples) {
                track.samples.push_back(s);
                if (auto m = measure_acceleration(track, {}, typical_interval_us(track)))
                    worst = std::max(worst, m->acceleration);
            }
            EXPECT_LT(worst, 25.0) << silence << " s of silence";
        }
    }
}

// ---------------------------------------------------------------- sustained speed

// One window per entry: {end_s, speed}, each 1 s long.
SustainedRun run_of(const std::vector<std::pair<double, double>>& windows,
                    const MovementLimits& limits) {
    SustainedRun run;
    for (const auto& [end_s, speed] : windows) {
        WindowMeasure w;
        w.start = {us(end_s - 1.0), {0, 0, 0}};
        w.end = {us(end_s), {speed, 0, 0}};
        w.elapsed_s = 1.0;
        w.speed = speed;
        run = extend_run(run, w, limits);
    }
    return run;
}

// Windows every 50 ms ending from from_s to to_s inclusive, all at `speed`.
std::vector<std::pair<double, double>> windows(double from_s, double to_s, double speed) {
    std::vector<std::pair<double, double>> out;
    for (int64_t t = us(from_s); t <= us(to_s); t += test::kTickUs)
        out.emplace_back(static_cast<double>(t) / 1e6, speed);
    return out;
}

std::vector<std::pair<double, double>> operator+(std::vector<std::pair<double, double>> a,
                                                 const std::vector<std::pair<double, double>>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

struct SustainedCase {
    std::string name;
    std::vector<std::pair<double, double>> windows;
    MovementLimits limits;
    std::optional<double> duration_s;  // nullopt: no signal
    double mean_mps = 0;
    double lowest_mps = 0;  // the same as the mean unless given
};

void PrintTo(const SustainedCase& c, std::ostream* os) {
    *os << c.name;
}

class SustainedSpeed : public ::testing::TestWithParam<SustainedCase> {};

TEST_P(SustainedSpeed, Table) {
    const SustainedCase& c = GetParam();
    const auto m = check_sustained(run_of(c.windows, c.limits), c.limits);
    ASSERT_EQ(m.has_value(), c.duration_s.has_value());
    if (!m) return;
    EXPECT_NEAR(m->duration_s, *c.duration_s, 1e-9);
    EXPECT_NEAR(m->mean_mps, c.mean_mps, 1e-9);
    EXPECT_NEAR(m->lowest_mps, c.lowest_mps > 0 ? c.lowest_mps : c.mean_mps, 1e-9);
    EXPECT_NEAR(m->limit_s, c.limits.sustained_s, 1e-12);
    EXPECT_NEAR(m->score, excess_score(c.mean_mps, c.limits.max_speed * c.limits.tolerance), 1e-12);
    EXPECT_GT(m->score, 0.0);
}

MovementLimits sustained_for(double seconds) {
    MovementLimits limits;
    limits.sustained_s = seconds;
    return limits;
}

INSTANTIATE_TEST_SUITE_P(
    Runs, SustainedSpeed,
    ::testing::Values(
        SustainedCase{"Empty", {}, {}, std::nullopt},
        SustainedCase{"UnderTheLimitForLong", windows(1, 30, 21.9), {}, std::nullopt},
        // 20 × 1.1 is a hair over 22 in floating point: 22 itself is not over.
        SustainedCase{"AtTheSpeedLimitForLong", windows(1, 30, 22.0), {}, std::nullopt},
        SustainedCase{"JustOverTheSpeedLimitForLong", windows(1, 30, 22.01), {}, 29.0, 22.01},
        // At and around 3 s, from the end of the first window over the limit.
        SustainedCase{"TwoAndAHalfSeconds", windows(1, 3.5, 30), {}, std::nullopt},
        SustainedCase{"ExactlyThreeSeconds", windows(1, 4.0, 30), {}, std::nullopt},
        SustainedCase{"JustOverThreeSeconds", windows(1, 4.05, 30), {}, 3.05, 30},
        SustainedCase{
            "AfterAnHonestStart", windows(0, 2, 19) + windows(2.05, 6.1, 30), {}, 4.05, 30},
        // One window under the limit ends the run: two of 2 s are not one of 4 s.
        SustainedCase{"ADipEndsTheRun",
                      windows(1, 3, 30) + windows(3.05, 3.05, 21) + windows(3.1, 5.1, 30),
                      {},
                      std::nullopt},
        SustainedCase{"ANewRunAfterTheDip",
                      windows(1, 3, 30) + windows(3.05, 3.05, 21) + windows(3.1, 7.2, 30),
                      {},
                      4.1,
                      30},
        SustainedCase{"NaNEndsTheRun",
                      windows(1, 3, 30) + windows(3.05, 3.05, kNaN) + windows(3.1, 5.1, 30),
                      {},
                      std::nullopt},
        // The mean of the run's windows scores: 21 at 40, 20 at 25, 40 at 35 m/s.
        SustainedCase{"MeanSpeedScores",
                      windows(1, 2, 40) + windows(2.05, 3, 25) + windows(3.05, 5, 35),
                      {},
                      4.0,
                      (21 * 40.0 + 20 * 25.0 + 40 * 35.0) / 81,
                      25},
        SustainedCase{"DurationFromTheConfig", windows(1, 4.05, 30), sustained_for(5.0),
                      std::nullopt},
        SustainedCase{"ShorterDurationFromTheConfig", windows(1, 2.05, 30), sustained_for(1.0),
                      1.05, 30}),
    case_name<SustainedCase>);

// ---------------------------------------------------------------- airborne

// One update a player sent: relay time, and the server's flag (nullopt: not reported).
struct Flag {
    double t_s;
    std::optional<bool> on_ground;
};

// Updates every 50 ms in [from_s, to_s] with the same flag.
std::vector<Flag> flags(double from_s, double to_s, std::optional<bool> on_ground) {
    std::vector<Flag> out;
    for (int64_t t = us(from_s); t <= us(to_s); t += test::kTickUs)
        out.push_back({static_cast<double>(t) / 1e6, on_ground});
    return out;
}

std::vector<Flag> operator+(std::vector<Flag> a, const std::vector<Flag>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// `count` updates 0.3 ms apart from at_s.
std::vector<Flag> burst(double at_s, int count, std::optional<bool> on_ground) {
    std::vector<Flag> out;
    for (int k = 0; k < count; ++k)
        out.push_back({at_s + 0.0003 * k, on_ground});
    return out;
}

// Folds the updates in with the usual spacing of 50 ms.
AirborneStretch stretch_of(const std::vector<Flag>& updates) {
    AirborneStretch stretch;
    int64_t previous = -1;
    for (const Flag& f : updates) {
        const Sample sample{us(f.t_s), {0, 0, 0}};
        stretch = extend_airborne(stretch, sample, f.on_ground, previous, 50'000);
        previous = sample.t_us;
    }
    return stretch;
}

struct AirborneCase {
    std::string name;
    std::vector<Flag> updates;
    MovementLimits limits;
    std::optional<double> airborne_s;  // nullopt: no signal
    double allowance_s = 0;
};

void PrintTo(const AirborneCase& c, std::ostream* os) {
    *os << c.name;
}

class Airborne : public ::testing::TestWithParam<AirborneCase> {};

TEST_P(Airborne, Table) {
    const AirborneCase& c = GetParam();
    const auto m = check_airborne(stretch_of(c.updates), c.limits);
    ASSERT_EQ(m.has_value(), c.airborne_s.has_value()) << (m ? m->airborne_s : -1.0);
    if (!m) return;
    EXPECT_NEAR(m->airborne_s, *c.airborne_s, 1e-9);
    EXPECT_NEAR(m->allowance_s, c.allowance_s, 1e-9);
    EXPECT_NEAR(m->limit_s, c.limits.max_jump_time_s + c.limits.airborne_grace_s, 1e-12);
    EXPECT_NEAR(m->score, excess_score(*c.airborne_s, m->limit_s), 1e-12);
}

MovementLimits jump_and_grace(double jump_s, double grace_s) {
    MovementLimits limits;
    limits.max_jump_time_s = jump_s;
    limits.airborne_grace_s = grace_s;
    return limits;
}

const auto kOn = std::optional<bool>(true);
const auto kOff = std::optional<bool>(false);
const auto kUnknown = std::optional<bool>();

INSTANTIATE_TEST_SUITE_P(
    Stretches, Airborne,
    ::testing::Values(
        AirborneCase{"OnTheGround", flags(0, 10, kOn), {}, std::nullopt},
        // A jump of 0.92 s (the simulator's): off the ground from 1.0 to 1.9 s.
        AirborneCase{"AJump",
                     flags(0, 0.95, kOn) + flags(1.0, 1.9, kOff) + flags(1.95, 3, kOn),
                     {},
                     std::nullopt},
        AirborneCase{"JumpAfterJump",
                     flags(0, 0.95, kOn) + flags(1.0, 1.9, kOff) + flags(1.95, 1.95, kOn) +
                         flags(2.0, 2.9, kOff) + flags(2.95, 2.95, kOn) + flags(3.0, 3.9, kOff),
                     {},
                     std::nullopt},
        // At and around max_jump_time_s + grace (1 + 1 s).
        AirborneCase{
            "ExactlyTheLimit", flags(0, 0.95, kOn) + flags(1.0, 3.0, kOff), {}, std::nullopt},
        AirborneCase{"JustOverTheLimit", flags(0, 0.95, kOn) + flags(1.0, 3.05, kOff), {}, 2.05},
        AirborneCase{"FlyingForTenSeconds", flags(0, 0.95, kOn) + flags(1.0, 11.0, kOff), {}, 10.0},
        AirborneCase{"FromTheFirstUpdate", flags(0, 4.0, kOff), {}, 4.0},
        AirborneCase{"LimitFromTheConfig", flags(0, 0.95, kOn) + flags(1.0, 2.05, kOff),
                     jump_and_grace(0.5, 0.5), 1.05},
        AirborneCase{"GraceFromTheConfig", flags(0, 0.95, kOn) + flags(1.0, 3.05, kOff),
                     jump_and_grace(1.0, 1.5), std::nullopt},
        // One update on the ground, or without the flag, ends the stretch.
        AirborneCase{"TouchdownEndsIt",
                     flags(0, 0.95, kOn) + flags(1.0, 2.5, kOff) + flags(2.55, 2.55, kOn) +
                         flags(2.6, 4.0, kOff),
                     {},
                     std::nullopt},
        AirborneCase{"NoFlagEndsIt",
                     flags(0, 0.95, kOn) + flags(1.0, 2.5, kOff) + flags(2.55, 2.55, kUnknown) +
                         flags(2.6, 4.0, kOff),
                     {},
                     std::nullopt},
        AirborneCase{"NoFlagNoCheck", flags(0, 10, kUnknown), {}, std::nullopt},
        // Lag: 0.8 s of silence within the stretch (0.75 s beyond the usual spacing).
        AirborneCase{"SilenceWithinIsLag",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + flags(2.3, 3.2, kOff),
                     {},
                     std::nullopt},
        AirborneCase{"SilenceWithinDoesNotHideAFlight",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + flags(2.3, 3.85, kOff),
                     {},
                     2.1,
                     0.75},
        // A silence before the takeoff is not time in the air.
        AirborneCase{"SilenceBeforeTakeoff",
                     flags(0, 1.0, kOn) + flags(1.8, 1.8, kOn) + flags(1.85, 3.9, kOff),
                     {},
                     2.05},
        // 4 s of silence in a jump, then the updates sent in it in one burst, the landing
        // among them: the wait is lag, and the landing ends the stretch.
        AirborneCase{"LongSilenceThenABurstWithTheLanding",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + burst(5.5, 8, kOff) +
                         burst(5.5024, 12, kOn) + flags(5.55, 7, kOn),
                     {},
                     std::nullopt},
        // The same silence, then only the first update sent in it (the landing lost), and a
        // new jump: one stretch by the flags, all but 0.6 s of it the wait.
        AirborneCase{"LongSilenceLostLandingNewJump",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + flags(5.5, 6.0, kOff),
                     {},
                     std::nullopt},
        // The wait is not capped (max_lag_allowance_s is for windows), but only the longest
        // counts: a flight through two silences is reported.
        AirborneCase{"LongSilenceIsNotCapped",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + flags(5.5, 7.5, kOff),
                     lag_cap(0.5), 2.55, 3.95},
        AirborneCase{"OnlyTheLongestWaitCounts",
                     flags(0, 0.95, kOn) + flags(1.0, 1.5, kOff) + flags(4.5, 5.0, kOff) +
                         flags(8.0, 8.5, kOff),
                     {},
                     4.55,
                     2.95}),
    case_name<AirborneCase>);

// ---------------------------------------------------------------- below the terrain

struct BelowCase {
    std::string name;
    double z;
    std::optional<double> ground;
    MovementLimits limits;
    std::optional<double> depth_m;  // nullopt: no signal
};

void PrintTo(const BelowCase& c, std::ostream* os) {
    *os << c.name;
}

class BelowTerrain : public ::testing::TestWithParam<BelowCase> {};

TEST_P(BelowTerrain, Table) {
    const BelowCase& c = GetParam();
    const auto m = check_below_terrain(c.z, c.ground, c.limits);
    ASSERT_EQ(m.has_value(), c.depth_m.has_value());
    if (!m) return;
    EXPECT_NEAR(m->depth_m, *c.depth_m, 1e-9);
    EXPECT_EQ(m->limit_m, c.limits.below_terrain_m);
    EXPECT_NEAR(m->score, excess_score(*c.depth_m, c.limits.below_terrain_m), 1e-12);
    EXPECT_GT(m->score, 0.0);
}

MovementLimits below_by(double metres) {
    MovementLimits limits;
    limits.below_terrain_m = metres;
    return limits;
}

INSTANTIATE_TEST_SUITE_P(
    Heights, BelowTerrain,
    ::testing::Values(BelowCase{"NoGroundReported", -50.0, std::nullopt, {}, std::nullopt},
                      BelowCase{"OnTheGround", 12.5, 12.5, {}, std::nullopt},
                      BelowCase{"InTheAir", 30.0, 12.5, {}, std::nullopt},
                      // At and around the 1 m tolerance.
                      BelowCase{"JustUnderTheTolerance", 11.51, 12.5, {}, std::nullopt},
                      BelowCase{"AtTheTolerance", 11.5, 12.5, {}, std::nullopt},
                      BelowCase{"JustBeyondTheTolerance", 11.49, 12.5, {}, 1.01},
                      BelowCase{"FourMetresUnder", 8.5, 12.5, {}, 4.0},
                      BelowCase{"NegativeHeights", -104.0, -100.0, {}, 4.0},
                      BelowCase{"ToleranceFromTheConfig", 8.5, 12.5, below_by(5.0), std::nullopt},
                      BelowCase{"SmallerToleranceFromTheConfig", 12.3, 12.5, below_by(0.1), 0.2},
                      BelowCase{"NaNGround", 0.0, kNaN, {}, std::nullopt},
                      BelowCase{"NaNHeight", kNaN, 12.5, {}, std::nullopt}),
    case_name<BelowCase>);

}  // namespace
}  // namespace arbiter::reference

namespace arbiter::reference {
namespace {

// ---------------------------------------------------------------- SpacingMedian

TEST(SpacingMedian, AgreesWithTypicalIntervalUpdateByUpdate) {
    // Updates at 20 Hz with jitter, bursts, silences, a clear now and then, receive times
    // that go back, and a since_us that mostly advances but sometimes moves back: after
    // every change the kept median is what typical_interval_us computes afresh.
    uint64_t seed = 12345;
    auto next = [&seed](uint64_t bound) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return (seed >> 33) % bound;
    };
    Track track;
    SpacingMedian median;
    int64_t t_us = 0;
    int64_t horizon_us = 5'000'000;
    int64_t disagreements = 0, checks = 0;
    for (int step = 0; step < 20'000; ++step) {
        const uint64_t roll = next(1000);
        if (roll < 3) {
            track.samples.clear();
            median.cleared();
        } else if (roll < 6) {
            horizon_us = 2'000'000 + static_cast<int64_t>(next(4'000'000));
        }
        int64_t gap = 50'000 + static_cast<int64_t>(next(20'000)) - 10'000;
        if (roll >= 10 && roll < 40) gap = static_cast<int64_t>(next(2'000));  // a burst
        if (roll >= 40 && roll < 45) gap = 500'000 + static_cast<int64_t>(next(5'000'000));
        if (roll >= 45 && roll < 48) gap = -static_cast<int64_t>(next(100'000));  // back
        t_us += gap;
        track.samples.push_back({t_us, {}});
        median.pushed(track);
        while (track.samples.size() > 2 && track.samples[1].t_us < t_us - 6'000'000) {
            median.popping_front(track);
            track.samples.pop_front();
        }
        const int64_t since = t_us - horizon_us;
        ++checks;
        if (median.value(track, since) != typical_interval_us(track, since)) ++disagreements;
    }
    EXPECT_EQ(disagreements, 0) << "of " << checks;
}

TEST(SpacingMedian, RebuildsAfterARestore) {
    Track track;
    for (int i = 0; i < 50; ++i)
        track.samples.push_back({i * 40'000 + (i % 3) * 5'000, {}});
    SpacingMedian median;  // never told of the pushes: as after restore_state
    EXPECT_EQ(median.value(track, 0), typical_interval_us(track, 0));
    EXPECT_EQ(median.value(track, 1'000'000), typical_interval_us(track, 1'000'000));
    EXPECT_NE(typical_interval_us(track, 0), 0);
}

}  // namespace
}  // namespace arbiter::reference
