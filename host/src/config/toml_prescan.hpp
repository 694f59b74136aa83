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

// A string whose closing quote is missing. toml++ says only what it met where the quote
// should have been (a line feed it calls a control character, the end of the file), so
// parse_config words that error itself when it falls where this string ends.
struct UnclosedString {
    size_t line = 1, column = 1;  // of its opening quote
    // Where it ends unclosed: a single-line one at its line's line feed, or at the text's
    // last character when the text ends first (at_end_of_text); a multi-line one there too.
    size_t end_line = 1, end_column = 1;
    bool at_end_of_text = false;
    char quote = '"';
    bool multi_line = false;
    // A single-line basic string's last \" (`"C:\dir\"`): a quote that is part of the
    // string, the usual reason its end is missing. 0 when it has none.
    size_t escaped_quote_column = 0;

    // Whether an error toml++ reports at (line, column) is this string's missing quote.
    bool explains(size_t error_line, size_t error_column) const;
    std::string describe() const;
};

// The first string in `text` that is never closed, or nullopt.
std::optional<UnclosedString> first_unclosed_string(std::string_view text);

}  // namespace arbiter::host
