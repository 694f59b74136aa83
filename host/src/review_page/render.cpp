#include "review_page/render.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <tuple>

#include <sodium.h>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"
#include "review_page/evidence_text.hpp"
#include "review_page/form.hpp"

namespace arbiter::host::review_page {

using nlohmann::json;

namespace {

std::string when(int64_t unix_seconds) {
    // Year 0 to 9999: a time past either end is not one the store wrote.
    const auto t =
        static_cast<std::time_t>(std::clamp<int64_t>(unix_seconds, -62167219200, 253402300799));
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &tm);
    return text;
}

// A member of a stored object, defaulted when it is missing or of another type: the
// evidence inside was written by plugins, so nothing about its shape is taken for granted.
std::string text_of(const json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}
double number_of(const json& object, const char* key, double fallback = 0) {
    if (!object.is_object()) return fallback;
    const auto found = object.find(key);
    if (found == object.end() || !found->is_number()) return fallback;
    const double value = found->get<double>();
    return std::isfinite(value) ? value : fallback;
}
// A whole number from the store, clamped where a cast would be undefined.
int64_t integer_of(const json& object, const char* key) {
    return static_cast<int64_t>(std::clamp(number_of(object, key), -9e15, 9e15));
}
bool flag_of(const json& object, const char* key) {
    if (!object.is_object()) return false;
    const auto found = object.find(key);
    return found != object.end() && found->is_boolean() && found->get<bool>();
}
const json& array_of(const json& object, const char* key) {
    static const json empty = json::array();
    if (!object.is_object()) return empty;
    const auto found = object.find(key);
    return found != object.end() && found->is_array() ? *found : empty;
}

// The key a match's points are joined under.
std::string match_key(const json& item) {
    return fmt::format("{}\n{}\n{}", text_of(item, "server_id"), text_of(item, "relay_id"),
                       integer_of(item, "match_id"));
}
// Where a match was, for HTML: its server's and relay's names each shown on their own.
std::string html_match_label(const json& item) {
    return fmt::format("{} / {} match {}", html_name(text_of(item, "server_id")),
                       html_name(text_of(item, "relay_id")), integer_of(item, "match_id"));
}

// Coordinates past this are not positions anyone walked to; they would only flatten the plot.
constexpr double kMaxCoordinate = 1e7;
constexpr size_t kMaxPoints = 5000;

struct Point {
    double t_us = -1;  // -1: the evidence gave no time
    double x = 0, y = 0;
};

void collect_points(const json& value, std::vector<Point>& points, int depth) {
    if (depth > 8 || points.size() >= kMaxPoints) return;
    if (value.is_object()) {
        const auto x = value.find("x"), y = value.find("y");
        if (x != value.end() && y != value.end() && x->is_number() && y->is_number()) {
            Point p{number_of(value, "t_us", -1), x->get<double>(), y->get<double>()};
            if (std::isfinite(p.x) && std::isfinite(p.y) && std::abs(p.x) < kMaxCoordinate &&
                std::abs(p.y) < kMaxCoordinate)
                points.push_back(p);
        }
        for (const auto& [key, member] : value.items())
            collect_points(member, points, depth + 1);
    } else if (value.is_array()) {
        for (const auto& member : value)
            collect_points(member, points, depth + 1);
    }
}

// A flag's evidence as a table of entries with their units, the JSON as written behind
// a <details>.
std::string evidence_html(const json& evidence) {
    std::string out = "<table class=\"evidence\"><tbody>";
    for (const auto& [key, value] : evidence_rows(evidence))
        out += fmt::format("<tr><th>{}</th><td>{}</td></tr>", html_escape(key),
                           html_escape(value));
    return out + fmt::format(
                     "</tbody></table><details><summary>JSON</summary><pre>{}</pre></details>",
                     html_escape(dump_json(evidence, 1)));
}

std::string svg_number(double v) {
    return fmt::format("{:.1f}", v);
}

}  // namespace

