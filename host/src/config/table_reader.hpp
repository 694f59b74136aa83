// Reading TOML tables of server_config.toml with every problem collected and located:
// TableReader for the host's own tables, FlexConverter for a plugin's table (handed to
// the plugin as FlexBuffers). Shared by the readers of the config library; the only
// headers that bring toml++ in.
#pragma once

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <flatbuffers/flexbuffers.h>

#include <toml++/toml.h>

#include "arbiter/host/config.hpp"
#include "arbiter/host/suggest.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::config_reading {

inline const char* type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a float";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::date:
            return "a date";
        case toml::node_type::time:
            return "a time";
        case toml::node_type::date_time:
            return "a date-time";
        default:
            return "nothing";
    }
}

// Reads one TOML table, remembering which keys were asked for, so that the rest can
// be reported as unknown; every problem is collected, none stops the reading.
class TableReader {
  public:
    TableReader(const toml::table& table, std::string path, std::string file,
                std::vector<std::string>& problems)
        : table_(table), path_(std::move(path)), file_(std::move(file)), problems_(problems) {}

    SourcePosition where(const toml::node& node) const {
        const auto& begin = node.source().begin;
        return {file_, begin.line, begin.column};
    }

    std::string full(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

    void problem(const toml::node& node, std::string_view key, const std::string& what) {
        problems_.push_back(where(node).str() + ": " + full(key) + ": " + what);
    }

    const toml::node* get(std::string_view key) {
        known_.insert(std::string(key));
        return table_.get(key);
    }

    void number(std::string_view key, double& out, double low, double high) {
        const toml::node* node = get(key);
        if (!node) return;
        auto value = node->value<double>();
        if (!(node->is_integer() || node->is_floating_point()) || !value) {
            problem(*node, key, std::string("expected a number, got ") + type_name(*node));
            return;
        }
        if (!std::isfinite(*value) || *value < low || *value > high) {
            std::ostringstream text;
            text << "expected a number from " << low << " to " << high << ", got " << *value;
            problem(*node, key, text.str());
            return;
        }
        out = *value;
    }

    void integer(std::string_view key, uint64_t& out, int64_t low, int64_t high) {
        const toml::node* node = get(key);
        if (!node) return;
        if (!node->is_integer()) {
            problem(*node, key, std::string("expected an integer, got ") + type_name(*node));
            return;
        }
        int64_t value = *node->value<int64_t>();
        if (value < low || value > high) {
            problem(*node, key,
                    "expected an integer from " + std::to_string(low) + " to " +
                        std::to_string(high) + ", got " + std::to_string(value));
            return;
        }
        out = static_cast<uint64_t>(value);
    }

    void boolean(std::string_view key, bool& out) {
        const toml::node* node = get(key);
        if (!node) return;
        if (!node->is_boolean()) {
            problem(*node, key, std::string("expected true or false, got ") + type_name(*node));
            return;
        }
        out = *node->value<bool>();
    }

    bool string(std::string_view key, std::string& out) {
        const toml::node* node = get(key);
        if (!node) return false;
        if (!node->is_string()) {
            problem(*node, key, std::string("expected a string, got ") + type_name(*node));
            return false;
        }
        out = *node->value<std::string>();
        return true;
    }

    void model_class(std::string_view key, std::optional<ModelClass>& out) {
        std::string text;
        if (!string(key, text)) return;
        out = model_class_from_string(text);
        if (!out)
            problem(*table_.get(key), key,
                    "expected \"validation\", \"behavioural\" or \"statistical\", got \"" + text +
                        "\"");
    }

    void model_classes(std::string_view key, std::vector<ModelClass>& out) {
        const toml::node* node = get(key);
        if (!node) return;
        const toml::array* array = node->as_array();
        if (!array) {
            problem(*node, key,
                    std::string("expected an array of class names, got ") + type_name(*node));
            return;
        }
        std::vector<ModelClass> classes;
        for (const auto& item : *array) {
            auto text = item.value<std::string>();
            auto parsed = text ? model_class_from_string(*text) : std::nullopt;
            if (!parsed) {
                problem(item, key, "expected \"validation\", \"behavioural\" or \"statistical\"");
                return;
            }
            classes.push_back(*parsed);
        }
        out = classes;
    }

    const toml::table* table(std::string_view key) {
        const toml::node* node = get(key);
        if (!node) return nullptr;
        if (!node->is_table()) {
            problem(*node, key, std::string("expected a table, got ") + type_name(*node));
            return nullptr;
        }
        return node->as_table();
    }

    void reject_unknown() {
        for (const auto& [key, node] : table_) {
            if (known_.count(std::string(key.str()))) continue;
            const auto& begin = key.source().begin;
            SourcePosition position{file_, begin.line, begin.column};
            if (position.line == 0) position = where(node);
            problems_.push_back(position.str() + ": unknown key '" + full(key.str()) + "'" +
                                did_you_mean(key.str(), {known_.begin(), known_.end()}));
        }
    }

  private:
    const toml::table& table_;
    std::string path_;
    std::string file_;
    std::vector<std::string>& problems_;
    std::set<std::string> known_;
};

// A plugin's own table as a FlexBuffers map (see arb_create_args.config), recording
// where each key stands for the host's error messages.
class FlexConverter {
  public:
    FlexConverter(std::string file, std::map<std::string, SourcePosition>& positions,
                  std::vector<std::string>& problems)
        : file_(std::move(file)), positions_(positions), problems_(problems) {}

