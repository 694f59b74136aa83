#include "arbiter/host/config_schema_check.hpp"

#include <cmath>

#include <flatbuffers/flexbuffers.h>
#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

using json = nlohmann::json;

const std::set<std::string>& checked_keywords() {
    static const std::set<std::string> keywords = {"type",
                                                   "properties",
                                                   "additionalProperties",
                                                   "required",
                                                   "enum",
                                                   "const",
                                                   "minimum",
                                                   "maximum",
                                                   "exclusiveMinimum",
                                                   "exclusiveMaximum",
                                                   "items",
                                                   "minItems",
                                                   "maxItems",
                                                   "minLength",
                                                   "maxLength"};
    return keywords;
}

const std::set<std::string>& annotations() {
    static const std::set<std::string> keywords = {
        "title",    "description", "default",    "$schema",  "$id",
        "$comment", "examples",    "deprecated", "readOnly", "writeOnly"};
    return keywords;
}

bool is_type(const json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "number") return value.is_number();
    if (type == "integer") {
        if (value.is_number_integer()) return true;
        if (!value.is_number_float()) return false;
        const double number = value.get<double>();
        return std::isfinite(number) && number == std::floor(number);
    }
    return false;
}

std::string describe_value(const json& value) {
    return escape_for_message(dump_json(value), 60);
}

size_t utf8_length(const std::string& text) {
    size_t count = 0;
    for (unsigned char c : text)
        if ((c & 0xC0) != 0x80) ++count;
    return count;
}

std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

class Checker {
  public:
    // The first problem of `value` at `path` against `schema`, or "".
    std::string check(const json& value, const json& schema, const std::string& path) {
        if (schema.is_boolean()) return schema.get<bool>() ? "" : at(path, "is not allowed here");
        if (!schema.is_object()) return "";
        if (auto it = schema.find("type"); it != schema.end()) {
            bool matches = false;
            std::string names;
            auto consider = [&](const json& type) {
                if (!type.is_string()) return;
                matches = matches || is_type(value, type.get<std::string>());
                names += (names.empty() ? "" : " or ") + type.get<std::string>();
            };
            if (it->is_array())
                for (const auto& type : *it)
                    consider(type);
            else
                consider(*it);
            if (!names.empty() && !matches)
                return at(path, fmt::format("expected {}, got {}", article(names),
                                            describe_value(value)));
        }
        if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
            bool found = false;
            for (const auto& option : *it)
                found = found || option == value;
            if (!found)
                return at(path, fmt::format("expected one of {}, got {}", describe_value(*it),
                                            describe_value(value)));
        }
        if (auto it = schema.find("const"); it != schema.end() && *it != value)
            return at(path, fmt::format("expected {}, got {}", describe_value(*it),
                                        describe_value(value)));
        if (value.is_number()) {
            if (std::string problem = check_number(value, schema, path); !problem.empty())
                return problem;
        }
        if (value.is_string()) {
            const size_t length = utf8_length(value.get<std::string>());
            if (auto it = schema.find("minLength"); it != schema.end() && it->is_number() &&
                                                    static_cast<double>(length) < it->get<double>())
                return at(path, fmt::format("expected at least {} characters", dump_json(*it)));
            if (auto it = schema.find("maxLength"); it != schema.end() && it->is_number() &&
                                                    static_cast<double>(length) > it->get<double>())
                return at(path, fmt::format("expected at most {} characters", dump_json(*it)));
        }
        if (value.is_array()) {
            const double size = static_cast<double>(value.size());
            if (auto it = schema.find("minItems");
                it != schema.end() && it->is_number() && size < it->get<double>())
                return at(path, fmt::format("expected at least {} items", dump_json(*it)));
            if (auto it = schema.find("maxItems");
                it != schema.end() && it->is_number() && size > it->get<double>())
                return at(path, fmt::format("expected at most {} items", dump_json(*it)));
            if (auto it = schema.find("items"); it != schema.end()) {
                for (size_t i = 0; i < value.size(); ++i) {
                    std::string problem = check(value[i], *it, fmt::format("{}[{}]", path, i));
                    if (!problem.empty()) return problem;
                }
            }
        }
        if (value.is_object()) return check_object(value, schema, path);
        return "";
    }

  private:
    static std::string at(const std::string& path, const std::string& problem) {
        return path.empty() ? problem : path + ": " + problem;
    }

    static std::string article(const std::string& names) {
        if (names == "object") return "a table";
        if (names == "array") return "an array";
        if (names == "integer") return "an integer";
        if (names == "boolean") return "true or false";
        return "a " + names;
    }

    // Worded as the SDK words its own refusals: "expected a finite number >= 0 and <= 1,
    // got 5", so that an operator reads one style whoever checked.
    std::string check_number(const json& value, const json& schema, const std::string& path) {
        auto bound = [&](const char* keyword) -> const json* {
            auto it = schema.find(keyword);
            return it != schema.end() && it->is_number() ? &*it : nullptr;
        };
        const json* minimum = bound("minimum");
        const json* exclusive_minimum = bound("exclusiveMinimum");
        const json* maximum = bound("maximum");
        const json* exclusive_maximum = bound("exclusiveMaximum");
        const double number = value.get<double>();
        const bool fails = (minimum && number < minimum->get<double>()) ||
                           (exclusive_minimum && number <= exclusive_minimum->get<double>()) ||
                           (maximum && number > maximum->get<double>()) ||
                           (exclusive_maximum && number >= exclusive_maximum->get<double>());
        if (!fails) return "";
        std::string bounds;
        auto add = [&](const char* op, const json* limit) {
            if (!limit) return;
            bounds += (bounds.empty() ? " " : " and ") + std::string(op) + " " + dump_json(*limit);
        };
        add(">=", minimum);
        add(">", exclusive_minimum);
        add("<=", maximum);
        add("<", exclusive_maximum);
        const auto type = schema.find("type");
        const bool integer = type != schema.end() && *type == "integer";
        return at(path,
                  fmt::format("expected {}{}, got {}", integer ? "an integer" : "a finite number",
                              bounds, dump_json(value)));
    }

    std::string check_object(const json& value, const json& schema, const std::string& path) {
        if (auto it = schema.find("required"); it != schema.end() && it->is_array()) {
            for (const auto& key : *it)
                if (key.is_string() && !value.contains(key.get<std::string>()))
                    return at(join(path, key.get<std::string>()), "required, but missing");
        }
        const auto properties = schema.find("properties");
        const auto additional = schema.find("additionalProperties");
        for (const auto& [key, member] : value.items()) {
            const std::string member_path = join(path, key);
            if (properties != schema.end() && properties->is_object()) {
                if (auto property = properties->find(key); property != properties->end()) {
                    std::string problem = check(member, *property, member_path);
                    if (!problem.empty()) return problem;
                    continue;
                }
            }
            if (additional == schema.end()) continue;
            if (additional->is_boolean() && !additional->get<bool>())
                return at(member_path, "unknown key (misspelt, or not used by this plugin)");
            std::string problem = check(member, *additional, member_path);
            if (!problem.empty()) return problem;
        }
        return "";
    }
};