std::string html_escape(std::string_view text) {
    const std::string valid = to_valid_utf8(text);
    std::string out;
    out.reserve(valid.size());
    for (const char c : valid) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            case '\0':
                out += "\xEF\xBF\xBD";
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
}

std::string html_name(std::string_view text, size_t max_chars) {
    return html_escape(showable_name(text, max_chars));
}

std::string subject_digest(std::string_view subject) {
    unsigned char digest[16];
    crypto_generichash(digest, sizeof digest, reinterpret_cast<const unsigned char*>(subject.data()),
                       subject.size(), nullptr, 0);
    return to_hex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string to_hex(std::string_view bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char c : bytes) {
        out.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
        out.push_back(kHex[static_cast<unsigned char>(c) & 15]);
    }
    return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0) return std::nullopt;
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(hex.size() / 2);
    for (size_t i = 0; i < hex.size(); i += 2) {
        const int high = digit(hex[i]), low = digit(hex[i + 1]);
        if (high < 0 || low < 0) return std::nullopt;
        out.push_back(static_cast<char>(high * 16 + low));
    }
    return out;
}

std::string player_query(std::string_view subject) {
    return "p=" + subject_digest(subject);
}

std::string page(std::string_view title, std::string_view reviewer, std::string_view form_token,
                 std::string_view body) {
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width\">"
        "<title>{} · Arbiter review</title><link rel=\"stylesheet\" href=\"/style.css\">"
        "</head><body><header><a class=\"home\" href=\"/\">Arbiter review</a>",
        html_escape(title));
    if (!reviewer.empty())
        out += fmt::format(
            "<form class=\"logout\" method=\"post\" action=\"/logout\"><span>{}</span>"
            "<input type=\"hidden\" name=\"form_token\" value=\"{}\">"
            "<button type=\"submit\">Log out</button></form>",
            html_name(reviewer), html_escape(form_token));
    out += "</header><main>";
    out += body;
    out += "</main></body></html>\n";
    return out;
}

std::string login_body(std::string_view problem) {
    std::string out = "<h1>Log in</h1>";
    if (!problem.empty()) out += fmt::format("<p class=\"problem\">{}</p>", html_escape(problem));
    out +=
        "<form method=\"post\" action=\"/login\" class=\"login\">"
        "<label>Your name <input name=\"reviewer\" id=\"reviewer\" maxlength=\"200\" required "
        "autocomplete=\"username\"></label>"
        "<label>Token <input name=\"token\" id=\"token\" type=\"password\" required "
        "autocomplete=\"current-password\"></label>"
        "<button type=\"submit\" id=\"login\">Log in</button></form>"
        "<p class=\"hint\">The token is in the file <code>[serve] review_token_file</code> "
        "names. Verdicts are recorded under the name given here.</p>";
    return out;
}

void order_by_action(std::vector<QueueRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const QueueRow& a, const QueueRow& b) {
        return action_rank(a.action) > action_rank(b.action);
    });
}

std::string strongest_action(const json& dossier) {
    std::string strongest;
    for (const auto& m : array_of(dossier, "matches")) {
        const std::string action = text_of(m, "action");
        if (action_rank(action) >= 0 && action_rank(action) > action_rank(strongest))
            strongest = action;
    }
    return strongest;
}

