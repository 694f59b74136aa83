// The options of an `arbiter` command, read one way for every command. Each option is
// declared once with what its value must be; every mistake on the command line (an unknown
// option, a missing value, a value that is not what the option takes, an option given
// twice) is said the same way: "arbiter COMMAND: what", then the command's usage.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbiter::cli {

// "" when `value` is taken, else what is wrong with it ("--seed 'x' is not ...").
using ValueReader = std::function<std::string(const std::string& value)>;

// The problem with `value` as a whole number from `min` to `max` for option `name`, or ""
// with the number in `out`. Digits alone (a leading '+' allowed), in the C locale.
std::string read_whole_number(std::string_view name, const std::string& value, uint64_t min,
                              uint64_t max, uint64_t& out);

class OptionReader {
  public:
    OptionReader(std::string command, std::string usage);

    // An option without a value; given twice, it is still on.
    void flag(std::string name, bool& on);
    // An option with one value, read by `read`. Given twice it is refused, unless
    // `repeatable`: then each value is read in turn. `hint` follows "needs a value".
    void value(std::string name, ValueReader read, std::string hint = "", bool repeatable = false);

    // Text as it is, into anything a string assigns to: a string, an optional, a path.
    template <class Target>
    void text(std::string name, Target& target, std::string hint = "") {
        value(
            std::move(name),
            [&target](const std::string& given) {
                target = given;
                return std::string();
            },
            std::move(hint));
    }
    // Text that must not be empty: "--relay needs a name".
    template <class Target>
    void nonempty(std::string option, Target& target) {
        value(option, [&target, option](const std::string& given) {
            if (given.empty()) return option + " needs a name";
            target = given;
            return std::string();
        });
    }
    // Given as often as wanted; each value is appended.
    template <class Element>
    void texts(std::string name, std::vector<Element>& targets) {
        value(
            std::move(name),
            [&targets](const std::string& given) {
                targets.emplace_back(given);
                return std::string();
            },
            "", true);
    }
    // A whole number from `min` to `max` (by default every value the target can hold).
    template <std::integral Number>
    void whole(std::string name, Number& target, uint64_t min = 0,
               uint64_t max = static_cast<uint64_t>(std::numeric_limits<Number>::max())) {
        value(name, [&target, name, min, max](const std::string& given) {
            uint64_t number = 0;
            std::string problem = read_whole_number(name, given, min, max, number);
            if (problem.empty()) target = static_cast<Number>(number);
            return problem;
        });
    }
    // A finite number (a decimal, in the C locale).
    void number(std::string name, double& target);
    // One of a few words, each with what it sets the target to.
    template <class Target, class Value>
    void choice(std::string name, Target& target,
                std::vector<std::pair<std::string, Value>> words) {
        std::vector<std::string> spelled;
        for (const auto& word : words)
            spelled.push_back(word.first);
        value(
            name,
            [&target, name, words, spelled](const std::string& given) {
                for (const auto& [word, meaning] : words)
                    if (given == word) {
                        target = meaning;
                        return std::string();
                    }
                return not_one_of(name, given, spelled);
            },
            spelled.size() == 2 ? listed(spelled, "or") : "one of " + listed(spelled, "or"));
    }

    // Said after "unknown option X" (" (for replays)"), before any "did you mean".
    void set_unknown_note(std::string note) { unknown_note_ = std::move(note); }

    // Reads `args`: an argument beginning with "--" is an option, the next argument its
    // value when it takes one (even one beginning with "--", which may be a note's text);
    // the rest are positionals, in order. False on the first mistake, said on stderr.
    bool read(const std::vector<std::string>& args);

    const std::vector<std::string>& positional() const { return positional_; }
    bool given(std::string_view name) const;
    // The options given, each once, in the order they were first given.
    const std::vector<std::string>& given_options() const { return given_; }
    // The mistake `read` found ("" when none): what was said on stderr before the usage.
    const std::string& problem() const { return problem_; }

    // "arbiter COMMAND: what" and the usage on stderr, for the command's own checks too.
    void complain(std::string_view what);
    // complain, for a parse function that returns an optional.
    std::nullopt_t fail(std::string_view what) {
        complain(what);
        return std::nullopt;
    }

    // "--x 'v' is neither a nor b" / "is not one of a, b or c", with a "did you mean".
    static std::string not_one_of(std::string_view name, std::string_view given,
                                  const std::vector<std::string>& words);
    // "a", "a or b", "a, b or c" (with `last` for "or").
    static std::string listed(const std::vector<std::string>& words, std::string_view last);

  private:
    struct Option {
        std::string name;
        bool* on = nullptr;  // a flag's; null for an option with a value
        ValueReader read;
        std::string hint;
        bool repeatable = false;
    };
    const Option* find(std::string_view name) const;
    std::string unknown(const std::string& arg) const;

    std::string command_, usage_, unknown_note_, problem_;
    std::vector<Option> options_;
    std::vector<std::string> positional_, given_;
};

}  // namespace arbiter::cli
