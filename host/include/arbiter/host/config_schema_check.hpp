// Checks a plugin's config table against the JSON Schema the plugin describes
// (describe_config, ABI 1.1), before create, so that the operator hears of a wrong key at
// its file, line and column even from a plugin whose source nobody can read.
//
// The keywords checked are those the ABI header lists for describe_config; annotations
// (title, description, default, ...) are skipped; any other keyword is reported back as
// unchecked, never silently taken as satisfied.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace arbiter::host {

// The first way `table` breaks `schema`, as "key.path: problem" (the SDK's form, so that
// describe_config_refusal can place it), or "" when the table matches.
std::string check_against_schema(const nlohmann::json& table, const nlohmann::json& schema);

// Every keyword anywhere in `schema` that check_against_schema does not implement (and
// that is no annotation): what an operator must be told is left to the plugin.
std::set<std::string> unchecked_keywords(const nlohmann::json& schema);

// A config table as the host hands it to plugins (a FlexBuffers map) in JSON form.
nlohmann::json flexbuffer_to_json(std::span<const uint8_t> bytes);

}  // namespace arbiter::host
