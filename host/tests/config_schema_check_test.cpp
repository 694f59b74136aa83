// The host's check of a plugin's config table against the JSON Schema the plugin
// describes (describe_config, ABI 1.1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arbiter/host/config_schema_check.hpp"

namespace arbiter::host {
namespace {

using json = nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
    "window": {"type": "integer", "exclusiveMinimum": 0},
    "mode": {"type": "string", "enum": ["fast", "slow"]},
    "names": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "movement": {"type": "object", "additionalProperties": false,
                 "properties": {"max_speed": {"type": "number"}}},
    "weapons": {"type": "object", "properties": {}, "additionalProperties": true}
  }
})");

std::string problem(const json& table) {
    return check_against_schema(table, kSchema);
}

TEST(ConfigSchemaCheck, AcceptsATableThatMatches) {
    EXPECT_EQ(problem(json::object()), "");
    EXPECT_EQ(problem({{"threshold", 0.25}, {"window", 3}, {"mode", "fast"}}), "");
    EXPECT_EQ(problem({{"weapons", {{"rifle", {{"anything", 1}}}}}}), "") << "an open table";
    EXPECT_EQ(problem({{"window", 4.0}}), "") << "4.0 is an integer to JSON Schema";
}

TEST(ConfigSchemaCheck, NamesTheKeyPathAndWhatWasWrong) {
    EXPECT_EQ(problem({{"threshold", 5}}),
              "threshold: expected a finite number >= 0 and <= 1, got 5");
    EXPECT_EQ(problem({{"threshold", "high"}}), "threshold: expected a number, got \"high\"");
    EXPECT_EQ(problem({{"window", 0}}), "window: expected an integer > 0, got 0");
    EXPECT_EQ(problem({{"window", 2.5}}), "window: expected an integer, got 2.5");
    EXPECT_EQ(problem({{"mode", "medium"}}),
              "mode: expected one of [\"fast\",\"slow\"], got \"medium\"");
    EXPECT_EQ(problem({{"names", {"a", 1}}}), "names[1]: expected a string, got 1");
    EXPECT_EQ(problem({{"names", {"a", "b", "c"}}}), "names: expected at most 2 items");
    EXPECT_EQ(problem({{"movement", {{"max_sped", 1}}}}),
              "movement.max_sped: unknown key (misspelt, or not used by this plugin)");
    EXPECT_EQ(problem({{"movement", 3}}), "movement: expected a table, got 3");
}

TEST(ConfigSchemaCheck, RequiredKeysAndBooleanSchemas) {
    const json schema = json::parse(
        R"({"type":"object","required":["seconds"],"properties":{"seconds":true,"never":false}})");
    EXPECT_EQ(check_against_schema(json::object(), schema), "seconds: required, but missing");
    EXPECT_EQ(check_against_schema({{"seconds", 1}, {"never", 1}}, schema),
              "never: is not allowed here");
}

TEST(ConfigSchemaCheck, ReportsKeywordsItDoesNotCheckInsteadOfPassingThemSilently) {
    const json schema = json::parse(
        R"({"type":"object","description":"shown, not checked","properties":{"name":{"type":"string","pattern":"^[a-z]+$"}},"oneOf":[]})");
    EXPECT_EQ(check_against_schema({{"name", "x"}}, schema), "");
    EXPECT_EQ(unchecked_keywords(schema), (std::set<std::string>{"oneOf", "pattern"}));
}

TEST(ConfigSchemaCheck, HostileSchemasDoNotCrashIt) {
    // Wrong types for every keyword: ignored rather than trusted.
    const json schema = json::parse(
        R"({"type":5,"properties":[],"additionalProperties":"no","required":"x","enum":{},"minimum":"0","items":7,"maxItems":"2"})");
    EXPECT_EQ(check_against_schema({{"a", {1, 2, 3}}}, schema), "");
    EXPECT_EQ(check_against_schema(json::array({1}), json::parse(R"({"items":false})")),
              "[0]: is not allowed here");
}

}  // namespace
}  // namespace arbiter::host
