// Evidence: the JSON object a signal carries for a human reviewer.
//
// A small writer, not a JSON library: plugins only ever build flat or shallowly nested
// objects of numbers, strings and booleans, and the SDK must not drag a dependency into
// every plugin. Non-finite numbers are written as null so that the object stays valid.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <arbiter/sdk/json_text.hpp>

namespace arbiter {

class Evidence {
  public:
    Evidence() = default;

    template <std::floating_point F>
    Evidence& add(std::string_view key, F value) {
        begin_member(key);
        append_number(static_cast<double>(value));
        return *this;
    }

    template <std::integral I>
    requires(!std::same_as<I, bool>) Evidence& add(std::string_view key, I value) {
        begin_member(key);
        body_ += std::to_string(value);
        return *this;
    }

    Evidence& add(std::string_view key, bool value) {
        begin_member(key);
        body_ += value ? "true" : "false";
        return *this;
    }

    Evidence& add(std::string_view key, std::string_view value) {
        begin_member(key);
        append_string(value);
        return *this;
    }

    Evidence& add(std::string_view key, const char* value) {
        return add(key, std::string_view(value));
    }

    // A nested object.
    Evidence& add(std::string_view key, const Evidence& nested) {
        begin_member(key);
        body_ += nested.str();
        return *this;
    }

    // An array of numbers, e.g. positions or intervals.
    template <class T>
    requires std::is_arithmetic_v<T> Evidence& add(std::string_view key,
                                                   std::span<const T> values) {
        begin_member(key);
        body_ += '[';
        for (size_t i = 0; i < values.size(); ++i) {
            if (i) body_ += ',';
            append_number(static_cast<double>(values[i]));
        }
        body_ += ']';
        return *this;
    }

    Evidence& add(std::string_view key, std::initializer_list<double> values) {
        return add(key, std::span<const double>(values.begin(), values.size()));
    }

    // An array of nested objects.
    Evidence& add(std::string_view key, std::span<const Evidence> objects) {
        begin_member(key);
        body_ += '[';
        for (size_t i = 0; i < objects.size(); ++i) {
            if (i) body_ += ',';
            body_ += objects[i].str();
        }
        body_ += ']';
        return *this;
    }

    std::string str() const { return "{" + body_ + "}"; }

    // Evidence rebuilt from the text str() gave, for evidence kept in a plugin's state
    // across a reload. The text is not checked (the host checks every evidence it gets).
    static Evidence from_str(std::string_view object_text) {
        Evidence evidence;
        if (object_text.size() >= 2 && object_text.front() == '{' && object_text.back() == '}')
            evidence.body_ = std::string(object_text.substr(1, object_text.size() - 2));
        return evidence;
    }
    bool empty() const { return body_.empty(); }

  private:
    void begin_member(std::string_view key) {
        if (!body_.empty()) body_ += ',';
        append_string(key);
        body_ += ':';
    }

    void append_number(double value) {
        if (!std::isfinite(value)) {
            body_ += "null";
            return;
        }
        char buffer[32];
        // %.17g round-trips a double; most values are far shorter with %.10g, which
        // keeps evidence readable (a reviewer does not need the 17th digit).
        int length = std::snprintf(buffer, sizeof buffer, "%.10g", value);
        body_.append(buffer, static_cast<size_t>(length));
    }

    void append_string(std::string_view text) { detail::append_json_string(body_, text); }

    std::string body_;
};

}  // namespace arbiter