std::string queue_body(const std::vector<QueueRow>& rows, int64_t window_days) {
    std::string out = fmt::format(
        "<h1>Queue</h1><p class=\"hint\">Players with flags nobody has "
        "reviewed in the last {} days: the strongest action first (ShadowRestrict, "
        "FlagForReview, Monitor, Clear), then flagged on several servers, then by severity, "
        "then the most recent.</p>",
        window_days);
    if (rows.empty()) return out + "<p id=\"empty\">The queue is empty.</p>";
    out +=
        "<table id=\"queue\"><thead><tr><th>#</th><th>Player</th><th>Action</th>"
        "<th>Severity</th><th>Flags</th><th>Servers</th><th>Matches</th><th>Trust</th>"
        "<th>Last</th><th>Strongest</th></tr></thead><tbody>";
    size_t rank = 0;
    for (const auto& row : rows) {
        const auto& e = row.entry;
        out += fmt::format(
            "<tr class=\"sev{}\"><td>{}</td><td><a class=\"player\" href=\"/player?{}\">{}"
            "</a></td><td class=\"action act{}\">{}</td><td "
            "class=\"sev\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{}</td>"
            "<td>{}</td></tr>",
            std::clamp(e.max_severity, 0, 4), ++rank, player_query(e.subject), html_name(e.subject),
            std::max(action_rank(row.action), 0),
            row.action.empty() ? std::string("none") : html_name(row.action), e.max_severity,
            e.events, e.servers, e.matches, e.trust, when(e.last_unix),
            html_name(e.top_event_types));
        if (!e.correlation.empty()) {
            out += "<tr class=\"notes\"><td></td><td colspan=\"9\"><ul>";
            for (const auto& note : e.correlation)
                out += fmt::format("<li>{}</li>", html_escape(note));
            out += "</ul></td></tr>";
        }
    }
    return out + "</tbody></table>";
}

std::string path_plot_svg(const json& events) {
    if (!events.is_array()) return "";
    // Each flag's own points, and every point of a match to join them in time order.
    struct Flagged {
        std::string match;
        std::vector<Point> points;
    };
    std::vector<Flagged> flagged;
    std::map<std::string, std::vector<Point>> by_match;
    size_t total = 0;
    for (const auto& event : events) {
        if (!event.is_object()) continue;
        Flagged f{match_key(event), {}};
        collect_points(event.contains("evidence") ? event["evidence"] : json(), f.points, 0);
        if (f.points.empty() || total + f.points.size() > kMaxPoints) continue;
        total += f.points.size();
        std::sort(f.points.begin(), f.points.end(),
                  [](const Point& a, const Point& b) { return a.t_us < b.t_us; });
        auto& all = by_match[f.match];
        all.insert(all.end(), f.points.begin(), f.points.end());
        flagged.push_back(std::move(f));
    }
    if (flagged.empty()) return "";
    double min_x = INFINITY, max_x = -INFINITY, min_y = INFINITY, max_y = -INFINITY;
    for (const auto& f : flagged)
        for (const auto& p : f.points) {
            min_x = std::min(min_x, p.x), max_x = std::max(max_x, p.x);
            min_y = std::min(min_y, p.y), max_y = std::max(max_y, p.y);
        }
    // One scale for both axes, so that distances on the plot are distances walked.
    constexpr double kWidth = 480, kHeight = 320, kMargin = 24;
    const double span = std::max({max_x - min_x, max_y - min_y, 1.0});
    const double scale = std::min(kWidth - 2 * kMargin, kHeight - 2 * kMargin) / span;
    const double off_x = kMargin + ((kWidth - 2 * kMargin) - (max_x - min_x) * scale) / 2;
    const double off_y = kMargin + ((kHeight - 2 * kMargin) - (max_y - min_y) * scale) / 2;
    auto sx = [&](double x) { return svg_number(off_x + (x - min_x) * scale); };
    // The y axis points up, as on a map.
    auto sy = [&](double y) { return svg_number(kHeight - off_y - (y - min_y) * scale); };
    auto polyline = [&](const std::vector<Point>& points, const char* css_class) {
        std::string line = fmt::format("<polyline class=\"{}\" points=\"", css_class);
        for (const auto& p : points)
            line += sx(p.x) + "," + sy(p.y) + " ";
        return line + "\"/>";
    };
    std::string out = fmt::format(
        "<figure><svg id=\"path-plot\" class=\"plot\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
        "height=\"{1}\" role=\"img\" aria-label=\"positions in the evidence\">"
        "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\"/>",
        kWidth, kHeight);
    for (auto& [match, points] : by_match) {
        // Only points with a time can be put in order.
        std::erase_if(points, [](const Point& p) { return p.t_us < 0; });
        std::sort(points.begin(), points.end(),
                  [](const Point& a, const Point& b) { return a.t_us < b.t_us; });
        if (points.size() >= 2) out += polyline(points, "path");
    }
    for (const auto& f : flagged) {
        if (f.points.size() >= 2) out += polyline(f.points, "flagged");
        for (const auto& p : f.points)
            out += fmt::format("<circle class=\"flagged\" cx=\"{}\" cy=\"{}\" r=\"2.5\"/>", sx(p.x),
                               sy(p.y));
    }
    out += fmt::format(
        "<text x=\"4\" y=\"{}\">x {:.1f} to {:.1f} m, y {:.1f} to {:.1f} m</text></svg>"
        "<figcaption>Positions in the evidence of {} flag(s), joined in time order per match; "
        "red: the stretches that were flagged.</figcaption></figure>",
        kHeight - 6, min_x, max_x, min_y, max_y, flagged.size());
    return out;
}

