#include "arbiter/tools/trace_rows.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"

#include "arbiter/tools/parse.hpp"

namespace arbiter::tools {

namespace {

// Times beyond this are refused: no recording lasts 30 years, and the microseconds of a
// larger time would not fit the schema's int64 comfortably.
constexpr double kMaxSeconds = 1e9;

bool is_known_column(std::string_view name) {
    for (const char* column : kRequiredColumns)
        if (name == column) return true;
    for (const char* column : kOptionalColumns)
        if (name == column) return true;
    return false;
}

std::string known_columns() {
    std::string out;
    for (const char* column : kRequiredColumns)
        out += std::string(out.empty() ? "" : ", ") + column;
    for (const char* column : kOptionalColumns)
        out += std::string(", ") + column;
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return text;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

std::string show(std::string_view text) {
    // Escaped: the text is the operator's file, and may hold anything.
    return "'" + host::escape_for_message(text, 40) + "'";
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// The checks every row passes whatever its format; returns the problem, or "".
std::string check_row(const TraceRow& row) {
    for (auto [name, value] :
         {std::pair{"source", &row.source}, std::pair{"game", &row.game},
          std::pair{"player", &row.player}, std::pair{"action_kind", &row.action_kind}})
        if (value->empty()) return std::string(name) + " is empty";
    if (!std::isfinite(row.t_seconds)) return "t_seconds is not finite";
    if (row.t_seconds < 0) return "t_seconds is negative (" + std::to_string(row.t_seconds) + ")";
    if (row.t_seconds > kMaxSeconds) return "t_seconds is over 1e9 s";
    if (row.x.has_value() != row.y.has_value()) return row.x ? "x without y" : "y without x";
    if (row.z && !row.x) return "z without x and y";
    if (row.target_x.has_value() != row.target_y.has_value())
        return row.target_x ? "target_x without target_y" : "target_y without target_x";
    if (row.target_z && !row.target_x) return "target_z without target_x and target_y";
    if (row.action_kind == "position" && !row.x) return "a position row needs x and y";
    if (row.yaw.has_value() != row.pitch.has_value())
        return row.yaw ? "yaw without pitch" : "pitch without yaw";
    if (row.yaw && std::fabs(*row.yaw) > kMaxYawRadians)
        return "yaw " + number(*row.yaw) + " is beyond +-1e6 radians";
    constexpr double kHalfPi = 1.5707963267948966;
    if (row.pitch && std::fabs(*row.pitch) > kHalfPi + 1e-6)
        return "pitch " + number(*row.pitch) +
               " is outside [-pi/2, pi/2] radians (degrees are not radians)";
    if (row.aim_x.has_value() != row.aim_y.has_value())
        return row.aim_x ? "aim_x without aim_y" : "aim_y without aim_x";
    for (auto [name, value] : {std::pair{"aim_x", &row.aim_x}, std::pair{"aim_y", &row.aim_y}})
        if (*value && std::fabs(**value) > kMaxAimUnits)
            return std::string(name) + " " + number(**value) +
                   " is beyond +-1e7 (the game's units)";
    if (row.aim_relative && !row.aim_x) return "aim_relative without aim_x and aim_y";
    return "";
}

// ---- CSV ------------------------------------------------------------------------------

// Splits one line into fields (RFC 4180 quoting within the line). Returns false with a
// problem when a quote is not closed or text follows a closing quote.
bool split_csv(std::string_view line, std::vector<std::string>& fields, std::string& problem) {
    fields.clear();
    size_t i = 0;
    while (true) {
        std::string field;
        if (i < line.size() && line[i] == '"') {
            ++i;
            bool closed = false;
            while (i < line.size()) {
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    closed = true;
                    ++i;
                    break;
                }
                field += line[i++];
            }
            if (!closed) {
                problem = "a quoted field is not closed on its line (field " +
                          std::to_string(fields.size() + 1) + ")";
                return false;
            }
            if (i < line.size() && line[i] != ',') {
                problem =
                    "text after the closing quote of field " + std::to_string(fields.size() + 1);
                return false;
            }
        } else {
            size_t end = line.find(',', i);
            if (end == std::string_view::npos) end = line.size();
            field.assign(line.substr(i, end - i));
            i = end;
        }
        fields.push_back(std::move(field));
        if (i >= line.size()) break;
        ++i;  // the comma
        if (i == line.size()) {
            fields.emplace_back();
            break;
        }
    }
    return true;
}

class CsvReader {
  public:
    CsvReader(TraceReadResult& result, OnBadRow on_bad_row)
        : result_(result), on_bad_row_(on_bad_row) {}

    void read(std::string_view text) {
        if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
        uint64_t line_number = 0;
        bool have_header = false;
        size_t start = 0;
        while (start < text.size()) {
            size_t end = text.find('\n', start);
            if (end == std::string_view::npos) end = text.size();
            std::string_view line = text.substr(start, end - start);
            start = end + 1;
            ++line_number;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (trim(line).empty()) continue;
            if (!have_header) {
                if (!header(line, line_number)) return;
                have_header = true;
                continue;
            }
            ++result_.rows_seen;
            if (!row(line, line_number) && on_bad_row_ == OnBadRow::stop) return;
        }
        if (!have_header)
            fail(0, "the file is empty: a CSV trace begins with a header line naming its columns");
    }

  private:
    void fail(uint64_t line, std::string what) {
        result_.problems.push_back({line, std::move(what)});
        result_.fatal = true;
    }

    bool header(std::string_view line, uint64_t line_number) {
        std::vector<std::string> fields;
        std::string problem;
        if (!split_csv(line, fields, problem)) {
            fail(line_number, "header: " + problem);
            return false;
        }
        for (size_t i = 0; i < fields.size(); ++i) {
            std::string name(trim(fields[i]));
            if (!is_known_column(name)) {
                fail(line_number, "unknown column " + show(name) +
                                      " (the columns are: " + known_columns() + ")");
                return false;
            }
            if (!columns_.emplace(name, i).second) {
                fail(line_number, "column " + show(name) + " appears twice");
                return false;
            }
        }
        for (const char* required : kRequiredColumns) {
            if (!columns_.count(required)) {
                fail(line_number, std::string("no '") + required +
                                      "' column (required: source, game, player, "
                                      "t_seconds, action_kind)");
                return false;
            }
        }
        width_ = fields.size();
        return true;
    }

    bool row(std::string_view line, uint64_t line_number) {
        std::string problem;
        if (!split_csv(line, fields_, problem)) return bad(line_number, problem);
        if (fields_.size() != width_)
            return bad(line_number, "has " + std::to_string(fields_.size()) +
                                        " field(s), the header has " + std::to_string(width_));
        TraceRow r;
        r.line = line_number;
        r.source = cell("source");
        r.game = cell("game");
        r.player = cell("player");
        r.action_kind = cell("action_kind");
        {
            std::string_view t = trim(cell("t_seconds"));
            if (t.empty()) return bad(line_number, "t_seconds is empty");
            auto value = parse_double(t);
            if (!value) return bad(line_number, "t_seconds " + show(t) + " is not a number");
            r.t_seconds = *value;
        }
        for (auto [name, slot] :
             {std::pair{"x", &r.x}, std::pair{"y", &r.y}, std::pair{"z", &r.z},
              std::pair{"target_x", &r.target_x}, std::pair{"target_y", &r.target_y},
              std::pair{"target_z", &r.target_z}, std::pair{"yaw", &r.yaw},
              std::pair{"pitch", &r.pitch}, std::pair{"aim_x", &r.aim_x},
              std::pair{"aim_y", &r.aim_y}}) {
            std::string_view v = trim(cell(name));
            if (v.empty()) continue;
            auto value = parse_finite(v);
            if (!value)
                return bad(line_number,
                           std::string(name) + " " + show(v) + " is not a finite number");
            *slot = *value;
        }
        for (auto [name, slot] :
             {std::pair{"tick", &r.tick}, std::pair{"claimed_tick", &r.claimed_tick}}) {
            std::string_view v = trim(cell(name));
            if (v.empty()) continue;
            auto value = parse_u64(v);
            if (!value)
                return bad(line_number,
                           std::string(name) + " " + show(v) + " is not a non-negative integer");
            *slot = *value;
        }
        for (auto [name, slot] :
             {std::pair{"repeat", &r.repeat}, std::pair{"aim_relative", &r.aim_relative}}) {
            std::string_view v = trim(cell(name));
            if (v.empty()) continue;
            std::string l = lower(v);
            if (l == "true" || l == "1" || l == "yes") {
                *slot = true;
            } else if (l == "false" || l == "0" || l == "no") {
                *slot = false;
            } else {
                return bad(line_number,
                           std::string(name) + " " + show(v) + " is not true or false");
            }
        }
        if (std::string v = cell("target_player"); !v.empty()) r.target_player = v;
        if (std::string v = cell("profile"); !v.empty()) r.profile = v;
        if (auto issue = check_row(r); !issue.empty()) return bad(line_number, issue);
        result_.rows.push_back(std::move(r));
        return true;
    }

    // The row's field of a column, or "" for a column the file does not have. A
    // reference into the row: trim() and the parsers may keep views of it.
    const std::string& cell(const char* name) const {
        static const std::string kAbsent;
        auto it = columns_.find(name);
        return it == columns_.end() ? kAbsent : fields_[it->second];
    }

    bool bad(uint64_t line, std::string what) {
        result_.problems.push_back({line, std::move(what)});
        return false;
    }

    TraceReadResult& result_;
    OnBadRow on_bad_row_;
    std::map<std::string, size_t, std::less<>> columns_;
    size_t width_ = 0;
    std::vector<std::string> fields_;
};

// ---- JSON Lines -----------------------------------------------------------------------

// A row is a flat object of a dozen short fields; a line far longer is not a row.
constexpr size_t kMaxJsonLineBytes = 64 * 1024;

const char* json_type(const nlohmann::json& value) {
    return value.type_name();
}

// The problem with one JSON object, or "" with the row filled in.
std::string json_row(const nlohmann::json& object, TraceRow& r) {
    if (!object.is_object()) return std::string("not a JSON object but ") + json_type(object);
    for (const auto& [key, value] : object.items())
        if (!is_known_column(key))
            return "unknown key " + show(key) + " (the keys are: " + known_columns() + ")";

    auto text = [&](const char* key, std::string& out, bool integers_too) -> std::string {
        auto it = object.find(key);
        if (it == object.end() || it->is_null()) return std::string("no '") + key + "'";
        if (it->is_string()) {
            out = it->get<std::string>();
        } else if (integers_too && it->is_number_integer()) {
            out = it->dump();
        } else {
            return std::string(key) + " is " + json_type(*it) + ", not a string";
        }
        return "";
    };
    for (auto [key, slot, ints] :
         {std::tuple{"source", &r.source, false}, std::tuple{"game", &r.game, false},
          std::tuple{"player", &r.player, true}, std::tuple{"action_kind", &r.action_kind, false}})
        if (auto issue = text(key, *slot, ints); !issue.empty()) return issue;

    auto t = object.find("t_seconds");
    if (t == object.end() || t->is_null()) return "no 't_seconds'";
    if (!t->is_number()) return std::string("t_seconds is ") + json_type(*t) + ", not a number";
    r.t_seconds = t->get<double>();

    for (auto [key, slot] : {std::pair{"x", &r.x}, std::pair{"y", &r.y}, std::pair{"z", &r.z},
                             std::pair{"target_x", &r.target_x}, std::pair{"target_y", &r.target_y},
                             std::pair{"target_z", &r.target_z}, std::pair{"yaw", &r.yaw},
                             std::pair{"pitch", &r.pitch}, std::pair{"aim_x", &r.aim_x},
                             std::pair{"aim_y", &r.aim_y}}) {
        auto it = object.find(key);
        if (it == object.end() || it->is_null()) continue;
        if (!it->is_number()) return std::string(key) + " is " + json_type(*it) + ", not a number";
        double value = it->get<double>();
        if (!std::isfinite(value)) return std::string(key) + " is not finite";
        *slot = value;
    }
    for (auto [key, slot] :
         {std::pair{"tick", &r.tick}, std::pair{"claimed_tick", &r.claimed_tick}}) {
        auto it = object.find(key);
        if (it == object.end() || it->is_null()) continue;
        if (it->is_number_unsigned()) {
            *slot = it->get<uint64_t>();
        } else {
            // Only a number is quoted: dump() of a hostile array or object recurses as deep
            // as it nests (80,000 levels crashed the import on b9b94b3).
            return it->is_number() ? std::string(key) + " " + show(host::dump_json(*it)) +
                                         " is not a non-negative integer"
                                   : std::string(key) + " is " + json_type(*it) +
                                         ", not a non-negative integer";
        }
    }
    for (auto [key, slot] :
         {std::pair{"repeat", &r.repeat}, std::pair{"aim_relative", &r.aim_relative}}) {
        auto it = object.find(key);
        if (it == object.end() || it->is_null()) continue;
        if (!it->is_boolean())
            return std::string(key) + " is " + json_type(*it) + ", not true or false";
        *slot = it->get<bool>();
    }
    if (auto it = object.find("target_player"); it != object.end() && !it->is_null()) {
        std::string value;
        if (auto issue = text("target_player", value, true); !issue.empty()) return issue;
        if (!value.empty()) r.target_player = value;
    }
    if (auto it = object.find("profile"); it != object.end() && !it->is_null()) {
        std::string value;
        if (auto issue = text("profile", value, false); !issue.empty()) return issue;
        if (!value.empty()) r.profile = value;
    }
    return check_row(r);
}

void read_jsonl(std::string_view text, TraceReadResult& result, OnBadRow on_bad_row) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    uint64_t line_number = 0;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        ++result.rows_seen;
        std::string problem;
        TraceRow r;
        r.line = line_number;
        const auto parsed = host::parse_untrusted_json(line, kMaxJsonLineBytes);
        problem = parsed.ok() ? json_row(parsed.value, r) : "not valid JSON: " + parsed.problem;
        if (!problem.empty()) {
            result.problems.push_back({line_number, std::move(problem)});
            if (on_bad_row == OnBadRow::stop) return;
            continue;
        }
        result.rows.push_back(std::move(r));
    }
}

}  // namespace

