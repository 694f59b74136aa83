// Builds a plugin config table in code, in the FlexBuffers form the host passes to
// create: for tests and tools that have no server_config.toml at hand.
//
//   auto config = arbiter::ConfigValue::table({{"max_speed", 25.0},
//                                              {"weapons", arbiter::ConfigValue::table({...})}});
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <flatbuffers/flexbuffers.h>

namespace arbiter {

class ConfigValue {
  public:
    using Array = std::vector<ConfigValue>;
    using Table = std::vector<std::pair<std::string, ConfigValue>>;

    ConfigValue() : value_(Table{}) {}
    ConfigValue(bool value) : value_(value) {}
    ConfigValue(int value) : value_(static_cast<int64_t>(value)) {}
    ConfigValue(int64_t value) : value_(value) {}
    ConfigValue(double value) : value_(value) {}
    ConfigValue(const char* value) : value_(std::string(value)) {}
    ConfigValue(std::string value) : value_(std::move(value)) {}
    ConfigValue(Array value) : value_(std::move(value)) {}

    static ConfigValue table(Table members) {
        ConfigValue value;
        value.value_ = std::move(members);
        return value;
    }
    static ConfigValue array(Array items) { return ConfigValue(std::move(items)); }

    std::vector<uint8_t> to_flexbuffer() const {
        flexbuffers::Builder builder;
        write(builder, nullptr);
        builder.Finish();
        return builder.GetBuffer();
    }

  private:
    void write(flexbuffers::Builder& builder, const char* key) const {
        std::visit(
            [&](const auto& value) {
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_same_v<T, Table>) {
                    auto start = key ? builder.StartMap(key) : builder.StartMap();
                    for (const auto& [name, member] : value)
                        member.write(builder, name.c_str());
                    builder.EndMap(start);
                } else if constexpr (std::is_same_v<T, Array>) {
                    auto start = key ? builder.StartVector(key) : builder.StartVector();
                    for (const auto& item : value)
                        item.write(builder, nullptr);
                    builder.EndVector(start, false, false);
                } else if (key) {
                    write_scalar_keyed(builder, key, value);
                } else {
                    write_scalar(builder, value);
                }
            },
            value_);
    }

    static void write_scalar_keyed(flexbuffers::Builder& b, const char* key, const std::string& v) {
        b.String(key, v);
    }
    static void write_scalar_keyed(flexbuffers::Builder& b, const char* key, bool v) {
        b.Bool(key, v);
    }
    static void write_scalar_keyed(flexbuffers::Builder& b, const char* key, int64_t v) {
        b.Int(key, v);
    }
    static void write_scalar_keyed(flexbuffers::Builder& b, const char* key, double v) {
        b.Double(key, v);
    }
    static void write_scalar(flexbuffers::Builder& b, const std::string& v) { b.String(v); }
    static void write_scalar(flexbuffers::Builder& b, bool v) { b.Bool(v); }
    static void write_scalar(flexbuffers::Builder& b, int64_t v) { b.Int(v); }
    static void write_scalar(flexbuffers::Builder& b, double v) { b.Double(v); }

    std::variant<bool, int64_t, double, std::string, Array, Table> value_;
};

}  // namespace arbiter
