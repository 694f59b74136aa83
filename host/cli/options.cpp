#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "arbiter/host/suggest.hpp"

namespace arbiter::cli {

std::string read_whole_number(std::string_view name, const std::string& value, uint64_t min,
                              uint64_t max, uint64_t& out) {
    constexpr uint64_t kMost = std::numeric_limits<uint64_t>::max();
    // The range said the way a reader would say it: "from 1 to 100", not "to 2^64 - 1".
    std::string wanted = max == kMost && min == 0   ? "a non-negative integer"
                         : max == kMost && min == 1 ? "a positive integer"
                         : max == kMost ? "a whole number of at least " + std::to_string(min)
                                        : "a whole number from " + std::to_string(min) + " to " +
                                              std::to_string(max);
    const std::string shown = std::string(name) + " '" + value + "'";
    std::string_view digits = value;
    if (digits.starts_with('+')) digits.remove_prefix(1);
    uint64_t number = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (digits.empty() || end != digits.data() + digits.size() ||
        (error != std::errc() && error != std::errc::result_out_of_range))
        return shown + " is not " + wanted;
    // Digits alone, but more than 64 bits hold: too large, not malformed.
    if (error == std::errc::result_out_of_range || number > max)
        return shown + " is too large: " + std::string(name) + " takes " + wanted;
    if (number < min) return shown + " is too small: " + std::string(name) + " takes " + wanted;
    out = number;
    return "";
}

OptionReader::OptionReader(std::string command, std::string usage)
    : command_(std::move(command)), usage_(std::move(usage)) {}

void OptionReader::flag(std::string name, bool& on) {
    options_.push_back(Option{std::move(name), &on, nullptr, "", true});
}

void OptionReader::value(std::string name, ValueReader read, std::string hint, bool repeatable) {
    options_.push_back(
        Option{std::move(name), nullptr, std::move(read), std::move(hint), repeatable});
}

void OptionReader::number(std::string name, double& target) {
    value(name, [&target, name](const std::string& given) {
        std::string_view text = given;
        if (text.starts_with('+')) text.remove_prefix(1);
        double number = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
        if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
            !std::isfinite(number))
            return name + " '" + given + "' is not a number";
        target = number;
        return std::string();
    });
}

const OptionReader::Option* OptionReader::find(std::string_view name) const {
    for (const Option& option : options_)
        if (option.name == name) return &option;
    return nullptr;
}

bool OptionReader::given(std::string_view name) const {
    for (const auto& option : given_)
        if (option == name) return true;
    return false;
}

std::string OptionReader::unknown(const std::string& arg) const {
    std::vector<std::string> names;
    for (const Option& option : options_)
        names.push_back(option.name);
    // --seed=5: the name is right, the value belongs after a space.
    if (const size_t equals = arg.find('='); equals != std::string::npos) {
        const std::string name = arg.substr(0, equals);
        if (find(name))
            return "unknown option " + arg + " (the value goes after a space: " + name + " " +
                   arg.substr(equals + 1) + ")";
    }
    return "unknown option " + arg + unknown_note_ + host::did_you_mean(arg, names);
}

bool OptionReader::read(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (!arg.starts_with("--")) {
            positional_.push_back(arg);
            continue;
        }
        const Option* option = find(arg);
        if (!option) {
            complain(unknown(arg));
            return false;
        }
        const bool again = given(arg);
        if (!again) given_.push_back(arg);
        if (option->on) {
            *option->on = true;
            continue;
        }
        if (i + 1 == args.size()) {
            complain(arg + " needs a value" +
                     (option->hint.empty() ? "" : " (" + option->hint + ")"));
            return false;
        }
        // The last of two would win unseen: a script that repeats an option has a mistake.
        if (again && !option->repeatable) {
            complain(arg + " is given twice; give it once");
            return false;
        }
        if (std::string problem = option->read(args[++i]); !problem.empty()) {
            complain(problem);
            return false;
        }
    }
    return true;
}

void OptionReader::complain(std::string_view what) {
    problem_ = what;
    std::fprintf(stderr, "arbiter %s: %s\n%s", command_.c_str(), problem_.c_str(), usage_.c_str());
}

std::string OptionReader::listed(const std::vector<std::string>& words, std::string_view last) {
    std::string text;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0) text += i + 1 == words.size() ? " " + std::string(last) + " " : ", ";
        text += words[i];
    }
    return text;
}

std::string OptionReader::not_one_of(std::string_view name, std::string_view given,
                                     const std::vector<std::string>& words) {
    const std::string shown = std::string(name) + " '" + std::string(given) + "'";
    const std::string suggestion = host::did_you_mean(given, words);
    if (words.size() == 2) return shown + " is neither " + listed(words, "nor") + suggestion;
    return shown + " is not one of " + listed(words, "or") + suggestion;
}

}  // namespace arbiter::cli
