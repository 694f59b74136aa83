// The JSON Schema of a plugin's config table, recorded from the plugin's own parser.
//
// ConfigTable::describing() hands the analyzer's constructor a table that reads as empty
// and notes every key the parser asks for: its type, its range and its fallback. So the
// schema that describe_config returns comes from the same calls that parse the real
// table, never from a second description that could drift. Keys a parser reaches only
// for some values (inside a loop over a table's keys, or behind has()) are left open,
// so that the host never refuses a table the plugin itself would take.
#pragma once

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <arbiter/sdk/json_text.hpp>

namespace arbiter::detail {

class SchemaNode {
  public:
    enum class Kind { any, object, number, integer, boolean, string, array };

    Kind kind = Kind::any;
    std::map<std::string, SchemaNode> properties;  // object
    bool open = false;                             // object: keys beyond `properties` are allowed
    std::unique_ptr<SchemaNode> items;             // array
    std::optional<double> minimum, maximum;
    bool minimum_exclusive = false;
    std::string default_json;    // "" when none
    bool unconstrained = false;  // read as two different types: the schema says nothing

    // The node of a key, made on first use. A key already recorded with a type keeps it
    // (a has() after number() adds nothing).
    SchemaNode& property(const std::string& key) { return properties[key]; }

    void set_bounds(double low, double high, bool low_exclusive) {
        if (std::isfinite(low)) {
            minimum = low;
            minimum_exclusive = low_exclusive;
        }
        if (std::isfinite(high)) maximum = high;
    }

    std::string to_json() const {
        std::string out = "{";
        auto member = [&](std::string_view name, const std::string& value) {
            if (out.size() > 1) out += ",";
            out += quote(name) + ":" + value;
        };
        switch (kind) {
            case Kind::any:
                break;
            case Kind::object: {
                member("type", quote("object"));
                std::string props = "{";
                for (const auto& [key, node] : properties) {
                    if (props.size() > 1) props += ",";
                    props += quote(key) + ":" + node.to_json();
                }
                member("properties", props + "}");
                member("additionalProperties", open ? "true" : "false");
                break;
            }
            case Kind::number:
            case Kind::integer:
                member("type", quote(kind == Kind::number ? "number" : "integer"));
                if (minimum)
                    member(minimum_exclusive ? "exclusiveMinimum" : "minimum", number(*minimum));
                if (maximum) member("maximum", number(*maximum));
                break;
            case Kind::boolean:
                member("type", quote("boolean"));
                break;
            case Kind::string:
                member("type", quote("string"));
                break;
            case Kind::array:
                member("type", quote("array"));
                if (items) member("items", items->to_json());
                break;
        }
        if (!default_json.empty()) member("default", default_json);
        return out + "}";
    }

    static std::string number(double value) {
        if (!std::isfinite(value)) return "null";
        char buffer[32];
        if (value == std::floor(value) && std::fabs(value) < 1e15)
            std::snprintf(buffer, sizeof buffer, "%.0f", value);
        else
            std::snprintf(buffer, sizeof buffer, "%.17g", value);
        return buffer;
    }

    static std::string quote(std::string_view text) {
        std::string out;
        append_json_string(out, text);
        return out;
    }
};

}  // namespace arbiter::detail