std::string interval_histograms_svg(const json& events) {
    if (!events.is_array()) return "";
    // Per check, the latest flag with intervals in its evidence.
    std::map<std::string, const json*> latest;
    for (const auto& event : events) {
        if (!event.is_object()) continue;
        const json& evidence = event.contains("evidence") ? event["evidence"] : json::object();
        if (array_of(evidence, "intervals_ms").empty()) continue;
        latest[text_of(event, "plugin") + ":" + text_of(event, "event_type")] = &event;
    }
    std::string out;
    for (const auto& [check, event] : latest) {
        std::vector<double> intervals;
        for (const auto& v : array_of((*event)["evidence"], "intervals_ms"))
            if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 &&
                v.get<double>() < 1e9)
                intervals.push_back(v.get<double>());
        if (intervals.empty()) continue;
        const double highest = *std::max_element(intervals.begin(), intervals.end());
        // 40 bins over 0..highest, each a round number of milliseconds where it can be.
        constexpr int kBins = 40;
        double bin_ms = std::max(highest / kBins, 1e-3);
        if (bin_ms >= 1) bin_ms = std::ceil(bin_ms);
        std::vector<int> counts(kBins + 1, 0);
        for (const double v : intervals)
            ++counts[std::min<size_t>(static_cast<size_t>(v / bin_ms), kBins)];
        const int tallest = *std::max_element(counts.begin(), counts.end());
        constexpr double kWidth = 480, kHeight = 160, kBottom = 20;
        const double bar = kWidth / (kBins + 1);
        out += fmt::format(
            "<figure><svg class=\"plot histogram\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
            "height=\"{1}\" role=\"img\" aria-label=\"intervals of {2}\">"
            "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\"/>",
            kWidth, kHeight, html_name(check));
        for (int i = 0; i <= kBins; ++i) {
            if (counts[i] == 0) continue;
            const double h = (kHeight - kBottom - 8) * counts[i] / tallest;
            out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                               svg_number(i * bar + 0.5), svg_number(kHeight - kBottom - h),
                               svg_number(bar - 1), svg_number(h));
        }
        out += fmt::format(
            "<text x=\"4\" y=\"{}\">0 ms</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">"
            "{:.1f} ms</text><text x=\"4\" y=\"14\">{} at most in a {:g} ms bin</text></svg>"
            "<figcaption>{}: {} intervals between inputs in the window of the latest flag "
            "({} at relay time {:.3f} s)</figcaption></figure>",
            kHeight - 5, kWidth - 4, kHeight - 5, highest, tallest, bin_ms, html_name(check),
            intervals.size(), html_match_label(*event),
            number_of(*event, "relay_time_us") / 1e6);
    }
    return out;
}