const char* to_string(TraceFormat format) {
    return format == TraceFormat::csv ? "csv" : "jsonl";
}

std::optional<TraceFormat> trace_format_from_name(std::string_view name) {
    std::string l = lower(name);
    if (l == "csv") return TraceFormat::csv;
    if (l == "jsonl" || l == "ndjson") return TraceFormat::jsonl;
    return std::nullopt;
}

std::optional<TraceFormat> trace_format_from_path(const std::filesystem::path& path) {
    std::string extension = path.extension().string();
    if (extension.empty()) return std::nullopt;
    return trace_format_from_name(std::string_view(extension).substr(1));
}

std::string RowProblem::str(const std::string& file) const {
    if (line == 0) return file + ": " + what;
    return file + ":" + std::to_string(line) + ": " + what;
}

TraceReadResult parse_trace_rows(std::string_view text, TraceFormat format, OnBadRow on_bad_row) {
    TraceReadResult result;
    if (format == TraceFormat::csv) {
        CsvReader(result, on_bad_row).read(text);
    } else {
        read_jsonl(text, result, on_bad_row);
    }
    return result;
}

TraceReadResult read_trace_rows(const std::filesystem::path& path, TraceFormat format,
                                OnBadRow on_bad_row) {
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
        TraceReadResult result;
        result.fatal = true;
        result.problems.push_back({0, "cannot read: is a directory"});
        return result;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        TraceReadResult result;
        result.fatal = true;
        result.problems.push_back({0, std::string("cannot read: ") + std::strerror(errno)});
        return result;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        TraceReadResult result;
        result.fatal = true;
        result.problems.push_back({0, "cannot read: an I/O error"});
        return result;
    }
    return parse_trace_rows(text, format, on_bad_row);
}

}  // namespace arbiter::tools
