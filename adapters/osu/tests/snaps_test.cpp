// circleguard's snap rule: on paths built for it, then on the aim-corrected replay of
// circleguard's test data (corrected_replay1.osr), where circlecore's own test
// (tests/test_investigations.py, test_snaps) expects 14 snaps on hit objects; from the
// replay alone the rule gives 15, the 14 among them, each within circleguard's tolerance
// of 1e-5 (docs/games/osu.md lists them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "osr_reader.hpp"
#include "snaps.hpp"

namespace arbiter::osu {
namespace {

std::vector<OsrFrame> path(const std::vector<std::tuple<int64_t, double, double>>& points) {
    std::vector<OsrFrame> frames;
    for (const auto& [t, x, y] : points) {
        OsrFrame f;
        f.time_ms = t;
        f.x = x;
        f.y = y;
        frames.push_back(f);
    }
    return frames;
}

TEST(Snaps, ASharpTurnWithLongLegsIsASnapAtTheMiddleFrame) {
    // Out 20 px to the right and back along nearly the same line: angle ~2.9 degrees.
    const auto frames = path({{0, 100, 100}, {16, 120, 100}, {32, 100, 101}});
    const auto snaps = find_snaps(frames);
    ASSERT_EQ(snaps.size(), 1u);
    EXPECT_EQ(snaps[0].time_ms, 16);
    EXPECT_NEAR(snaps[0].angle_deg, std::atan2(1.0, 20.0) * 180.0 / M_PI, 1e-9);
    EXPECT_NEAR(snaps[0].distance_px, 20.0, 1e-9);  // the shorter leg
    EXPECT_EQ(snaps[0].x, 120.0);
}

TEST(Snaps, ShortLegsWideAnglesAndStillCursorsAreNoSnaps) {
    EXPECT_TRUE(find_snaps(path({{0, 100, 100}, {16, 107, 100}, {32, 100, 100.5}})).empty());
    EXPECT_TRUE(find_snaps(path({{0, 100, 100}, {16, 120, 100}, {32, 100, 110}})).empty());
    EXPECT_TRUE(find_snaps(path({{0, 100, 100}, {16, 100, 100}, {32, 100, 100}})).empty());
    EXPECT_TRUE(find_snaps(path({{0, 100, 100}, {16, 130, 100}})).empty());
    // The limits are the rule's: a wider angle passes a looser rule.
    EXPECT_EQ(find_snaps(path({{0, 100, 100}, {16, 120, 100}, {32, 100, 110}}),
                         SnapRule{.max_angle_deg = 30.0, .min_distance_px = 8.0})
                  .size(),
              1u);
}

TEST(Snaps, AFrameAtTheTimeOfTheOneBeforeIsDroppedFirst) {
    // The second frame at t=16 would make (16,120)-(16,100.5) a leg; dropped, the path is
    // the same turn as above.
    const auto frames = path({{0, 100, 100}, {16, 120, 100}, {16, 100, 100.5}, {32, 100, 101}});
    const auto snaps = find_snaps(frames);
    ASSERT_EQ(snaps.size(), 1u);
    EXPECT_EQ(snaps[0].time_ms, 16);
    // Not the first of each time overall: only a repeat of the frame just kept is dropped.
    const auto back = path({{0, 100, 100}, {16, 120, 100}, {0, 100, 101}});
    EXPECT_EQ(find_snaps(back).size(), 1u);
}

TEST(Snaps, PlaceholdersAreNotCursors) {
    auto frames =
        path({{0, 256, -500}, {-1, 256, -500}, {10, 100, 100}, {26, 120, 100}, {42, 100, 101}});
    frames[0].placeholder = frames[1].placeholder = true;
    const auto snaps = find_snaps(frames);
    ASSERT_EQ(snaps.size(), 1u);
    EXPECT_EQ(snaps[0].time_ms, 26);
}

TEST(Snaps, CorrectedReplay1GivesFifteenSnapsCircleguardsFourteenAmongThem) {
    const std::filesystem::path file =
        std::filesystem::path(OSU_DATA_DIR) / "aim_corrected" / "corrected_replay1.osr";
    if (!std::filesystem::exists(file))
        GTEST_SKIP() << file << " is absent: cannot check circleguard's snaps";
    const OsrReplay replay = read_osr_file(file);
    const auto snaps = find_snaps(replay.frames);
    // Time ms, angle deg, distance px, rounded to 1e-5 (docs/games/osu.md).
    struct Expected {
        int64_t time_ms;
        double angle_deg, distance_px;
        // Among the 14 of circleguard's own test (on hit objects): its first, ninth and
        // last (14th) are 5103, 71652 and 76502, so 79052 is the one more.
        bool circleguard;
    };
    const Expected expected[] = {
        {5103, 7.38491, 16.69009, true},  {5117, 2.41621, 16.69009, true},
        {5653, 2.16138, 28.17385, true},  {5654, 1.96868, 30.68211, true},
        {11928, 7.06624, 29.17995, true}, {14344, 4.79095, 26.48383, true},
        {29043, 2.68891, 27.61604, true}, {35045, 6.12574, 22.60244, true},
        {71652, 6.34890, 27.59919, true}, {71658, 0.37922, 27.59919, true},
        {72776, 8.21351, 18.25978, true}, {72783, 3.58323, 18.25978, true},
        {72973, 8.66911, 9.26456, true},  {76502, 3.04130, 21.76920, true},
        {79052, 8.77141, 8.21841, false},
    };
    ASSERT_EQ(snaps.size(), 15u);
    int circleguard = 0;
    for (size_t i = 0; i < 15; ++i) {
        EXPECT_EQ(snaps[i].time_ms, expected[i].time_ms) << i;
        // Rounded to 5 decimals: within half a unit of the last, and so within circleguard's
        // own tolerance of 1e-5.
        EXPECT_NEAR(snaps[i].angle_deg, expected[i].angle_deg, 0.5e-5 + 1e-12) << i;
        EXPECT_NEAR(snaps[i].distance_px, expected[i].distance_px, 0.5e-5 + 1e-12) << i;
        circleguard += expected[i].circleguard;
    }
    EXPECT_EQ(circleguard, 14);
    // circleguard's test names three of its 14: the first, the ninth and the last.
    EXPECT_NEAR(snaps[0].angle_deg, 7.38491, 1e-5);
    EXPECT_NEAR(snaps[0].distance_px, 16.69009, 1e-5);
    EXPECT_NEAR(snaps[8].angle_deg, 6.34890, 1e-5);
    EXPECT_NEAR(snaps[8].distance_px, 27.59918, 1e-5);
    EXPECT_NEAR(snaps[13].angle_deg, 3.04130, 1e-5);
    EXPECT_NEAR(snaps[13].distance_px, 21.76919, 1e-5);
}

// The rule on every replay of the data set, by label (the folder): a snap count alone does
// not tell aim correction from people (docs/games/osu.md prints these counts).
TEST(Snaps, CountsOnTheLabelledReplays) {
    const std::filesystem::path dir = OSU_DATA_DIR;
    if (!std::filesystem::exists(dir / "labels.csv"))
        GTEST_SKIP() << OSU_DATA_DIR << " is absent: cannot count the snaps of the real replays";
    std::map<std::string, std::vector<size_t>> counts;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        if (looks_like_osr(entry.path()))
            counts[entry.path().parent_path().filename().string()].push_back(
                find_snaps(read_osr_file(entry.path()).frames).size());
    for (auto& [label, n] : counts) {
        std::sort(n.begin(), n.end());
        std::string line;
        for (size_t c : n)
            line += " " + std::to_string(c);
        std::cout << label << " (" << n.size() << "):" << line << "\n";
    }
    auto median = [](const std::vector<size_t>& n) { return n[n.size() / 2]; };
    const auto& legit = counts["legit"];
    ASSERT_EQ(legit.size(), 71u);
    EXPECT_EQ(legit.front(), 0u);
    EXPECT_EQ(legit.back(), 12u);
    EXPECT_EQ(median(legit), 0u);
    EXPECT_EQ(std::count(legit.begin(), legit.end(), 0u), 49);
    EXPECT_EQ(counts["aim_corrected"], std::vector<size_t>{15});
    EXPECT_EQ(counts["autoplay"], (std::vector<size_t>{1, 4, 12}));
    EXPECT_EQ(counts["cursordance"], (std::vector<size_t>{0, 1, 3, 32}));
    EXPECT_EQ(counts["pilot"], (std::vector<size_t>{9, 20}));
    EXPECT_EQ(counts["relax"], (std::vector<size_t>{0, 0, 0}));
    EXPECT_EQ(counts["timewarped"].back(), 1u);
    EXPECT_EQ(std::count(counts["timewarped"].begin(), counts["timewarped"].end(), 0u), 19);
}

}  // namespace
}  // namespace arbiter::osu