std::string_view verdict_words(std::string_view verdict) {
    if (verdict == "confirmed") return "Confirmed";
    if (verdict == "false_positive") return "False positive";
    if (verdict == "inconclusive") return "Inconclusive";
    return "";
}

std::string verdict_confirmation_body(std::string_view subject, std::string_view verdict,
                                      std::string_view note, std::string_view form_token) {
    const std::string player = html_name(subject, std::numeric_limits<size_t>::max());
    // The note in a read-only text area, so that it is posted again as the reviewer typed it
    // (the line break after the tag is dropped by the parser, so one is always put there).
    return fmt::format(
        "<h1>Record this verdict?</h1>"
        "<p id=\"confirm-question\">Record <b id=\"confirm-verdict\">{0}</b> on "
        "<b id=\"confirm-player\">{1}</b>? Nothing is recorded until you do.</p>"
        "<form method=\"post\" action=\"/verdict\" class=\"verdict\" id=\"confirm-form\">"
        "<input type=\"hidden\" name=\"p\" value=\"{2}\">"
        "<input type=\"hidden\" name=\"form_token\" value=\"{3}\">"
        "<input type=\"hidden\" name=\"verdict\" value=\"{4}\">"
        "<input type=\"hidden\" name=\"confirm\" value=\"yes\">"
        "<label>Note <textarea name=\"note\" id=\"note\" readonly rows=\"2\">\n{5}"
        "</textarea></label><div class=\"buttons\">"
        "<button type=\"submit\" id=\"record\">Record {0}</button>"
        "<a id=\"back\" href=\"/player?{6}\">Back to the player, nothing recorded</a>"
        "</div></form>",
        html_escape(verdict_words(verdict)), player, subject_digest(subject),
        html_escape(form_token), html_escape(verdict), html_escape(note), player_query(subject));
}

