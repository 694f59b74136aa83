#include "config/toml_prescan.hpp"

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {

// Walks the text as TOML's lexer does, far enough to know whether a character is inside
// a string, inside a comment, or neither.
class Scanner {
  public:
    explicit Scanner(std::string_view text) : text_(text) {}

    std::optional<TomlTextProblem> run() {
        if (text_.starts_with("\xEF\xBB\xBF")) advance(3);  // a byte-order mark, as toml++ allows
        while (i_ < text_.size()) {
            const char c = text_[i_];
            if (c == '#') {
                skip_comment();
            } else if (c == '"' || c == '\'') {
                if (auto problem = string(c)) return problem;
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                return here(
                    "a non-ASCII character outside a string or a comment (TOML allows them only "
                    "inside quotes or after #)");
            } else {
                advance(1);
            }
        }
        return std::nullopt;
    }

    // The first string that was never closed, once run() has gone through the text.
    const std::optional<UnclosedString>& unclosed() const { return unclosed_; }

  private:
    std::optional<TomlTextProblem> here(std::string what) const {
        return TomlTextProblem{line_, column_, std::move(what)};
    }

    // Moves past `count` bytes, keeping the line and the column in characters.
    void advance(size_t count) {
        for (size_t k = 0; k < count && i_ < text_.size(); ++k, ++i_) {
            const auto byte = static_cast<unsigned char>(text_[i_]);
            if ((byte & 0xC0) != 0x80) {
                last_line_ = line_;
                last_column_ = column_;
            }
            if (byte == '\n') {
                ++line_;
                column_ = 1;
            } else if ((byte & 0xC0) != 0x80) {
                ++column_;  // a continuation byte is part of the character before it
            }
        }
    }

    bool at(std::string_view what) const { return text_.substr(i_).starts_with(what); }
    bool ascii_at() const {
        return i_ >= text_.size() || static_cast<unsigned char>(text_[i_]) < 0x80;
    }

    void skip_comment() {
        while (i_ < text_.size() && text_[i_] != '\n')
            advance(1);
    }

    std::optional<TomlTextProblem> string(char quote) {
        const std::string triple(3, quote);
        const bool multi_line = at(triple);
        const bool basic = quote == '"';
        UnclosedString open{
            .line = line_, .column = column_, .quote = quote, .multi_line = multi_line};
        advance(multi_line ? 3 : 1);
        while (i_ < text_.size()) {
            const char c = text_[i_];
            if (!multi_line && (c == '\n' || (c == '\r' && at("\r\n")))) {
                // toml++ reports it, as a control character; parse_config says what it is.
                open.end_line = line_;
                open.end_column = column_;
                note_unclosed(open);
                return std::nullopt;
            }
            if (c == quote) {
                if (!multi_line) {
                    advance(1);
                    return std::nullopt;
                }
                size_t run = 0;
                while (i_ + run < text_.size() && text_[i_ + run] == quote)
                    ++run;
                advance(run);  // up to two quotes before the closing three are content
                if (run >= 3) return std::nullopt;
                continue;
            }
            if (basic && c == '\\') {
                advance(1);
                if (multi_line) {
                    if (auto problem = after_multi_line_backslash()) return problem;
                } else if (i_ < text_.size() && text_[i_] != '\n') {
                    // The escaped character; toml++ judges the escape. A line feed is not
                    // taken: a single-line string ends with its line whatever comes before.
                    if (text_[i_] == quote) open.escaped_quote_column = column_ - 1;
                    advance(1);
                }
                continue;
            }
            advance(1);
        }
        open.end_line = last_line_;
        open.end_column = last_column_;
        open.at_end_of_text = true;
        note_unclosed(open);
        return std::nullopt;
    }

    void note_unclosed(const UnclosedString& open) {
        if (!unclosed_) unclosed_ = open;
    }

    // toml++ asks whether the character after a backslash is whitespace, and after a
    // line-ending backslash asks it of each character up to the first that is not.
    std::optional<TomlTextProblem> after_multi_line_backslash() {
        if (i_ >= text_.size()) return std::nullopt;  // the text ends: toml++ reports it
        if (!ascii_at())
            return here("a backslash before a non-ASCII character, which is not an escape");
        const char c = text_[i_];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            advance(1);  // an ordinary escape such as \n or \u00e9
            return std::nullopt;
        }
        while (i_ < text_.size() &&
               (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\r' || text_[i_] == '\n'))
            advance(1);
        if (!ascii_at())
            return here(
                "a non-ASCII character first after a line-ending backslash; toml++ 3.3 cannot "
                "read it there (upstream issue 190): write it as \\uXXXX or move it up a line");
        return std::nullopt;
    }

    std::string_view text_;
    size_t i_ = 0;
    size_t line_ = 1;
    size_t column_ = 1;
    size_t last_line_ = 1;  // of the last character advanced over
    size_t last_column_ = 1;
    std::optional<UnclosedString> unclosed_;
};

}  // namespace

std::optional<TomlTextProblem> toml_text_problem(std::string_view text) {
    if (const auto bad = first_invalid_utf8(text)) {
        size_t line = 1, column = 1;
        for (size_t k = 0; k < *bad; ++k) {
            const auto byte = static_cast<unsigned char>(text[k]);
            if (byte == '\n') {
                ++line;
                column = 1;
            } else if ((byte & 0xC0) != 0x80) {
                ++column;
            }
        }
        return TomlTextProblem{
            line, column,
            fmt::format("byte 0x{:02x} is not UTF-8 (a config file is UTF-8 text)",
                        static_cast<unsigned char>(text[*bad]))};
    }
    return Scanner(text).run();
}

bool UnclosedString::explains(size_t error_line, size_t error_column) const {
    // At or past where the closing quote was due: before it, toml++ met something else.
    if (!multi_line && !at_end_of_text) return error_line == end_line && error_column >= end_column;
    return error_line > end_line || (error_line == end_line && error_column >= end_column);
}

std::string UnclosedString::describe() const {
    const std::string closing = multi_line ? std::string(3, quote) : std::string(1, quote);
    if (multi_line)
        return fmt::format(
            "the multi-line string that begins at line {}, column {} is not closed: its "
            "closing {} is missing before the end of the file",
            line, column, closing);
    std::string text = fmt::format(
        "the string that begins at column {} is not closed: its closing {} is missing before "
        "the end of the {}",
        column, closing, at_end_of_text ? "file" : "line");
    if (escaped_quote_column > 0)
        text += fmt::format(
            " (the \\\" at column {} is an escaped quote, part of the string; a backslash is "
            "written \\\\, or use 'single quotes', where a backslash is itself)",
            escaped_quote_column);
    return text;
}

std::optional<UnclosedString> first_unclosed_string(std::string_view text) {
    Scanner scanner(text);
    (void)scanner.run();
    return scanner.unclosed();
}

}  // namespace arbiter::host