json to_json(const flexbuffers::Reference& value) {
    if (value.IsBool()) return value.AsBool();
    if (value.IsInt()) return value.AsInt64();
    if (value.IsUInt()) return value.AsUInt64();
    if (value.IsFloat()) return value.AsDouble();
    if (value.IsString()) return to_valid_utf8(value.AsString().str());
    if (value.IsMap()) {
        json out = json::object();
        const auto map = value.AsMap();
        const auto keys = map.Keys();
        const auto values = map.Values();
        for (size_t i = 0; i < keys.size(); ++i)
            out[to_valid_utf8(keys[i].AsKey())] = to_json(values[i]);
        return out;
    }
    if (value.IsAnyVector()) {
        json out = json::array();
        const auto vector = value.AsVector();
        for (size_t i = 0; i < vector.size(); ++i)
            out.push_back(to_json(vector[i]));
        return out;
    }
    return nullptr;
}

}  // namespace

std::string check_against_schema(const json& table, const json& schema) {
    return Checker().check(table, schema, "");
}

std::set<std::string> unchecked_keywords(const json& schema) {
    std::set<std::string> out;
    // The subschemas the checker descends into, and nothing else: a keyword inside a
    // subschema it never reads is unchecked because its parent keyword is.
    auto walk = [&](auto&& self, const json& node) -> void {
        if (!node.is_object()) return;
        for (const auto& [keyword, argument] : node.items()) {
            if (!checked_keywords().count(keyword) && !annotations().count(keyword))
                out.insert(keyword);
            if (keyword == "properties" && argument.is_object())
                for (const auto& [name, property] : argument.items()) {
                    (void)name;
                    self(self, property);
                }
            else if (keyword == "additionalProperties" || keyword == "items")
                self(self, argument);
        }
    };
    walk(walk, schema);
    return out;
}

json flexbuffer_to_json(std::span<const uint8_t> bytes) {
    if (bytes.empty()) return json::object();
    return to_json(flexbuffers::GetRoot(bytes.data(), bytes.size()));
}

}  // namespace arbiter::host