std::string dossier_body(const json& dossier, std::string_view form_token,
                         std::string_view message) {
    const std::string subject = text_of(dossier, "subject");
    // The whole name here, however long: the queue shows it cut.
    std::string out = fmt::format("<h1 id=\"subject\">{}</h1>",
                                  html_name(subject, std::numeric_limits<size_t>::max()));
    if (!message.empty())
        out += fmt::format("<p class=\"message\" id=\"message\">{}</p>", html_escape(message));
    const json& trust = dossier.contains("trust") ? dossier["trust"] : json::object();
    std::string servers;
    for (const auto& s : array_of(dossier, "servers"))
        if (s.is_string())
            servers += (servers.empty() ? "" : ", ") + html_name(s.get<std::string>());
    out += fmt::format(
        "<p>Seen on: {}. Trust score <b id=\"trust\">{:.0f}</b> of 12000 (account age {:.0f} "
        "days, {:.0f} matches, {:.0f} anti-cheat points).</p>",
        servers, number_of(trust, "score"), number_of(trust, "account_age_days"),
        number_of(trust, "rated_games_played"), number_of(trust, "anti_cheat_points"));
    const json& notes = array_of(dossier, "correlation");
    if (!notes.empty()) {
        out += "<ul class=\"notes\">";
        for (const auto& note : notes)
            if (note.is_string())
                out += fmt::format("<li>{}</li>", html_escape(note.get<std::string>()));
        out += "</ul>";
    }
    out += fmt::format(
        "<form method=\"post\" action=\"/verdict\" class=\"verdict\" id=\"verdict-form\">"
        "<input type=\"hidden\" name=\"p\" value=\"{}\">"
        "<input type=\"hidden\" name=\"form_token\" value=\"{}\">"
        "<label>Note <textarea name=\"note\" id=\"note\" maxlength=\"16384\" rows=\"2\">"
        "</textarea></label><div class=\"buttons\">"
        "<button type=\"submit\" name=\"verdict\" value=\"confirmed\" id=\"confirmed\">"
        "Confirmed</button>"
        "<button type=\"submit\" name=\"verdict\" value=\"false_positive\" id=\"false_positive\">"
        "False positive</button>"
        "<button type=\"submit\" name=\"verdict\" value=\"inconclusive\" id=\"inconclusive\">"
        "Inconclusive</button></div></form>",
        subject_digest(subject), html_escape(form_token));

    const json& events = array_of(dossier, "events");
    const std::string plot = path_plot_svg(events), histograms = interval_histograms_svg(events);
    if (!plot.empty() || !histograms.empty()) out += "<h2>Evidence drawn</h2>" + plot + histograms;

    out += fmt::format("<h2>Flags ({})</h2>", events.size());
    if (integer_of(dossier, "events_total") > static_cast<int64_t>(events.size()))
        out += fmt::format(
            "<p class=\"hint\">The latest {} of {}; the older ones are in the "
            "store.</p>",
            events.size(), integer_of(dossier, "events_total"));
    if (!events.empty()) {
        out +=
            "<table id=\"flags\"><thead><tr><th>Recorded</th><th>Where</th><th>After join"
            "</th><th>Check</th><th>Sev</th><th>Score</th><th>Why</th><th>Review</th>"
            "<th>Evidence</th>"
            "</tr></thead><tbody>";
        for (const auto& e : events) {
            const std::string review =
                flag_of(e, "reviewed")
                    ? html_name(text_of(e, "verdict")) + " by " + html_name(text_of(e, "reviewed_by"))
                    : std::string("open");
            out += fmt::format(
                "<tr class=\"sev{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}:{}{}</td><td "
                "class=\"sev\">{}</td>"
                "<td>{:.2f}</td><td class=\"why\">{}</td><td>{}</td><td>{}</td></tr>",
                static_cast<int>(std::clamp<int64_t>(integer_of(e, "severity"), 0, 4)),
                when(integer_of(e, "recorded_unix")), html_match_label(e),
                e.contains("since_join_s") ? fmt::format("{:.1f} s", number_of(e, "since_join_s"))
                                           : std::string("?"),
                html_name(text_of(e, "plugin")), html_name(text_of(e, "event_type")),
                flag_of(e, "tripwire") ? " (trip-wire)" : "", integer_of(e, "severity"),
                number_of(e, "weighted_score"), html_escape(reason_text(e)), review,
                evidence_html(e.contains("evidence") ? e["evidence"] : json()));
        }
        out += "</tbody></table>";
    }

    const json& matches = array_of(dossier, "matches");
    out += fmt::format("<h2>Matches ({})</h2>", matches.size());
    if (!matches.empty()) {
        out +=
            "<table id=\"matches\"><thead><tr><th>Where</th><th>Player</th><th>Action</th>"
            "<th>Combined</th><th>State</th><th>Why</th><th>Assessment</th></tr></thead><tbody>";
        for (const auto& m : matches) {
            // The aggregator's reasons, in its words (at most 20 of them shown).
            const json& assessment = m.contains("assessment") ? m["assessment"] : json();
            std::string reasons;
            size_t shown = 0;
            for (const auto& reason : array_of(assessment, "reasons"))
                if (reason.is_string() && shown++ < 20)
                    reasons += "<li>" + html_escape(to_valid_utf8(reason.get<std::string>(), 400)) +
                               "</li>";
            out += fmt::format(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td>"
                "<td class=\"why\">{}</td><td><details><summary>JSON</summary><pre>{}</pre>"
                "</details></td></tr>",
                html_match_label(m), integer_of(m, "player"), html_name(text_of(m, "action")),
                number_of(m, "combined_score"), flag_of(m, "final") ? "ended" : "match not ended",
                reasons.empty() ? std::string() : "<ul class=\"reasons\">" + reasons + "</ul>",
                html_escape(dump_json(assessment, 1)));
        }
        out += "</tbody></table>";
    }

    const json& verdicts = array_of(dossier, "verdicts");
    out += fmt::format("<h2>Verdicts ({})</h2>", verdicts.size());
    if (!verdicts.empty()) {
        out +=
            "<table id=\"verdicts\"><thead><tr><th>When</th><th>Verdict</th><th>Reviewer"
            "</th><th>Note</th></tr></thead><tbody>";
        for (const auto& v : verdicts)
            out +=
                fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                            when(integer_of(v, "recorded_unix")), html_name(text_of(v, "verdict")),
                            html_name(text_of(v, "reviewer")), html_escape(text_of(v, "note")));
        out += "</tbody></table>";
    }
    return out;
}