    std::vector<uint8_t> convert(const toml::table& table) {
        flexbuffers::Builder builder;
        write_table(builder, nullptr, table, "");
        builder.Finish();
        return builder.GetBuffer();
    }

  private:
    void write_table(flexbuffers::Builder& builder, const char* key, const toml::table& table,
                     const std::string& path) {
        auto start = key ? builder.StartMap(key) : builder.StartMap();
        for (const auto& [name, node] : table) {
            std::string child =
                path.empty() ? std::string(name.str()) : path + "." + std::string(name.str());
            const auto& begin = name.source().begin;
            const SourcePosition position{file_, begin.line, begin.column};
            // A FlexBuffers key ends at its first NUL: "max_speed\u0000junk" would reach
            // the plugin as max_speed. Such a key is refused, never shortened.
            if (name.str().find('\0') != std::string_view::npos) {
                problems_.push_back(position.str() + ": " + escape_for_message(child, 200) +
                                    ": a key in a plugin's table may not contain a NUL "
                                    "character (\\u0000)");
                continue;
            }
            positions_[child] = position;
            const std::string key_text(name.str());
            write(builder, key_text.c_str(), node, child);
        }
        builder.EndMap(start);
    }

    void write(flexbuffers::Builder& builder, const char* key, const toml::node& node,
               const std::string& path) {
        auto scalar = [&](auto&& emit_keyed, auto&& emit_plain) {
            key ? emit_keyed() : emit_plain();
        };
        if (auto* table = node.as_table()) {
            write_table(builder, key, *table, path);
        } else if (auto* array = node.as_array()) {
            auto start = key ? builder.StartVector(key) : builder.StartVector();
            size_t index = 0;
            for (const auto& item : *array) {
                std::string child = path + "[" + std::to_string(index++) + "]";
                const auto& begin = item.source().begin;
                positions_[child] = {file_, begin.line, begin.column};
                write(builder, nullptr, item, child);
            }
            builder.EndVector(start, false, false);
        } else if (node.is_integer()) {
            int64_t value = *node.value<int64_t>();
            scalar([&] { builder.Int(key, value); }, [&] { builder.Int(value); });
        } else if (node.is_floating_point()) {
            double value = *node.value<double>();
            scalar([&] { builder.Double(key, value); }, [&] { builder.Double(value); });
        } else if (node.is_boolean()) {
            bool value = *node.value<bool>();
            scalar([&] { builder.Bool(key, value); }, [&] { builder.Bool(value); });
        } else {
            // Strings, and dates and times in their RFC 3339 form.
            std::string value;
            if (auto text = node.value<std::string>()) {
                value = *text;
            } else {
                std::ostringstream out;
                if (auto* d = node.as_date())
                    out << *d;
                else if (auto* t = node.as_time())
                    out << *t;
                else if (auto* dt = node.as_date_time())
                    out << *dt;
                value = out.str();
            }
            scalar([&] { builder.String(key, value); }, [&] { builder.String(value); });
        }
    }

    std::string file_;
    std::map<std::string, SourcePosition>& positions_;
    std::vector<std::string>& problems_;
};

}  // namespace arbiter::host::config_reading
