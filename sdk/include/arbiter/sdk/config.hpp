// Typed, checked access to a plugin's own table of server_config.toml.
//
// The host hands the table over as a FlexBuffers map (see arb_create_args.config).
// Every accessor names the full key path in its error, so that the host can point the
// operator at the file, line and column of the offending key. Read the whole config in
// the analyzer's constructor (the bytes are borrowed for that call), then call
// reject_unknown_keys(): a misspelt key is an error, never silently ignored.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flexbuffers.h>

#include <arbiter/sdk/config_schema.hpp>

namespace arbiter {

// A config value is wrong. what() is "key.path: problem", the form the host parses.
class ConfigError : public std::runtime_error {
  public:
    ConfigError(std::string key, std::string problem)
        : std::runtime_error(key.empty() ? problem : key + ": " + problem),
          key_(std::move(key)),
          problem_(std::move(problem)) {}
    const std::string& key() const { return key_; }
    const std::string& problem() const { return problem_; }

  private:
    std::string key_;
    std::string problem_;
};

// The values a number may take.
struct Range {
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();
    bool min_exclusive = false;

    static Range positive() { return {0.0, std::numeric_limits<double>::infinity(), true}; }
    static Range at_least(double low) { return {low}; }
    static Range between(double low, double high) { return {low, high}; }

    bool contains(double value) const {
        if (!std::isfinite(value)) return false;
        if (min_exclusive ? value <= min : value < min) return false;
        return value <= max;
    }

    std::string describe() const { return "a finite number" + bounds(); }

    // " >= 0 and <= 1", or "" when unbounded.
    std::string bounds() const {
        std::string text;
        if (std::isfinite(min)) text += (min_exclusive ? " > " : " >= ") + format(min);
        if (std::isfinite(max)) text += (std::isfinite(min) ? " and <= " : " <= ") + format(max);
        return text;
    }

private:
    static std::string format(double value) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%g", value);
        return buffer;
    }
};

class ConfigTable {
  public:
    // Verifies the bytes and reads them as a map; size 0 reads as an empty table.
    static ConfigTable parse(std::span<const uint8_t> bytes) {
        auto tracker = std::make_shared<Tracker>();
        if (bytes.empty()) return ConfigTable(flexbuffers::Map::EmptyMap(), "", tracker);
        if (!flexbuffers::VerifyBuffer(bytes.data(), bytes.size()))
            throw ConfigError("", "the config is not a valid FlexBuffers buffer");
        auto root = flexbuffers::GetRoot(bytes.data(), bytes.size());
        if (!root.IsMap()) throw ConfigError("", "the config is not a table");
        return ConfigTable(root.AsMap(), "", tracker);
    }

    ConfigTable() : ConfigTable(flexbuffers::Map::EmptyMap(), "", std::make_shared<Tracker>()) {}

    // A table that reads as empty (every accessor returns its fallback) and records what
    // the parser asks for; schema_json() then gives it as a JSON Schema. The SDK builds
    // the answer of describe_config this way (config_schema.hpp).
    static ConfigTable describing() {
        auto tracker = std::make_shared<Tracker>();
        tracker->schema = std::make_shared<detail::SchemaNode>();
        tracker->schema->kind = detail::SchemaNode::Kind::object;
        return ConfigTable(flexbuffers::Map::EmptyMap(), "", tracker, tracker->schema.get());
    }

    // True for a table made by describing(): a parser may skip checks that need real
    // values (none of the bundled plugins has to).
    bool is_describing() const { return node_ != nullptr; }

    // The JSON Schema recorded so far, from the root table; "" unless describing.
    std::string schema_json() const {
        return tracker_->schema ? tracker_->schema->to_json() : std::string();
    }

    bool has(std::string_view key) const {
        if (node_) node_->property(std::string(key));  // known to exist, of any type
        return !lookup(key).IsNull();
    }