const std::string_view kStyleSheet = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1b1f23; background: #fafbfc; }
header { display: flex; justify-content: space-between; align-items: center;
         padding: 8px 16px; background: #24292e; color: #fff; }
header a.home { color: #fff; font-weight: 600; text-decoration: none; }
header form.logout span { margin-right: 8px; }
main { padding: 8px 16px 32px; max-width: 1200px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 24px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid #e1e4e8; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #f1f3f5; }
tr.sev4 td.sev { color: #b31d28; font-weight: 600; }
tr.sev3 td.sev { color: #d15704; font-weight: 600; }
tr.notes td { border-bottom: 1px solid #e1e4e8; color: #586069; }
tr.notes ul { margin: 0; padding-left: 18px; }
td.why { min-width: 180px; }
table.evidence { width: auto; font-size: 12px; }
table.evidence th, table.evidence td { padding: 1px 6px 1px 0; border-bottom: none; background: none; }
table.evidence th { font-weight: normal; color: #586069; white-space: nowrap; }
table.evidence td { word-break: break-word; }
pre { white-space: pre-wrap; word-break: break-all; max-width: 520px; margin: 4px 0; font-size: 12px; }
.hint { color: #586069; }
a.player, h1#subject { word-break: break-all; }
.problem { color: #b31d28; font-weight: 600; }
.message { background: #e6ffed; border: 1px solid #34d058; padding: 6px 10px; }
form.login label, form.verdict label { display: block; margin: 8px 0; }
form.login input { display: block; width: 280px; padding: 4px; }
form.verdict textarea { display: block; width: 100%; max-width: 640px; }
form.verdict .buttons button { margin-right: 8px; padding: 4px 12px; }
figure { display: inline-block; margin: 0 16px 12px 0; vertical-align: top; }
figcaption { color: #586069; font-size: 12px; max-width: 480px; }
svg.plot { background: #fff; }
svg.plot rect.frame { fill: none; stroke: #d1d5da; }
svg.plot polyline.path { fill: none; stroke: #959da5; stroke-width: 1; }
svg.plot polyline.flagged { fill: none; stroke: #d73a49; stroke-width: 2; }
svg.plot circle.flagged { fill: #d73a49; }
svg.plot rect.bar { fill: #0366d6; }
svg.plot text { font-size: 11px; fill: #586069; }
td.action.act3 { color: #b31d28; font-weight: 600; }
td.action.act2 { color: #d15704; font-weight: 600; }
ul.reasons { margin: 0; padding-left: 16px; }
@media (max-width: 700px) {
  main { padding: 8px; }
  table#queue, table#matches, table#verdicts { display: block; overflow-x: auto; }
  /* A flag per block, its reason in full width: the reason is what a reviewer reads. */
  table#flags, table#flags > tbody, table#flags > tbody > tr,
  table#flags > tbody > tr > td { display: block; }
  table#flags > thead { display: none; }
  table#flags > tbody > tr { border-bottom: 2px solid #d1d5da; padding: 4px 0; }
  table#flags > tbody > tr > td { border: none; padding: 1px 0; }
  table#flags > tbody > tr > td.why { font-weight: 600; }
  figure, svg.plot { max-width: 100%; height: auto; }
}
)css";

}  // namespace arbiter::host::review_page
