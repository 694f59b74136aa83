// The aim area (schema 1.2's look and aim): turn speed, circleguard's snaps and spin, each
// a trip-wire with its evidence; a human-like view and a human-like cursor draw nothing.
#include <cmath>
#include <functional>
#include <numbers>

#include <gtest/gtest.h>

#include "aim_area.hpp"
#include "match_script.hpp"

namespace arbiter::reference::test {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr int64_t kFrameUs = 15'625;  // 64 samples a second

// One player's match: a look (or an aim point) per frame, from `sample(frame)`, for
// `seconds`, in batches of a quarter of a second.
Batches view_match(double seconds, const std::function<build::Position(int)>& sample) {
    Batches batches;
    BatchBuilder builder("relay", 1);
    build::PlayerJoin join;
    join.account_id = "p";
    builder.add(0, 0, 1, join);
    const int frames = static_cast<int>(seconds * 64);
    for (int frame = 1; frame <= frames; ++frame) {
        const int64_t t = frame * kFrameUs;
        builder.add(t, static_cast<uint64_t>(t / kTickUs), 1, sample(frame));
        if (frame % 16 == 0) {
            batches.push_back(builder.finish());
            builder = BatchBuilder("relay", 1, batches.size());
        }
    }
    batches.push_back(builder.finish());
    return batches;
}

build::Position looking(double yaw, double pitch) {
    return build::Position{.look = fb::Look(static_cast<float>(yaw), static_cast<float>(pitch))};
}

build::Position aiming(double x, double y, bool relative) {
    return build::Position{
        .aim = fb::AimPoint(static_cast<float>(x), static_cast<float>(y), relative)};
}

Signals aim_signals(const Batches& batches, const ConfigValue& config = ConfigValue::table({})) {
    Harness harness(config);
    EXPECT_TRUE(harness.ok()) << harness.error();
    Signals out;
    for (const auto& s : feed_all(harness, batches))
        if (s.code.rfind("aim.", 0) == 0) out.push_back(s);
    return out;
}

TEST(AimChecks, LookStepsAreAnglesOnTheSphereAndWrap) {
    EXPECT_NEAR(look_step_rad({0, 0, 0}, {0, kPi / 2, 0}), kPi / 2, 1e-9);
    EXPECT_NEAR(look_step_rad({0, 6.2, 0}, {0, 0.05, 0}), 2 * kPi - 6.2 + 0.05, 1e-9);
    EXPECT_NEAR(look_step_rad({0, 0, 0}, {0, 0, 0.3}), 0.3, 1e-9);
    // At the pole every yaw is the same direction.
    EXPECT_NEAR(look_step_rad({0, 0, kPi / 2}, {0, 2.0, kPi / 2}), 0.0, 1e-9);
}

TEST(AimChecks, ASnapIsCircleguardsThreeSampleRule) {
    const AimLimits limits;  // 10 degrees, 8 units
    // Out 100 units and back to within 5 of the start: an angle of about 0.6 degrees.
    auto snap = measure_snap({0, 0, 0}, {1, 100, 0}, {2, 5, 1}, false, limits);
    ASSERT_TRUE(snap);
    EXPECT_NEAR(snap->before, 100.0, 1e-9);
    EXPECT_NEAR(snap->after, std::hypot(95.0, 1.0), 1e-9);
    EXPECT_LT(snap->angle_deg, 1.0);
    // Going on, or turning a right angle, is no snap; nor is a short step either side.
    EXPECT_FALSE(measure_snap({0, 0, 0}, {1, 100, 0}, {2, 200, 0}, false, limits));
    EXPECT_FALSE(measure_snap({0, 0, 0}, {1, 100, 0}, {2, 100, 100}, false, limits));
    EXPECT_FALSE(measure_snap({0, 0, 0}, {1, 100, 0}, {2, 93, 0}, false, limits));
    EXPECT_FALSE(measure_snap({0, 95, 0}, {1, 100, 0}, {2, 0, 0}, false, limits));
    // On a look the same rule runs on angles, the yaw wrapped: out 0.3 rad and back.
    EXPECT_TRUE(measure_snap({0, 6.2, 0}, {1, 0.2, 0}, {2, 6.25, 0}, true, limits));
}

TEST(AimChecks, AHumanLikeViewAndCursorDrawNothing) {
    // The view sweeps a radian either way twice a second, with a slow drift of the pitch:
    // 6.3 rad/s at the fastest.
    EXPECT_TRUE(aim_signals(view_match(120, [](int f) {
                    const double t = f / 64.0;
                    return looking(std::sin(2 * kPi * t), 0.3 * std::sin(0.5 * t));
                })).empty());
    // A relative aim circling the player once a second, 200 units out.
    EXPECT_TRUE(aim_signals(view_match(120, [](int f) {
                    const double t = f / 64.0;
                    return aiming(200 * std::cos(2 * kPi * t), 200 * std::sin(2 * kPi * t), true);
                })).empty());
}

TEST(AimChecks, ATurnNoHandReachesIsATripWireWithItsEvidence) {
    // A radian a frame: 64 rad/s, held for a second.
    const auto signals =
        aim_signals(view_match(2, [](int f) { return looking(f <= 64 ? 1.0 * f : 64.0, 0.0); }));
    const auto turns = only(signals, 1, "aim.turn_speed");
    ASSERT_FALSE(turns.empty());
    EXPECT_TRUE(turns.front().tripwire);
    EXPECT_NE(turns.front().evidence.find("\"limit_rad_s\":60"), std::string::npos)
        << turns.front().evidence;
    EXPECT_NE(turns.front().evidence.find("\"speed_rad_s\":"), std::string::npos);
    // The same turn at 40 rad/s is under the limit.
    EXPECT_TRUE(only(aim_signals(view_match(
                         2, [](int f) { return looking(f <= 64 ? 0.625 * f : 40.0, 0.0); })),
                     1, "aim.turn_speed")
                    .empty());
}

TEST(AimChecks, SpinningIsATripWireOnTheViewAndARelativeAimButNotACursor) {
    // 2 rad a frame: 20 turns a second, always the same way.
    const auto spin = aim_signals(view_match(3, [](int f) { return looking(2.0 * f, 0.0); }));
    ASSERT_FALSE(only(spin, 1, "aim.spin").empty());
    EXPECT_TRUE(only(spin, 1, "aim.spin").front().tripwire);
    EXPECT_NE(only(spin, 1, "aim.spin").front().evidence.find("\"track\":\"look\""),
              std::string::npos);
    auto circling = [](bool relative) {
        return view_match(3, [relative](int f) {
            return aiming(300 + 100 * std::cos(2.0 * f), 200 + 100 * std::sin(2.0 * f), relative);
        });
    };
    // Around the player (relative, centred near it) it is a spin ...
    const auto relative = aim_signals(view_match(
        3, [](int f) { return aiming(100 * std::cos(2.0 * f), 100 * std::sin(2.0 * f), true); }));
    EXPECT_FALSE(only(relative, 1, "aim.spin").empty());
    // The fastest real DDNet player's circling, 6.5 turns a second, is under the limit.
    const auto human = aim_signals(view_match(3, [](int f) {
        const double a = 2 * kPi * 6.5 * f / 64.0;
        return aiming(100 * std::cos(a), 100 * std::sin(a), true);
    }));
    EXPECT_TRUE(only(human, 1, "aim.spin").empty());
    // ... and an osu! spinner, a cursor circling a point of the playfield, is the game.
    EXPECT_TRUE(only(aim_signals(circling(false)), 1, "aim.spin").empty());
}

// Out and back every second frame: a snap at each turn; more than max_snaps in the window
// is the trip-wire, fewer is nothing.
Batches snapping(int snaps) {
    return view_match(30, [snaps](int f) {
        const int period = 30 * 64 / snaps;  // frames between snaps
        const bool out = f % period == 0;
        return aiming(out ? 300.0 : 0.0, 0.0, false);
    });
}

TEST(AimChecks, SnapsPastTheLimitInTheWindowAreATripWire) {
    const auto many = only(aim_signals(snapping(60)), 1, "aim.snaps");
    ASSERT_FALSE(many.empty());
    EXPECT_TRUE(many.back().tripwire);
    EXPECT_NE(many.back().evidence.find("\"limit\":40"), std::string::npos) << many.back().evidence;
    EXPECT_NE(many.front().evidence.find("\"snaps\":41"), std::string::npos)
        << many.front().evidence;
    EXPECT_TRUE(only(aim_signals(snapping(35)), 1, "aim.snaps").empty());
    // The limit is a setting.
    const auto config = ConfigValue::table({{"aim", ConfigValue::table({{"max_snaps", 20}})}});
    EXPECT_FALSE(only(aim_signals(snapping(35), config), 1, "aim.snaps").empty());
}

TEST(AimChecks, SamplesAcrossASilenceAreNotAStep) {
    // Half a turn every frame is far past the turn speed ...
    const auto dense =
        aim_signals(view_match(2, [](int f) { return looking(f % 2 ? kPi : 0.0, 0.0); }));
    EXPECT_FALSE(only(dense, 1, "aim.turn_speed").empty());
    // ... and the same flips 0.6 s apart, past max_gap_s, are no steps at all.
    Batches sparse;
    {
        BatchBuilder builder("relay", 1);
        for (int i = 0; i < 200; ++i)
            builder.add(i * 600'000, 0, 1, looking(i % 2 ? kPi : 0.0, 0.0));
        sparse.push_back(builder.finish());
    }
    EXPECT_TRUE(aim_signals(sparse).empty());
}

TEST(AimChecks, TheAimTracksSurviveASaveAndRestore) {
    const Batches batches = view_match(3, [](int f) { return looking(2.0 * f, 0.0); });
    // Fed whole: the spin shows after about 1.2 s, in the fifth batch.
    Harness whole;
    const auto straight = only(feed_all(whole, batches), 1, "aim.spin");
    ASSERT_FALSE(straight.empty());
    // Saved after two batches, restored into a new instance, fed the rest.
    Harness first;
    feed_all(first, Batches(batches.begin(), batches.begin() + 2));
    const auto blob = first.save_state();
    ASSERT_TRUE(blob);
    Harness second;
    ASSERT_EQ(second.restore_state(*blob), ARB_OK) << second.error();
    const auto resumed =
        only(feed_all(second, Batches(batches.begin() + 2, batches.end())), 1, "aim.spin");
    ASSERT_FALSE(resumed.empty());
    EXPECT_EQ(resumed.front().relay_time_us, straight.front().relay_time_us)
        << "the restored instance spins out at the same moment";
}

TEST(AimChecks, TheSettingsAreDescribedAndChecked) {
    Harness harness;
    const std::string schema = harness.config_schema();
    for (const char* key : {"max_turn_speed_rad_s", "snap_angle_deg", "snap_distance_units",
                            "snap_distance_rad", "max_snaps", "max_spin_turns", "max_gap_s"})
        EXPECT_NE(schema.find(key), std::string::npos) << key;
    Harness bad(ConfigValue::table({{"aim", ConfigValue::table({{"snap_angle_deg", 200.0}})}}));
    EXPECT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("aim.snap_angle_deg"), std::string::npos) << bad.error();
    Harness off(ConfigValue::table({{"aim", ConfigValue::table({{"enabled", false}})}}));
    EXPECT_TRUE(only(feed_all(off, view_match(3, [](int f) { return looking(2.0 * f, 0.0); })), 1,
                     "aim.spin")
                    .empty());
}

}  // namespace
}  // namespace arbiter::reference::test
