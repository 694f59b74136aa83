// The review page's HTML: the layout, the queue, a dossier, and the drawings of evidence
// (a player's positions on a plot, input intervals as histograms) as inline SVG. Every
// string from the store (accounts, evidence written by plugins, notes) is escaped here;
// nothing else builds markup.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host::review_page {

// `text` fit for HTML text and attribute values; bytes that are not UTF-8 become U+FFFD.
// For text where line breaks belong (notes, evidence written out).
std::string html_escape(std::string_view text);
// A name (an account, a server, a check) for HTML, shown as a terminal shows it
// (showable_name: escaped, look-alikes marked, cut past `max_chars` characters), so that
// two names that differ never look alike and a long one cannot stretch a table.
std::string html_name(std::string_view text, size_t max_chars = kShownNameChars);

// The player `subject` as a page's query: `p=` and subject_digest, a short id the site
// resolves to the subject (ReviewSite), so that a link stays short however long the
// account a relay sent. `id=` (the subject's bytes in hex) and `subject=` (text) are read
// too, for links typed by hand.
std::string player_query(std::string_view subject);
// 32 hex digits: a 128-bit BLAKE2b hash of `subject`'s bytes.
std::string subject_digest(std::string_view subject);
std::string to_hex(std::string_view bytes);
// nullopt for text that is not an even number of hex digits.
std::optional<std::string> from_hex(std::string_view hex);

// A whole page: the header (with the reviewer and a log-out button when `reviewer` is not
// empty), then `body`.
std::string page(std::string_view title, std::string_view reviewer, std::string_view form_token,
                 std::string_view body);

std::string login_body(std::string_view problem);
// A queue line and the strongest action of the player's latest assessments ("" for none).
struct QueueRow {
    ReviewStore::QueueEntry entry;
    std::string action;
};
// The store's order (several servers, severity, recency) kept within each action, the
// strongest action first: a player the aggregator flagged for review comes before one it
// only monitors, whatever their flags' severities.
void order_by_action(std::vector<QueueRow>& rows);
std::string queue_body(const std::vector<QueueRow>& rows, int64_t window_days);
// The strongest action among a dossier's matches ("" when it has none).
std::string strongest_action(const nlohmann::json& dossier);
// `dossier` is ReviewStore::dossier()'s JSON.
std::string dossier_body(const nlohmann::json& dossier, std::string_view form_token,
                         std::string_view message);

// The verdicts a reviewer may record, and their words on the page ("" for another).
std::string_view verdict_words(std::string_view verdict);
// The step between a verdict's button and its record: the choice, the player and the note
// repeated, with a button that records it (the same form, `confirm=yes` added) and a way
// back that records nothing.
std::string verdict_confirmation_body(std::string_view subject, std::string_view verdict,
                                      std::string_view note, std::string_view form_token);

// The positions found in a dossier's evidence (objects with numeric x and y), joined in
// time order per match, flagged stretches in red; "" when there are none.
std::string path_plot_svg(const nlohmann::json& events);
// A histogram per check of the intervals in its evidence (`intervals_ms` arrays); "" when
// there are none.
std::string interval_histograms_svg(const nlohmann::json& events);

extern const std::string_view kStyleSheet;

}  // namespace arbiter::host::review_page
