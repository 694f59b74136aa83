// A pass over config text before toml++ reads it. toml++ 3.3 (Debian 12) asks whether a
// character is Unicode whitespace in places where some non-ASCII characters reach
// __builtin_unreachable (upstream issues 190 and 295): undefined behaviour, in a reader
// that `arbiter serve` runs on every config change. The places are few and none of them
// is somewhere valid TOML puts such a character, bar one: so each is refused here, with
// its line and column, and toml++ never sees them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace arbiter::host {

struct TomlTextProblem {
    size_t line = 1;    // from 1
    size_t column = 1;  // from 1, in characters
    std::string what;
};

// The first such place in `text`, or nullopt when toml++ may read it. Text that is not
// UTF-8 is refused here too.
std::optional<TomlTextProblem> toml_text_problem(std::string_view text);

}  // namespace arbiter::host
