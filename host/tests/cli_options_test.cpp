// The `arbiter` commands' option reader (host/cli/options.hpp) on what people mistype: every
// command reads its options through it, so a mistake is said one way everywhere.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "options.hpp"

namespace {

using arbiter::cli::OptionReader;

enum class Mode { stop, skip };

// A command with one option of each kind, as a command declares them.
struct Declared {
    bool quiet = false;
    uint64_t seed = 1;
    uint32_t players = 0;
    double rate = 20;
    std::optional<std::string> relay;
    std::string accounts;
    std::vector<std::filesystem::path> truths;
    Mode mode = Mode::stop;
    OptionReader reader{"test", "usage: arbiter test\n"};

    Declared() {
        reader.flag("--quiet", quiet);
        reader.whole("--seed", seed);
        reader.whole("--players", players, 0, 1000);
        reader.number("--tick-rate", rate);
        reader.text("--relay", relay);
        reader.nonempty("--accounts", accounts);
        reader.texts("--truth", truths);
        reader.choice(
            "--on-error", mode,
            std::vector<std::pair<std::string, Mode>>{{"stop", Mode::stop}, {"skip", Mode::skip}});
    }
    // The problem said, "" when the arguments were read.
    std::string problem_with(const std::vector<std::string>& args) {
        return reader.read(args) ? std::string() : reader.problem();
    }
};

TEST(CliOptions, ReadsEveryKindAndKeepsPositionalsInOrder) {
    Declared d;
    ASSERT_EQ(d.problem_with({"in", "--quiet", "--seed", "+42", "--players", "1000", "out",
                              "--tick-rate", "22.4", "--relay", "--eu1", "--truth", "a.json",
                              "--truth", "b.json", "--on-error", "skip", "--quiet"}),
              "");
    EXPECT_TRUE(d.quiet);
    EXPECT_EQ(d.seed, 42u);
    EXPECT_EQ(d.players, 1000u);
    EXPECT_DOUBLE_EQ(d.rate, 22.4);
    EXPECT_EQ(d.relay, "--eu1");  // a value may begin with "--"
    EXPECT_EQ(d.truths, (std::vector<std::filesystem::path>{"a.json", "b.json"}));
    EXPECT_EQ(d.mode, Mode::skip);
    EXPECT_EQ(d.reader.positional(), (std::vector<std::string>{"in", "out"}));
    EXPECT_EQ(d.reader.given_options(),
              (std::vector<std::string>{"--quiet", "--seed", "--players", "--tick-rate", "--relay",
                                        "--truth", "--on-error"}));
    EXPECT_TRUE(d.reader.given("--relay"));
    EXPECT_FALSE(d.reader.given("--accounts"));
}

TEST(CliOptions, AnUnknownOptionIsNamedWithTheNearestKnownOne) {
    EXPECT_EQ(Declared().problem_with({"--sede", "3"}),
              "unknown option --sede (did you mean '--seed'?)");
    EXPECT_EQ(Declared().problem_with({"--colour", "red"}), "unknown option --colour");
    EXPECT_EQ(Declared().problem_with({"--seed=3"}),
              "unknown option --seed=3 (the value goes after a space: --seed 3)");
    Declared noted;
    noted.reader.set_unknown_note(" (for replays)");
    EXPECT_EQ(noted.problem_with({"--qiet"}),
              "unknown option --qiet (for replays) (did you mean '--quiet'?)");
}

TEST(CliOptions, AMissingValueIsSaidWithWhatTheOptionTakes) {
    EXPECT_EQ(Declared().problem_with({"out", "--seed"}), "--seed needs a value");
    EXPECT_EQ(Declared().problem_with({"--on-error"}), "--on-error needs a value (stop or skip)");
    EXPECT_EQ(Declared().problem_with({"--accounts", ""}), "--accounts needs a name");
}

TEST(CliOptions, ANumberThatIsNotOneIsRefusedWithItsText) {
    EXPECT_EQ(Declared().problem_with({"--seed", "-4"}),
              "--seed '-4' is not a non-negative integer");
    EXPECT_EQ(Declared().problem_with({"--seed", "12abc"}),
              "--seed '12abc' is not a non-negative integer");
    EXPECT_EQ(Declared().problem_with({"--seed", ""}), "--seed '' is not a non-negative integer");
    EXPECT_EQ(Declared().problem_with({"--seed", "1.5"}),
              "--seed '1.5' is not a non-negative integer");
    EXPECT_EQ(Declared().problem_with({"--tick-rate", "fast"}),
              "--tick-rate 'fast' is not a number");
    EXPECT_EQ(Declared().problem_with({"--tick-rate", "nan"}), "--tick-rate 'nan' is not a number");
    EXPECT_EQ(Declared().problem_with({"--on-error", "skp"}),
              "--on-error 'skp' is neither stop nor skip (did you mean 'skip'?)");
}

TEST(CliOptions, AnExtremeNumberIsTooLargeNotMalformed) {
    EXPECT_EQ(Declared().problem_with({"--seed", "18446744073709551615"}), "");
    EXPECT_EQ(Declared().problem_with({"--seed", "18446744073709551616"}),
              "--seed '18446744073709551616' is too large: --seed takes a non-negative integer");
    EXPECT_EQ(Declared().problem_with({"--players", "1001"}),
              "--players '1001' is too large: --players takes a whole number from 0 to 1000");
    EXPECT_EQ(Declared().problem_with({"--tick-rate", "1e999"}),
              "--tick-rate '1e999' is not a number");
    // A target narrower than 64 bits is bounded by what it holds, never wrapped.
    uint32_t narrow = 0;
    OptionReader reader("test", "");
    reader.whole("--count", narrow);
    EXPECT_FALSE(reader.read({"--count", "4294967296"}));
    EXPECT_EQ(
        reader.problem(),
        "--count '4294967296' is too large: --count takes a whole number from 0 to 4294967295");
    EXPECT_EQ(narrow, 0u);
    uint64_t positive = 0;
    OptionReader least("test", "");
    least.whole("--match", positive, 1);
    EXPECT_FALSE(least.read({"--match", "0"}));
    EXPECT_EQ(least.problem(), "--match '0' is too small: --match takes a positive integer");
}

TEST(CliOptions, AnOptionGivenTwiceIsRefusedUnlessItRepeats) {
    Declared twice;
    EXPECT_EQ(twice.problem_with({"--seed", "1", "--seed", "2"}),
              "--seed is given twice; give it once");
    EXPECT_EQ(twice.seed, 1u);
    EXPECT_EQ(Declared().problem_with({"--quiet", "--quiet"}), "");
    EXPECT_EQ(Declared().problem_with({"--truth", "a", "--truth", "b", "--truth", "c"}), "");
}

}  // namespace
