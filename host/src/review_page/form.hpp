// The parts of an HTTP request the review page reads, decoded as hostile input: a query
// string or a form body (application/x-www-form-urlencoded) and the Cookie header. Every
// value is checked to be UTF-8 and bounded; anything malformed is a problem to answer with
// 400, never a guess.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace arbiter::host::review_page {

struct Fields {
    std::map<std::string, std::string> values;  // the first value of each name
    std::string problem;                        // "" when the text was well formed
    bool ok() const { return problem.empty(); }
    // The value of `name`, or "" when absent.
    const std::string& get(const std::string& name) const;
};

// "a=1&b=x%20y" (also a form body). '+' is a space; a bad %-escape, a value that is not
// UTF-8, more than `max_fields` fields or a name longer than 64 bytes is a problem.
Fields parse_urlencoded(std::string_view text, size_t max_fields = 32);

// The cookie `name` from a Cookie header ("a=1; b=2"), or nullopt.
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);

// A target "/path?query" split in two (the query without its '?').
struct Target {
    std::string path;
    std::string query;
};
Target split_target(std::string_view target);

}  // namespace arbiter::host::review_page