    double number(std::string_view key, double fallback, Range range = {}) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::number)) {
            node->set_bounds(range.min, range.max, range.min_exclusive);
            node->default_json = detail::SchemaNode::number(fallback);
        }
        auto value = use(key);
        if (value.IsNull()) return fallback;
        if (!value.IsNumeric()) throw wrong_type(key, range.describe(), value);
        double number = value.AsDouble();
        if (!range.contains(number))
            throw ConfigError(path(key),
                              "expected " + range.describe() + ", got " + value.ToString());
        return number;
    }

    int64_t integer(std::string_view key, int64_t fallback, Range range = {}) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::integer)) {
            node->set_bounds(range.min, range.max, range.min_exclusive);
            node->default_json = std::to_string(fallback);
        }
        auto value = use(key);
        if (value.IsNull()) return fallback;
        if (!value.IsIntOrUint()) throw wrong_type(key, "an integer", value);
        int64_t number = value.AsInt64();
        if (!range.contains(static_cast<double>(number)))
            throw ConfigError(path(key), "expected an integer" + range.bounds() + ", got " +
                                             value.ToString());
        return number;
    }

    bool boolean(std::string_view key, bool fallback) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::boolean))
            node->default_json = fallback ? "true" : "false";
        auto value = use(key);
        if (value.IsNull()) return fallback;
        if (!value.IsBool()) throw wrong_type(key, "true or false", value);
        return value.AsBool();
    }

    std::string string(std::string_view key, std::string fallback) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::string))
            node->default_json = detail::SchemaNode::quote(fallback);
        auto value = use(key);
        if (value.IsNull()) return fallback;
        if (!value.IsString()) throw wrong_type(key, "a string", value);
        return value.AsString().str();
    }

    std::vector<std::string> strings(std::string_view key) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::array)) {
            node->items = std::make_unique<detail::SchemaNode>();
            node->items->kind = detail::SchemaNode::Kind::string;
        }
        auto value = use(key);
        std::vector<std::string> out;
        if (value.IsNull()) return out;
        if (!value.IsAnyVector()) throw wrong_type(key, "an array of strings", value);
        auto vector = value.AsVector();
        for (size_t i = 0; i < vector.size(); ++i) {
            if (!vector[i].IsString())
                throw ConfigError(path(key) + "[" + std::to_string(i) + "]", "expected a string");
            out.push_back(vector[i].AsString().str());
        }
        return out;
    }

    std::vector<double> numbers(std::string_view key, Range range = {}) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::array)) {
            node->items = std::make_unique<detail::SchemaNode>();
            node->items->kind = detail::SchemaNode::Kind::number;
            node->items->set_bounds(range.min, range.max, range.min_exclusive);
        }
        auto value = use(key);
        std::vector<double> out;
        if (value.IsNull()) return out;
        if (!value.IsAnyVector()) throw wrong_type(key, "an array of numbers", value);
        auto vector = value.AsVector();
        for (size_t i = 0; i < vector.size(); ++i) {
            std::string item = path(key) + "[" + std::to_string(i) + "]";
            if (!vector[i].IsNumeric()) throw ConfigError(item, "expected a number");
            double number = vector[i].AsDouble();
            if (!range.contains(number))
                throw ConfigError(item,
                                  "expected " + range.describe() + ", got " + vector[i].ToString());
            out.push_back(number);
        }
        return out;
    }

    // A sub-table; an absent key reads as an empty table.
    ConfigTable table(std::string_view key) const {
        if (auto* node = record(key, detail::SchemaNode::Kind::object))
            return ConfigTable(flexbuffers::Map::EmptyMap(), path(key), tracker_, node);
        auto value = lookup(key);
        tracker_->tables.insert(path(key));
        tracker_->read.insert(path(key));
        if (value.IsNull()) return ConfigTable(flexbuffers::Map::EmptyMap(), path(key), tracker_);
        if (!value.IsMap()) throw wrong_type(key, "a table", value);
        return ConfigTable(value.AsMap(), path(key), tracker_);
    }

    // The keys of this table, sorted (FlexBuffers maps keep keys sorted).
    // Describing, a table whose keys are iterated holds keys the parser cannot name:
    // the schema leaves it open.
    std::vector<std::string> keys() const {
        if (node_) node_->open = true;
        std::vector<std::string> out;
        auto keys = map_.Keys();
        for (size_t i = 0; i < keys.size(); ++i)
            out.push_back(keys[i].AsKey());
        return out;
    }

    // The path of this table from the plugin's root table, "" at the root.
    const std::string& path() const { return path_; }

    // Throws a ConfigError for the first key, in this table or any sub-table read with
    // table(), that no accessor asked for.
    void reject_unknown_keys() const {
        auto keys = map_.Keys();
        auto values = map_.Values();
        for (size_t i = 0; i < keys.size(); ++i) {
            std::string key = keys[i].AsKey();
            std::string full = path(key);
            if (!tracker_->read.count(full))
                throw ConfigError(full, "unknown key (misspelt, or not used by this plugin)");
            if (values[i].IsMap() && tracker_->tables.count(full))
                ConfigTable(values[i].AsMap(), full, tracker_).reject_unknown_keys();
        }
    }

  private:
    struct Tracker {
        std::set<std::string> read;
        std::set<std::string> tables;
        std::shared_ptr<detail::SchemaNode> schema;  // describing only: the root
    };

    ConfigTable(flexbuffers::Map map, std::string path, std::shared_ptr<Tracker> tracker,
                detail::SchemaNode* node = nullptr)
        : map_(map), path_(std::move(path)), tracker_(std::move(tracker)), node_(node) {}

    // Describing: the key's node, given `kind` unless it already has a type of its own.
    detail::SchemaNode* record(std::string_view key, detail::SchemaNode::Kind kind) const {
        if (!node_) return nullptr;
        detail::SchemaNode& node = node_->property(std::string(key));
        if (node.unconstrained) return nullptr;
        if (node.kind == detail::SchemaNode::Kind::any) node.kind = kind;
        if (node.kind == kind) return &node;
        node = detail::SchemaNode();  // read as two types: leave it unconstrained
        node.unconstrained = true;
        return nullptr;
    }

    std::string path(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

    flexbuffers::Reference lookup(std::string_view key) const {
        std::string k(key);
        return map_[k.c_str()];
    }

    flexbuffers::Reference use(std::string_view key) const {
        tracker_->read.insert(path(key));
        return lookup(key);
    }

    ConfigError wrong_type(std::string_view key, const std::string& expected,
                           const flexbuffers::Reference& got) const {
        return ConfigError(path(key), "expected " + expected + ", got " + got.ToString());
    }

    flexbuffers::Map map_;
    std::string path_;
    std::shared_ptr<Tracker> tracker_;
    detail::SchemaNode* node_ = nullptr;  // describing only: this table's node
};

}  // namespace arbiter
