// The progress line: what it says at a given point of the work and time, that it draws
// nothing for short work and at most ten times a second, and that it leaves the terminal
// clean. Time is a clock the test moves, never the wall clock.
#include "arbiter/host/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace arbiter::host {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
    std::chrono::steady_clock::time_point now{};
    TerminalProgress::Clock function() {
        return [this] { return now; };
    }
};

// What was written to a memory stream.
struct Captured {
    char* data = nullptr;
    size_t size = 0;
    std::FILE* file = open_memstream(&data, &size);
    ~Captured() {
        std::fclose(file);
        std::free(data);
    }
    std::string text() {
        std::fflush(file);
        return std::string(data, size);
    }
};

TEST(Progress, TheLineGivesTheShareTheAmountsTheRateAndTheTimeLeft) {
    FakeClock clock;
    Captured out;
    TerminalProgress progress(out.file, clock.function());
    progress.start("replay", 80'000'000, ProgressUnit::bytes);
    clock.now += 4s;
    EXPECT_EQ(progress.line(20'000'000),
              "replay    [#####...............]  25%  20.0 MB of 80.0 MB  5.0 MB/s  12 s left");
    clock.now += 116s;
    EXPECT_EQ(progress.line(79'000'000),
              "replay    [###################.]  99%  79.0 MB of 80.0 MB  658.3 kB/s  2 s left");
}

// Issue 47: the first frame, drawn at the first update, showed a rate and a time left
// from a few bytes read in microseconds ("16 B of 250.7 MB  274.6 kB/s  15:13 left" for
// three seconds of work). Neither is shown until there is enough to estimate from.
TEST(Progress, NoRateOrTimeLeftUntilThereIsEnoughToEstimate) {
    FakeClock clock;
    Captured out;
    TerminalProgress progress(out.file, clock.function());
    progress.start("replay", 250'700'000, ProgressUnit::bytes);
    clock.now += 60us;
    progress.update(16);
    EXPECT_EQ(out.text(),
              "\r"
              "replay    [....................]   0%  16 B of 250.7 MB\x1b[K");
    clock.now += 500ms;
    EXPECT_EQ(progress.line(40'000'000),
              "replay    [###.................]  16%  40.0 MB of 250.7 MB");
    // A second in, the rate; the time left only once a hundredth of the work is done.
    clock.now = std::chrono::steady_clock::time_point{} + 2s;
    EXPECT_EQ(progress.line(2'000'000),
              "replay    [....................]   1%  2.0 MB of 250.7 MB  1.0 MB/s");
    EXPECT_EQ(progress.line(2'507'000),
              "replay    [....................]   1%  2.5 MB of 250.7 MB  1.3 MB/s  3:18 left");
    progress.start("simulate", 600, ProgressUnit::seconds_of_play);
    clock.now += 50ms;
    EXPECT_EQ(progress.line(1), "simulate  [....................]   0%  1 s of 600 s of play");
}

TEST(Progress, UnitsAndAnUnknownTotal) {
    FakeClock clock;
    Captured out;
    TerminalProgress progress(out.file, clock.function());
    progress.start("simulate", 600, ProgressUnit::seconds_of_play);
    clock.now += 10s;
    EXPECT_EQ(
        progress.line(300),
        "simulate  [##########..........]  50%  300 s of 600 s of play  30x real time  10 s left");
    progress.start("import", 0, ProgressUnit::events);
    clock.now += 2s;
    EXPECT_EQ(progress.line(3'000'000), "import    3.00 M events  1.50 M events/s");
    progress.start("import", 7'200'000, ProgressUnit::events);
    clock.now += 1s;
    EXPECT_EQ(progress.line(0), "import    [....................]   0%  0 events of 7.20 M events");
}

TEST(Progress, ShortWorkLeavesNothingAndLongWorkRedrawsAtMostTenTimesASecond) {
    FakeClock clock;
    Captured out;
    TerminalProgress progress(out.file, clock.function());
    progress.start("replay", 100, ProgressUnit::bytes);
    for (int i = 0; i < 50; ++i)
        progress.update(static_cast<uint64_t>(i));  // no time passes
    progress.finish();
    // One draw, erased: the terminal is as it was.
    EXPECT_EQ(out.text(), "\r" + progress.line(0) + "\x1b[K\r\x1b[K");

    Captured long_out;
    TerminalProgress long_work(long_out.file, clock.function());
    long_work.start("replay", 100, ProgressUnit::bytes);
    int updates = 0;
    for (int ms = 1; ms <= 1000; ++ms) {  // 1000 updates over one second
        clock.now += 1ms;
        long_work.update(static_cast<uint64_t>(ms / 10));
        ++updates;
    }
    const std::string text = long_out.text();
    size_t draws = 0;
    for (char c : text)
        draws += c == '\r';
    EXPECT_EQ(updates, 1000);
    EXPECT_EQ(draws, 10u) << text;  // at 1 ms, then 101, 201, ... 901
    // Each draw erases what the last one left behind it.
    EXPECT_NE(text.find("\x1b[K"), std::string::npos);
}

TEST(Progress, FinishAndClearLineLeaveTheTerminalClean) {
    FakeClock clock;
    Captured out;
    TerminalProgress progress(out.file, clock.function());
    progress.start("evaluate", 100, ProgressUnit::bytes);
    clock.now += 200ms;
    progress.update(50);
    progress.clear_line();
    const size_t before = out.text().size();
    EXPECT_TRUE(out.text().ends_with("\r\x1b[K"));
    progress.clear_line();  // nothing drawn since: nothing more written
    EXPECT_EQ(out.text().size(), before);
    clock.now += 200ms;
    progress.update(60);
    progress.finish();
    EXPECT_TRUE(out.text().ends_with("\r\x1b[K"));
    progress.update(70);  // after finish: ignored
    EXPECT_TRUE(out.text().ends_with("\r\x1b[K"));
}

TEST(Progress, FilesReadOneAfterAnotherAreOneStretch) {
    FakeClock clock;
    Captured out;
    char dir_template[] = "/tmp/arbiter-progress-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::filesystem::path dir = dir_template;
    for (auto [name, size] : {std::pair{"a", 1000}, std::pair{"b", 3000}}) {
        std::FILE* file = std::fopen((dir / name).c_str(), "wb");
        ASSERT_NE(file, nullptr);
        std::fwrite(std::string(static_cast<size_t>(size), 'x').data(), 1,
                    static_cast<size_t>(size), file);
        std::fclose(file);
    }
    TerminalProgress progress(out.file, clock.function());
    {
        FileSetProgress files(progress, "replay", {dir / "a", dir / "missing", dir / "b"});
        clock.now += 1s;
        EXPECT_EQ(progress.line(0).substr(0, 50),
                  "replay    [....................]   0%  0 B of 4.0 ");
        files.at(2, 1000);  // 1000 bytes into b: 2000 of 4000
        const std::string drawn = out.text();
        EXPECT_NE(drawn.find(" 50%  2.0 kB of 4.0 kB"), std::string::npos) << drawn;
    }
    EXPECT_TRUE(out.text().ends_with("\r\x1b[K"));
    std::filesystem::remove_all(dir);
}

TEST(Progress, NothingIsShownWhenStderrIsNotATerminalOrWhenQuiet) {
    if (::isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal here; ctest's never is";
    EXPECT_NE(dynamic_cast<NoProgress*>(progress_on_stderr(false).get()), nullptr);
    EXPECT_NE(dynamic_cast<NoProgress*>(progress_on_stderr(true).get()), nullptr);
}

}  // namespace
}  // namespace arbiter::host
