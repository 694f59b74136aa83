// Names from outside as people see them (showable_name): what a terminal or the review
// page would act on is escaped, look-alikes are marked, long names are cut, and the marks
// cannot be forged by a name that holds them.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(ShowableName, FourNamesThatLookLikeMalloryShowAsFourDifferentNames) {
    const std::string plain = "mallory", zero_width = "mal\u200Blory",
                      cyrillic_a = "m\u0430llory", right_to_left = "\u202Eyrollam";
    EXPECT_EQ(showable_name(plain), "mallory");
    EXPECT_FALSE(show_name(plain).look_alike);
    for (const auto& name : {zero_width, cyrillic_a, right_to_left}) {
        const ShownName shown = show_name(name);
        EXPECT_TRUE(shown.look_alike) << name;
        EXPECT_THAT(shown.text, StartsWith(std::string(kLookAlikeMark))) << name;
        // None of the characters that make it pass for another reaches the screen raw.
        for (const char* hidden : {"\u200B", "\u0430", "\u202E"})
            EXPECT_THAT(shown.text, Not(HasSubstr(hidden))) << name;
    }
    EXPECT_EQ(showable_name(zero_width), std::string(kLookAlikeMark) + "mal\\u{200B}lory");
    EXPECT_EQ(showable_name(cyrillic_a), std::string(kLookAlikeMark) + "m\\u{0430}llory");
    EXPECT_EQ(showable_name(right_to_left), std::string(kLookAlikeMark) + "\\u{202E}yrollam");
    // Fullwidth letters, spaces other than ASCII's, and spaces at either end.
    EXPECT_TRUE(show_name("\uFF4Dallory").look_alike);
    EXPECT_EQ(showable_name("mallory\u00A0"), std::string(kLookAlikeMark) + "mallory\\u{00A0}");
    EXPECT_EQ(showable_name(" mallory "), "\\x20mallory\\x20");
    EXPECT_EQ(showable_name("two words"), "two words");
}

TEST(ShowableName, NamesInOneScriptOrWithoutLookAlikesAreShownAsWritten) {
    for (const char* name : {"J\u00FCrgen", "\u0412\u0430\u0441\u044F", "\u03A9\u03BC\u03B5\u03B3\u03B1",
                             "\u7530\u4E2DJohn", "Zo\u00EB_99", "[clan] bob"})
        EXPECT_EQ(showable_name(name), name);
    // Two scripts whose letters pass for each other's: every letter outside ASCII escaped.
    EXPECT_EQ(showable_name("\u03A9mega"), std::string(kLookAlikeMark) + "\\u{03A9}mega");
}

TEST(ShowableName, NothingATerminalWouldActOnGetsThroughRaw) {
    const std::string hostile = std::string("a\x1b[2J\r\nb\x07\x00", 10) + "\xC2\x9B" + "31m\xFF\\";
    const std::string shown = showable_name(hostile, 200);
    for (const unsigned char c : shown)
        EXPECT_TRUE(c >= 0x20 && c != 0x7F) << shown;
    EXPECT_THAT(shown, Not(HasSubstr("\xC2\x9B")));
    EXPECT_EQ(shown, "a\\x1b[2J\\x0d\\x0ab\\x07\\x00\\u{009B}31m\\xff\\\\");
    // Log lines too.
    EXPECT_EQ(escape_for_message("a\u202Eb\xC2\x9B"), "a\\u{202E}b\\u{009B}");
}

TEST(ShowableName, ALongNameIsCutWithAMarkThatNoNameCanForge) {
    const std::string huge(100'000, 'a');
    const ShownName shown = show_name(huge, 24);
    EXPECT_TRUE(shown.cut);
    EXPECT_EQ(shown.text, std::string(23, 'a') + std::string(kCutMark));
    EXPECT_EQ(showable_name(std::string(24, 'a'), 24), std::string(24, 'a'));
    // A look-alike past the cut still marks the name.
    EXPECT_TRUE(show_name(huge + "\u200B", 24).look_alike);
    // Escapes are not split by the cut.
    EXPECT_EQ(showable_name("ab\x1b" "cdefgh", 5), "ab" + std::string(kCutMark));
    // A name holding the marks shows them escaped: only the real marks appear raw.
    EXPECT_EQ(showable_name("bob\u2026"), "bob\\u{2026}");
    EXPECT_EQ(showable_name("\u26A0bob"), "\\u{26A0}bob");
}

}  // namespace
}  // namespace arbiter::host

// A relay name made from a folder's name is cut to the hello's 64 bytes between two
// characters: cut inside one, it would be invalid UTF-8 and every hello refused.
TEST(ToValidUtf8, ACutToABoundFallsBetweenCharacters) {
    const std::string name = std::string(63, 'a') + "\xC3\xA9";  // 'é' across byte 64
    EXPECT_EQ(arbiter::host::to_valid_utf8(name, 64), std::string(63, 'a'));
    EXPECT_EQ(arbiter::host::to_valid_utf8(name, 65), name);
    EXPECT_EQ(arbiter::host::to_valid_utf8("\xE2\x82\xAC", 2), "");
    EXPECT_EQ(arbiter::host::to_valid_utf8("ab\xff", 64), "ab\xEF\xBF\xBD");
    // The replacement character counts in the bound too.
    EXPECT_EQ(arbiter::host::to_valid_utf8("ab\xff", 4), "ab");
    EXPECT_TRUE(arbiter::host::is_valid_utf8(arbiter::host::to_valid_utf8(name, 64)));
}
