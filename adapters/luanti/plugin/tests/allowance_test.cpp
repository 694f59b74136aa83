// The mod's "luanti.allowance": every key, the defaults of missing ones, and a clear
// problem (never a crash, never a guess) for anything else.
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "allowance.hpp"

namespace {

using arbiter::luanti::Allowance;
using arbiter::luanti::parse_allowance;

std::variant<Allowance, std::string> parse(const std::string& json) {
    return parse_allowance(std::span(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
}

Allowance allowed(const std::string& json) {
    auto result = parse(json);
    if (auto* problem = std::get_if<std::string>(&result)) {
        ADD_FAILURE() << json << ": " << *problem;
        return {};
    }
    return std::get<Allowance>(result);
}

std::string problem(const std::string& json) {
    auto result = parse(json);
    auto* text = std::get_if<std::string>(&result);
    return text ? *text : "(accepted)";
}

TEST(Allowance, EveryKeyIsRead) {
    const Allowance a = allowed(
        R"({"speed":1.5,"jump":2,"gravity":0.5,"fast":true,"fly":true,"noclip":true,"attached":true})");
    EXPECT_EQ(a.speed, 1.5);
    EXPECT_EQ(a.jump, 2.0);
    EXPECT_EQ(a.gravity, 0.5);
    EXPECT_TRUE(a.fast);
    EXPECT_TRUE(a.fly);
    EXPECT_TRUE(a.noclip);
    EXPECT_TRUE(a.attached);
}

TEST(Allowance, AMissingKeyTakesItsDefaultAndAnUnknownOneIsIgnored) {
    EXPECT_EQ(allowed("{}"), Allowance{});
    const Allowance a = allowed(R"({"fast":true,"sneak":false,"new_key":{"x":1}})");
    Allowance expected;
    expected.fast = true;
    EXPECT_EQ(a, expected);
}

TEST(Allowance, FactorsAtTheEdgesOfTheirRange) {
    EXPECT_EQ(allowed(R"({"speed":0})").speed, 0.0);  // a frozen player
    EXPECT_EQ(allowed(R"({"gravity":1000})").gravity, 1000.0);
    EXPECT_NE(problem(R"({"gravity":1000.5})").find("\"gravity\" is outside"), std::string::npos);
    EXPECT_NE(problem(R"({"speed":-0.1})").find("\"speed\" is outside"), std::string::npos);
}

TEST(Allowance, AnythingElseIsAProblemThatSaysWhat) {
    EXPECT_EQ(problem(""), "not JSON");
    EXPECT_EQ(problem("{\"speed\":"), "not JSON");
    EXPECT_EQ(problem("[1,2]"), "not a JSON object");
    EXPECT_EQ(problem("\"fast\""), "not a JSON object");
    EXPECT_EQ(problem(R"({"speed":"fast"})"), "\"speed\" is not a number");
    EXPECT_EQ(problem(R"({"jump":null})"), "\"jump\" is not a number");
    EXPECT_EQ(problem(R"({"fly":1})"), "\"fly\" is not true or false");
    EXPECT_EQ(problem(R"({"attached":"yes"})"), "\"attached\" is not true or false");
    EXPECT_EQ(problem(std::string("{\"fast\":tr\0ue}", 14)), "not JSON");
}

}  // namespace

#include "extension_data.hpp"

namespace {

std::vector<uint8_t> bytes_of(const std::string& text) {
    return {text.begin(), text.end()};
}

// A node name longer than the plugin keeps is cut between two characters, never inside one
// (the host drops evidence that is not UTF-8).
TEST(ExtensionData, ALongNameIsCutBetweenCharacters) {
    const std::string name = std::string(arbiter::luanti::kLongestName - 1, 'n') + "\xC3\xA9x";
    const auto kept =
        arbiter::luanti::json_string_member(bytes_of("{\"node\":\"" + name + "\"}"), "node");
    ASSERT_TRUE(kept.has_value());
    EXPECT_EQ(*kept, std::string(arbiter::luanti::kLongestName - 1, 'n'));
    EXPECT_FALSE(arbiter::luanti::json_string_member(bytes_of("[1]"), "node").has_value());
    EXPECT_FALSE(arbiter::luanti::json_string_member(bytes_of("{\"node\":1}"), "node").has_value());
}

}  // namespace
