// The review page without a browser: what each request is answered, with hostile ones
// (no session, another session's form, broken escapes, text that is not UTF-8, markup in
// an account or in evidence), the evidence drawings, and the HTTP transport's bounds over
// a real socket. The browser test is tests/review_page_test.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/untrusted_text.hpp"
#include "store/store.hpp"
#include "review_page/evidence_text.hpp"
#include "review_page/form.hpp"
#include "review_page/http_server.hpp"
#include "review_page/login_throttle.hpp"
#include "review_page/render.hpp"
#include "review_page/site.hpp"
#include "wire/sockets.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::host::review_page {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kToken = "0123456789abcdef-token";

SignalRecord flag(uint32_t player, const std::string& account, std::string evidence) {
    SignalRecord signal;
    signal.plugin = "reference";
    signal.code = "movement.speed";
    signal.player = {"relay-a", 1, player};
    signal.score = 0.9;
    signal.confidence = 1.0;
    signal.evidence_json = std::move(evidence);
    signal.reported_at_us = 5'000'000;
    signal.account = account;
    signal.player_first_seen_us = 1'000'000;
    return signal;
}

class ReviewSiteTest : public ::testing::Test {
  protected:
    void SetUp() override {
        settings_.path = (dir_ / "review.db").string();
        {
            StoreSink sink(settings_, "server-one", 0.3, 0.7);
            sink.on_signal(flag(1, "mallory",
                                R"({"from":{"t_us":1000000,"x":1.5,"y":2},"to":{"t_us":2000000,)"
                                R"("x":40,"y":-3}})"));
            sink.on_signal(flag(2, "<script>alert(1)</script>",
                                R"({"note":"</pre><img src=x>","intervals_ms":[100,101,99.5]})"));
            sink.flush();
        }
        site_ = std::make_unique<ReviewSite>(settings_, kToken);
    }

    Response get(const std::string& target) {
        return site_->handle({"GET", target, cookie_, "", "", "test"});
    }
    Response post(const std::string& target, const std::string& body) {
        return site_->handle(
            {"POST", target, cookie_, "application/x-www-form-urlencoded", body, "test"});
    }
    static std::string header(const Response& r, const std::string& name) {
        for (const auto& [key, value] : r.headers)
            if (key == name) return value;
        return "";
    }
    // Logs in as `reviewer` (letters only: it goes into the form as it is); keeps the
    // session cookie and returns the form token.
    std::string log_in(const std::string& reviewer = "alice") {
        const Response r = post("/login", "reviewer=" + reviewer + "&token=" + kToken);
        EXPECT_EQ(r.status, 303) << r.body;
        const std::string set = header(r, "Set-Cookie");
        EXPECT_THAT(set, HasSubstr("HttpOnly"));
        EXPECT_THAT(set, HasSubstr("SameSite=Strict"));
        cookie_ = set.substr(0, set.find(';'));
        std::smatch found;
        const std::string page = get("/").body;
        EXPECT_TRUE(std::regex_search(page, found,
                                      std::regex("name=\"form_token\" value=\"([0-9a-f]+)\"")));
        return found[1];
    }

    test::TempDir dir_;
    StoreSettings settings_;
    std::unique_ptr<ReviewSite> site_;
    std::string cookie_;
};

TEST_F(ReviewSiteTest, WithoutASessionEveryPageLeadsToTheLoginAndAWrongTokenIsRefused) {
    EXPECT_EQ(get("/").status, 303);
    EXPECT_EQ(header(get("/player?subject=mallory"), "Location"), "/login");
    EXPECT_EQ(post("/verdict", "subject=mallory&verdict=confirmed").status, 401);
    EXPECT_EQ(get("/login").status, 200);
    EXPECT_EQ(post("/login", std::string("reviewer=alice&token=") + kToken + "x").status, 403);
    EXPECT_EQ(post("/login", "reviewer=alice&token=").status, 403);
    EXPECT_EQ(post("/login", std::string("reviewer=&token=") + kToken).status, 400);
    // A cookie nobody was given is no session.
    cookie_ = "arbiter_review=" + std::string(64, 'a');
    EXPECT_EQ(get("/").status, 303);
    EXPECT_THROW(ReviewSite(settings_, "short"), std::invalid_argument);
}

TEST_F(ReviewSiteTest, TheQueueAndTheDossierEscapeWhatRelaysAndPluginsWrote) {
    log_in();
    const Response queue = get("/");
    ASSERT_EQ(queue.status, 200);
    EXPECT_THAT(queue.body, HasSubstr(">mallory</a>"));
    EXPECT_THAT(queue.body, Not(HasSubstr("<script>")));
    EXPECT_THAT(queue.body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
    EXPECT_THAT(queue.body, HasSubstr("/player?" + player_query("<script>alert(1)</script>")));

    const Response hostile = get("/player?subject=%3Cscript%3Ealert%281%29%3C%2Fscript%3E");
    ASSERT_EQ(hostile.status, 200);
    EXPECT_THAT(hostile.body, Not(HasSubstr("<script>")));
    EXPECT_THAT(hostile.body, Not(HasSubstr("<img src=x>")));
    EXPECT_THAT(hostile.body, HasSubstr("&lt;/pre&gt;&lt;img src=x&gt;"));
    // Its intervals drawn as a histogram, mallory's positions on a plot.
    EXPECT_THAT(hostile.body, HasSubstr("3 intervals between inputs"));
    const Response mallory = get("/player?subject=mallory");
    EXPECT_THAT(mallory.body, HasSubstr("id=\"path-plot\""));
    EXPECT_THAT(mallory.body, HasSubstr("x 1.5 to 40.0 m, y -3.0 to 2.0 m"));
    EXPECT_EQ(get("/player?subject=nobody").status, 404);
    EXPECT_EQ(get("/nothing-here").status, 404);
    EXPECT_EQ(get("/style.css").content_type, "text/css; charset=utf-8");
}

TEST(ReviewPageEvidenceText, ReasonsNameTheMeasureTheLimitAndTheUnit) {
    // The reference plugin's speed flag, as stored.
    const json speed = {{"tripwire", false},
                        {"evidence",
                         {{"speed_mps", 24.23602185},
                          {"limit_mps", 22.0},
                          {"max_speed_mps", 20.0},
                          {"tolerance", 1.1},
                          {"window_s", 3.1},
                          {"updates", 12},
                          {"from", {{"t_us", 1000000}, {"x", 1.5}, {"y", 2}}}}}};
    EXPECT_EQ(reason_text(speed), "speed 24.2 m/s over 3.1 s, limit 22.0 m/s");
    // A trip-wire: a teleport.
    const json teleport = {
        {"tripwire", true},
        {"evidence", {{"kind", "single_update"}, {"distance_m", 412.7}, {"limit_m", 25.0}}}};
    EXPECT_EQ(reason_text(teleport), "trip-wire: distance 413 m, limit 25.0 m");
    // kaladin's timing: the limit an object with its value, the measure without a unit.
    const json timing = {
        {"evidence",
         {{"cv", 0.0123456}, {"limit", {{"value", 0.08}, {"source", "fixed"}}}, {"window_s", 30.5},
          {"intervals_ms", {100, 101, 99.5}}}}};
    EXPECT_EQ(reason_text(timing), "interval variation (CV) 0.0123 over 30.5 s, limit 0.08");
    const json reaction = {{"evidence",
                            {{"median_ms", 61.25},
                             {"limit", {{"value", 120}}},
                             {"tripwire_ms", 80},
                             {"pairs", 14}}}};
    EXPECT_EQ(reason_text(reaction), "median 61.2 ms, limit 120 ms, trip-wire at 80 ms");
    const json rate = {{"evidence", {{"inputs_per_min", 1834.0}, {"limit", {{"value", 900.0}}}}}};
    EXPECT_EQ(reason_text(rate), "inputs 1834/min, limit 900/min");
}

TEST(ReviewPageEvidenceText, UnknownOrHostileEvidenceFallsBackAndStaysBounded) {
    // No measure the page knows: up to three of its numbers, in key order.
    EXPECT_EQ(reason_text({{"evidence", {{"alpha_m", 3.25}, {"beta", 7}, {"gamma_ms", 0.5},
                                         {"delta_s", 9}}}}),
              "alpha 3.2 m, beta 7, delta 9 s");
    // Missing, empty, not an object, no numbers.
    EXPECT_EQ(reason_text(json::object()), "the evidence names no measure");
    EXPECT_EQ(reason_text(json::array()), "the evidence names no measure");
    EXPECT_EQ(reason_text({{"evidence", "a string"}}), "the evidence names no measure");
    EXPECT_EQ(reason_text({{"evidence", {{"note", "hi"}}}}), "the evidence names no measure");
    EXPECT_EQ(reason_text({{"tripwire", "yes"}, {"evidence", nullptr}}),
              "the evidence names no measure");
    // NaN-like strings and non-numbers where numbers belong are not measures.
    EXPECT_EQ(reason_text({{"evidence", {{"speed_mps", "NaN"}, {"limit_mps", "Infinity"}}}}),
              "the evidence names no measure");
    EXPECT_EQ(reason_text({{"evidence", {{"speed_mps", true}, {"limit_mps", {1, 2}}}}}),
              "the evidence names no measure");
    // A limit without a measure in its unit: the measure alone.
    EXPECT_EQ(reason_text({{"evidence", {{"speed_mps", 30.0}, {"limit_s", 1.0}}}}),
              "speed 30.0 m/s");
    // Huge numbers.
    EXPECT_EQ(reason_text({{"evidence", {{"speed_mps", 1e300}, {"limit_mps", 22.0}}}}),
              "speed 1.000e+300 m/s, limit 22.0 m/s");
    EXPECT_EQ(reason_text({{"evidence", {{"count", 18446744073709551615ull}}}}),
              "count 1.845e+19");
    EXPECT_EQ(readable_number(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(readable_number(-std::numeric_limits<double>::infinity()), "-∞");
    EXPECT_EQ(readable_number(-0.5), "-0.5");
    EXPECT_EQ(readable_number(0), "0");

    // Invalid UTF-8 in keys and values comes out valid, cut, and as text (the page escapes
    // it).
    const json bad = json::parse("{\"k\\u0000\":1}");
    const auto rows = evidence_rows(
        {{std::string("\xC0\xAF_m"), std::string("\xFF\xFE<b>")}, {"long", std::string(5000, 'a')}});
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& [key, value] : rows) {
        EXPECT_TRUE(is_valid_utf8(key)) << key;
        EXPECT_TRUE(is_valid_utf8(value)) << value;
        EXPECT_LE(value.size(), 400u);
    }
    EXPECT_THAT(rows[1].second, HasSubstr("<b>"));  // text: escaping is render's
    EXPECT_EQ(evidence_rows(bad).size(), 1u);
    // Deep JSON: summarised two levels down, not followed.
    json deep = 1;
    for (int i = 0; i < 500; ++i)
        deep = json::array({deep});
    EXPECT_EQ(evidence_value_text("deep", deep), "1 value: 1 value: […]");
    json deep_object = 1;
    for (int i = 0; i < 500; ++i)
        deep_object = json{{"a", deep_object}};
    EXPECT_EQ(reason_text({{"evidence", deep_object}}), "the evidence names no measure");
    // Wide: bounded rows and values.
    json wide = json::object();
    for (int i = 0; i < 1000; ++i)
        wide[fmt::format("k{:04}_ms", i)] = i;
    const auto wide_rows = evidence_rows(wide);
    ASSERT_EQ(wide_rows.size(), 41u);
    EXPECT_EQ(wide_rows[0], (std::pair<std::string, std::string>{"k0000_ms", "0 ms"}));
    EXPECT_EQ(wide_rows[40].second, "960 more");
    json long_array = json::array();
    for (int i = 0; i < 10000; ++i)
        long_array.push_back(i + 0.25);
    EXPECT_EQ(evidence_value_text("intervals_ms", long_array),
              "10000 values: 0.25 ms, 1.2 ms, 2.2 ms, 3.2 ms, 4.2 ms, …");
    // Units and times.
    EXPECT_EQ(evidence_value_text("t_us", 1234567), "1.235 s");
    EXPECT_EQ(evidence_value_text("acceleration_mps2", 81.5), "81.5 m/s²");
    EXPECT_EQ(evidence_value_text("speed_rad_s", 12), "12 rad/s");
    EXPECT_EQ(evidence_value_text("from", {{"t_us", 1000000}, {"x", 1.5}, {"y", 2}}),
              "t_us 1.000 s, x 1.5, y 2");
    EXPECT_EQ(unit_of_key("window_s"), "s");
    EXPECT_EQ(unit_of_key("s"), "");
    EXPECT_EQ(unit_of_key("_s"), "");
}

TEST(ReviewPageEvidenceText, ActionsRankStrongestLast) {
    EXPECT_LT(action_rank("Clear"), action_rank("Monitor"));
    EXPECT_LT(action_rank("Monitor"), action_rank("FlagForReview"));
    EXPECT_LT(action_rank("FlagForReview"), action_rank("ShadowRestrict"));
    EXPECT_EQ(action_rank(""), -1);
    EXPECT_EQ(action_rank("shadowrestrict"), -1);
}

TEST(ReviewPageQueue, TheStrongestActionComesFirstThenTheStoresOrder) {
    // The store's order: by servers, severity, recency.
    std::vector<QueueRow> rows;
    auto row = [&](const std::string& subject, int severity, const std::string& action) {
        ReviewStore::QueueEntry e;
        e.subject = subject;
        e.max_severity = severity;
        rows.push_back({e, action});
    };
    row("critical-monitor", 4, "Monitor");
    row("no-assessment", 4, "");
    row("review-a", 3, "FlagForReview");
    row("restricted", 2, "ShadowRestrict");
    row("review-b", 2, "FlagForReview");
    row("clear", 1, "Clear");
    row("odd", 1, "<b>Unknown</b>");
    order_by_action(rows);
    std::vector<std::string> order;
    for (const auto& r : rows)
        order.push_back(r.entry.subject);
    EXPECT_EQ(order, (std::vector<std::string>{"restricted", "review-a", "review-b",
                                               "critical-monitor", "clear", "no-assessment",
                                               "odd"}));
    const std::string html = queue_body(rows, 7);
    EXPECT_THAT(html, HasSubstr("<th>Action</th>"));
    EXPECT_THAT(html, HasSubstr("<td class=\"action act3\">ShadowRestrict</td>"));
    EXPECT_THAT(html, HasSubstr("<td class=\"action act0\">none</td>"));
    EXPECT_THAT(html, HasSubstr("&lt;b&gt;Unknown&lt;/b&gt;"));
    EXPECT_THAT(html, Not(HasSubstr("<b>Unknown")));
    // A dossier's strongest action, whatever else its matches hold.
    EXPECT_EQ(strongest_action(json{{"matches",
                                     {{{"action", "Monitor"}},
                                      {{"action", "FlagForReview"}},
                                      {{"action", 3}},
                                      "junk",
                                      {{"action", "Clear"}}}}}),
              "FlagForReview");
    EXPECT_EQ(strongest_action(json{{"matches", "no"}}), "");
    EXPECT_EQ(strongest_action(json::array()), "");
}

TEST_F(ReviewSiteTest, TheDossierSaysWhyInWordsAndShowsEvidenceAsATable) {
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        sink.on_signal(flag(3, "speedy",
                            R"({"speed_mps":24.23602185,"limit_mps":22.0,"window_s":3.1,)"
                            R"("<i>odd</i>":"<script>x</script>"})"));
        sink.flush();
    }
    log_in();
    const Response r = get("/player?subject=speedy");
    ASSERT_EQ(r.status, 200);
    EXPECT_THAT(r.body,
                HasSubstr("<td class=\"why\">speed 24.2 m/s over 3.1 s, limit 22.0 m/s</td>"));
    EXPECT_THAT(r.body, HasSubstr("<tr><th>speed_mps</th><td>24.2 m/s</td></tr>"));
    EXPECT_THAT(r.body, HasSubstr("<summary>JSON</summary>"));
    EXPECT_THAT(r.body, Not(HasSubstr("<script>")));
    EXPECT_THAT(r.body, Not(HasSubstr("<i>")));
    EXPECT_THAT(r.body, HasSubstr("&lt;script&gt;x&lt;/script&gt;"));
}

TEST_F(ReviewSiteTest, AVerdictNeedsTheSessionsOwnFormTokenAndIsKeptWithTheReviewersName) {
    const std::string form_token = log_in("alice");
    EXPECT_EQ(post("/verdict", "subject=mallory&verdict=confirmed").status, 403);
    EXPECT_EQ(
        post("/verdict", "subject=mallory&verdict=confirmed&form_token=" + std::string(64, '0'))
            .status,
        403);
    EXPECT_EQ(post("/verdict", "subject=mallory&verdict=guilty&form_token=" + form_token).status,
              400);
    EXPECT_EQ(post("/verdict", "subject=nobody&verdict=confirmed&form_token=" + form_token).status,
              404);
    // Not a form: refused before it is read.
    EXPECT_EQ(site_
                  ->handle({"POST", "/verdict", cookie_, "text/plain",
                            "subject=mallory&verdict=confirmed&form_token=" + form_token, "test"})
                  .status,
              415);
    EXPECT_EQ(post("/verdict", "subject=nobody&verdict=confirmed&confirm=yes&form_token=" +
                                   form_token)
                  .status,
              404);
    // The first post only asks, repeating the choice and the note; nothing is recorded.
    const Response asked = post(
        "/verdict", "subject=mallory&verdict=confirmed&note=31+m%2Fs+%3Cb%3E&form_token=" +
                        form_token);
    ASSERT_EQ(asked.status, 200) << asked.body;
    EXPECT_THAT(asked.body, HasSubstr("<b id=\"confirm-verdict\">Confirmed</b>"));
    EXPECT_THAT(asked.body, HasSubstr("name=\"confirm\" value=\"yes\""));
    EXPECT_THAT(asked.body, HasSubstr("name=\"verdict\" value=\"confirmed\""));
    EXPECT_THAT(asked.body, HasSubstr("name=\"form_token\" value=\"" + form_token + "\""));
    EXPECT_THAT(asked.body, HasSubstr("31 m/s &lt;b&gt;</textarea>"));
    EXPECT_THAT(asked.body, Not(HasSubstr("31 m/s <b>")));
    EXPECT_EQ(json::parse(ReviewStore(settings_).dossier("mallory")->json)["verdicts"].size(), 0u);
    // The confirmation needs the session's form token too.
    EXPECT_EQ(post("/verdict", "subject=mallory&verdict=confirmed&confirm=yes&form_token=" +
                                   std::string(64, '0'))
                  .status,
              403);
    const Response done =
        post("/verdict", "subject=mallory&verdict=confirmed&note=31+m%2Fs&confirm=yes&form_token=" +
                             form_token);
    ASSERT_EQ(done.status, 303) << done.body;
    EXPECT_EQ(header(done, "Location"), "/player?" + player_query("mallory") + "&recorded=1");
    ReviewStore store(settings_);
    const json verdicts = json::parse(store.dossier("mallory")->json)["verdicts"];
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0]["reviewer"], "alice");
    EXPECT_EQ(verdicts[0]["note"], "31 m/s");
    EXPECT_THAT(get("/").body, Not(HasSubstr(">mallory</a>")));

    // Another reviewer's form token does not work in this session; logging out ends it.
    const std::string alice_cookie = cookie_;
    const std::string bob_token = log_in("bob");
    cookie_ = alice_cookie;
    EXPECT_EQ(post("/logout", "form_token=" + bob_token).status, 403);
    EXPECT_EQ(post("/logout", "form_token=" + form_token).status, 303);
    EXPECT_EQ(get("/").status, 303);
}

TEST_F(ReviewSiteTest, BrokenFormsAndTextThatIsNotUtf8AreRefusedNotGuessed) {
    const std::string form_token = log_in();
    EXPECT_EQ(get("/player?subject=%zz").status, 400);
    EXPECT_EQ(get("/player?subject=%4").status, 400);
    EXPECT_EQ(get("/player?subject=%FF%FE").status, 400);
    EXPECT_EQ(
        post("/verdict", "subject=mallory&verdict=confirmed&note=%C0%AF&form_token=" + form_token)
            .status,
        400);
    std::string many;
    for (int i = 0; i < 40; ++i)
        many += "f" + std::to_string(i) + "=1&";
    EXPECT_EQ(post("/verdict", many).status, 400);
    EXPECT_EQ(post("/login", "reviewer=%E2%82&token=x").status, 400);
    // A note past 64 KiB.
    EXPECT_EQ(post("/verdict", "subject=mallory&verdict=confirmed&form_token=" + form_token +
                                   "&note=" + std::string(70'000, 'n'))
                  .status,
              400);
}

TEST_F(ReviewSiteTest, ANameWithBytesABrowserWouldChangeKeepsItsVerdictOnItself) {
    // A NUL, a carriage return and U+FFFD: an HTML attribute would lose or change each.
    const std::string odd = std::string("nul\0sub\r\nx", 10), lookalike = "nul\xEF\xBF\xBDsub";
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        sink.on_signal(flag(5, odd, "{}"));
        sink.on_signal(flag(6, lookalike, "{}"));
        sink.flush();
    }
    const std::string form_token = log_in();
    const Response page = get("/player?" + player_query(odd));
    ASSERT_EQ(page.status, 200) << page.body;
    // Shown with visible escapes, so it cannot pass for the look-alike.
    EXPECT_THAT(page.body, HasSubstr("nul\\x00sub\\x0d\\x0ax"));
    EXPECT_THAT(page.body, HasSubstr("name=\"p\" value=\"" + subject_digest(odd) + "\""));
    ASSERT_EQ(post("/verdict", "id=" + to_hex(odd) + "&verdict=confirmed&confirm=yes&form_token=" +
                                       form_token)
                  .status,
              303);
    ReviewStore store(settings_);
    EXPECT_EQ(json::parse(store.dossier(odd)->json)["verdicts"].size(), 1u);
    EXPECT_EQ(json::parse(store.dossier(lookalike)->json)["verdicts"].size(), 0u);
    EXPECT_EQ(get("/player?id=6").status, 400);
    EXPECT_EQ(get("/player?id=zz").status, 400);
}

TEST_F(ReviewSiteTest, StoredRowsTooDeepOrTooManyAreShownBoundedNotFollowed) {
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        // Another process sharing the store could write this; ingest never would.
        sink.on_signal(flag(7, "deep", std::string(100'000, '[') + std::string(100'000, ']')));
        for (int i = 0; i < 520; ++i)
            sink.on_signal(flag(8, "busy", "{\"n\":" + std::to_string(i) + "}"));
        sink.flush();
    }
    log_in();
    const Response deep = get("/player?subject=deep");
    EXPECT_EQ(deep.status, 200);
    const Response busy = get("/player?subject=busy");
    ASSERT_EQ(busy.status, 200);
    EXPECT_THAT(busy.body, HasSubstr("The latest 500 of 520"));
    ReviewStore store(settings_);
    const json dossier = json::parse(store.dossier("busy")->json);
    EXPECT_EQ(dossier["events"].size(), 500u);
    EXPECT_EQ(dossier["events_total"], 520);
}

TEST_F(ReviewSiteTest, GuessingTheTokenIsHeldToTenTriesAMinutePerAddress) {
    for (int i = 0; i < ReviewSite::kMaxFailedLogins; ++i)
        EXPECT_EQ(
            site_->handle({"POST", "/login", "", "", "reviewer=eve&token=guess", "10.0.0.9:1"})
                .status,
            403);
    // Now even the right token is refused from there, and another address is not held.
    EXPECT_EQ(site_
                  ->handle({"POST", "/login", "", "", std::string("reviewer=eve&token=") + kToken,
                            "10.0.0.9:2"})
                  .status,
              429);
    EXPECT_EQ(site_
                  ->handle({"POST", "/login", "", "", std::string("reviewer=ann&token=") + kToken,
                            "10.0.0.10:1"})
                  .status,
              303);
}

TEST_F(ReviewSiteTest, GuessesSpreadOverManyAddressesMeetTheOverallBound) {
    // One try from each of 3,000 addresses (127.0.0.2 onward, as a tester on the host could):
    // only the overall bound's worth is tried, the rest refused.
    int tried = 0, refused = 0;
    for (int i = 0; i < 3000; ++i) {
        const std::string peer =
            fmt::format("127.0.{}.{}:4000", (i + 2) / 256, (i + 2) % 256);
        const int status =
            site_->handle({"POST", "/login", "", "", "reviewer=eve&token=guess", peer}).status;
        tried += status == 403;
        refused += status == 429;
    }
    EXPECT_EQ(tried, ReviewSite::kMaxFailedLoginsOverall);
    EXPECT_EQ(refused, 3000 - ReviewSite::kMaxFailedLoginsOverall);
    // Until the window passes, nobody logs in: the right token from a new address too.
    EXPECT_EQ(site_
                  ->handle({"POST", "/login", "", "", std::string("reviewer=ann&token=") + kToken,
                            "10.0.0.10:1"})
                  .status,
              429);
}

TEST(ReviewPageLoginThrottle, AHeldAddressStaysHeldWhileOthersFloodTheTable) {
    using Clock = LoginThrottle::Clock;
    LoginThrottle throttle({/*per_address=*/3, /*overall=*/100, std::chrono::seconds(60),
                            /*addresses=*/128});
    const auto start = Clock::now();
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(throttle.check("10.0.0.9", start), LoginThrottle::Decision::allowed);
        throttle.record_failure("10.0.0.9", start);
    }
    EXPECT_EQ(throttle.check("10.0.0.9", start), LoginThrottle::Decision::address_held);
    // A flood of new addresses, each trying while it may: the table stays bounded, the
    // overall bound stops the flood, and the held address is neither cleared nor evicted.
    int lines = 0, recorded = 0;
    for (int i = 0; i < 5000; ++i) {
        const std::string address = "10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256);
        const auto now = start + std::chrono::milliseconds(i);
        if (throttle.check(address, now) != LoginThrottle::Decision::allowed) continue;
        ++recorded;
        lines += !throttle.record_failure(address, now).empty();
        EXPECT_LE(throttle.addresses_held_in_memory(), 128u);
    }
    EXPECT_EQ(recorded, 100 - 3);
    EXPECT_EQ(throttle.check("10.0.0.9", start + std::chrono::seconds(10)),
              LoginThrottle::Decision::all_held);
    // A count in the log, not a line per try: the overall bound's line, nothing per address.
    EXPECT_EQ(lines, 1);
    // The window passes: everyone may try again, the held address too.
    EXPECT_EQ(throttle.check("10.0.0.9", start + std::chrono::seconds(61)),
              LoginThrottle::Decision::allowed);

    // Past the table's capacity the least recent address goes, not the whole table.
    LoginThrottle small({/*per_address=*/2, /*overall=*/1000, std::chrono::seconds(60),
                         /*addresses=*/4});
    small.record_failure("held", start);
    small.record_failure("held", start + std::chrono::seconds(2));
    for (int i = 0; i < 3; ++i)
        small.record_failure("other" + std::to_string(i), start + std::chrono::seconds(1));
    small.record_failure("newest", start + std::chrono::seconds(3));
    EXPECT_EQ(small.addresses_held_in_memory(), 4u);
    EXPECT_EQ(small.check("held", start + std::chrono::seconds(3)),
              LoginThrottle::Decision::address_held);
}

TEST_F(ReviewSiteTest, LookAlikeNamesShowAsDifferentNamesAndAreMarked) {
    // A zero-width space, a Cyrillic a, a right-to-left override: each passes for mallory.
    const std::vector<std::string> look_alikes = {"mal\u200Blory", "m\u0430llory",
                                                  "\u202Eyrollam"};
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        for (size_t i = 0; i < look_alikes.size(); ++i)
            sink.on_signal(flag(static_cast<uint32_t>(10 + i), look_alikes[i], "{}"));
        sink.flush();
    }
    log_in();
    const std::string queue = get("/").body;
    EXPECT_THAT(queue, HasSubstr(">mallory</a>"));
    for (const char* hidden : {"\u200B", "\u0430", "\u202E"})
        EXPECT_THAT(queue, Not(HasSubstr(hidden)));
    for (const auto& name : look_alikes) {
        EXPECT_THAT(queue, HasSubstr(">" + html_name(name) + "</a>"));
        EXPECT_THAT(html_name(name), HasSubstr(std::string(kLookAlikeMark)));
        const Response dossier = get("/player?" + player_query(name));
        ASSERT_EQ(dossier.status, 200);
        EXPECT_THAT(dossier.body, HasSubstr(">" + html_name(name) + "</h1>"));
    }
}

TEST_F(ReviewSiteTest, AHundredKilobyteAccountIsCutInTheQueueAndWholeOnItsDossier) {
    const std::string huge = "huge-" + std::string(100'000, 'x');
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        sink.on_signal(flag(20, huge, "{}"));
        sink.flush();
    }
    const std::string form_token = log_in();
    const std::string queue = get("/").body;
    // The queue's row: the name cut with its mark, a short link.
    EXPECT_LT(queue.size(), 20'000u);
    EXPECT_THAT(queue, HasSubstr(">" + html_name(huge) + "</a>"));
    EXPECT_THAT(html_name(huge), HasSubstr(std::string(kCutMark)));
    const std::string link = "/player?" + player_query(huge);
    EXPECT_LT(link.size(), 64u);
    EXPECT_THAT(queue, HasSubstr("href=\"" + link + "\""));
    // The dossier names the player whole, and its verdict form works.
    const Response dossier = get(link);
    ASSERT_EQ(dossier.status, 200);
    EXPECT_THAT(dossier.body, HasSubstr(">" + huge + "</h1>"));
    ASSERT_EQ(post("/verdict",
                   player_query(huge) + "&verdict=inconclusive&confirm=yes&form_token=" + form_token)
                  .status,
              303);
    ReviewStore store(settings_);
    EXPECT_EQ(json::parse(store.dossier(huge)->json)["verdicts"].size(), 1u);

    // A site that has shown nothing yet (a restart) finds the link through the queue; a
    // link to nobody is answered 404, a malformed one 400.
    site_ = std::make_unique<ReviewSite>(settings_, kToken);
    log_in();
    EXPECT_EQ(get("/player?" + player_query("mallory")).status, 200);
    EXPECT_EQ(get("/player?" + player_query("nobody")).status, 404);
    EXPECT_EQ(get("/player?id=zz").status, 400);
}

TEST_F(ReviewSiteTest, EveryLinkOfAQueueOfLongNamesResolvesPastTheTableOfNamesShown) {
    // 180 accounts of 100 KB: more bytes than the site keeps of the names it has shown, so
    // the queue's first links have left that table by the time the queue is drawn.
    {
        StoreSink sink(settings_, "server-one", 0.3, 0.7);
        for (uint32_t i = 0; i < 180; ++i)
            sink.on_signal(flag(100 + i, fmt::format("long-{:03}-", i) + std::string(100'000, 'x'),
                                "{}"));
        sink.flush();
    }
    log_in();
    ReviewStore store(settings_);
    const auto queue = store.queue(200, 7 * 86400);
    ASSERT_GE(queue.size(), 180u);
    for (const size_t i : {size_t{0}, size_t{1}, queue.size() - 1}) {
        const Response dossier = get("/player?" + player_query(queue[i].subject));
        ASSERT_EQ(dossier.status, 200) << i;
        EXPECT_THAT(dossier.body,
                    HasSubstr(">" + html_name(queue[i].subject, SIZE_MAX) + "</h1>"));
    }
}

TEST(ReviewPageForm, DecodesEscapesAndCookies) {
    const Fields fields = parse_urlencoded("a=1&b=x+y%21&a=2&empty=&&c");
    ASSERT_TRUE(fields.ok()) << fields.problem;
    EXPECT_EQ(fields.get("a"), "1");
    EXPECT_EQ(fields.get("b"), "x y!");
    EXPECT_EQ(fields.get("empty"), "");
    EXPECT_EQ(fields.get("c"), "");
    EXPECT_EQ(fields.get("absent"), "");
    EXPECT_FALSE(parse_urlencoded("=1").ok());
    EXPECT_FALSE(parse_urlencoded(std::string(65, 'n') + "=1").ok());
    EXPECT_EQ(cookie_value("x=1; arbiter_review=abc; y=2", "arbiter_review"), "abc");
    EXPECT_FALSE(cookie_value("arbiter_reviewer=abc", "arbiter_review"));
    EXPECT_EQ(html_escape(std::string("<\"&'\xff")), "&lt;&quot;&amp;&#39;\xEF\xBF\xBD");
}

TEST(ReviewPageDrawings, EvidenceOfAnyShapeDrawsOrIsLeftOut) {
    EXPECT_EQ(path_plot_svg(json::array()), "");
    EXPECT_EQ(path_plot_svg(json("not an array")), "");
    // Wrong types, infinities written as huge numbers, nesting: nothing drawn, nothing thrown.
    const json odd = json::parse(
        R"([{"evidence":{"x":"1","y":2}},{"evidence":{"x":1e308,"y":1}},{"evidence":[[[[[[[[[[[{"x":1,"y":1}]]]]]]]]]]]},{"evidence":{"intervals_ms":["a",-1,1e300]}},7,null])");
    EXPECT_EQ(path_plot_svg(odd), "");
    EXPECT_EQ(interval_histograms_svg(odd), "");
    // One point is a dot; a single interval value a single bar.
    const json one = json::parse(
        R"([{"plugin":"p","event_type":"e","evidence":{"at":{"x":0,"y":0},"intervals_ms":[0]}}])");
    EXPECT_THAT(path_plot_svg(one), HasSubstr("<circle"));
    EXPECT_THAT(interval_histograms_svg(one), HasSubstr("1 intervals between inputs"));
}

// A TCP connection to "127.0.0.1:port"; -1 when it cannot be made.
int connect_to(const std::string& address) {
    const auto [host, port] = serve::split_host_port(address, "test");
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
    ::inet_pton(AF_INET, host.c_str(), &to.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) return fd;
    ::close(fd);
    return -1;
}

// The transport over a real socket: a request past the header bound is answered 413 and
// the connection closed; a good one is answered with the security headers.
std::string http_exchange(const std::string& address, const std::string& request) {
    const int fd = connect_to(address);
    EXPECT_GE(fd, 0);
    if (fd < 0) return "";
    size_t sent = 0;
    while (sent < request.size()) {
        const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::string reply;
    char chunk[4096];
    for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;)
        reply.append(chunk, static_cast<size_t>(n));
    ::close(fd);
    return reply;
}

TEST_F(ReviewSiteTest, TheTransportBoundsRequestsAndSendsTheSecurityHeaders) {
    std::string bound;
    const int listening = serve::listen_tcp("127.0.0.1:0", false, "test", bound);
    HttpServer server(listening, std::make_unique<ReviewSite>(settings_, kToken));
    const std::string good =
        http_exchange(bound, "GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_THAT(good, HasSubstr("HTTP/1.1 200 OK"));
    EXPECT_THAT(good, HasSubstr("Content-Security-Policy: default-src 'none'"));
    EXPECT_THAT(good, HasSubstr("X-Frame-Options: DENY"));
    const std::string huge_header = http_exchange(
        bound, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20'000, 'a') + "\r\n\r\n");
    EXPECT_THAT(huge_header, HasSubstr("HTTP/1.1 413"));
    const std::string huge_body =
        http_exchange(bound, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n" +
                                 std::string(300'000, 'a'));
    EXPECT_THAT(huge_body, HasSubstr("HTTP/1.1 413"));
    EXPECT_THAT(http_exchange(bound, "NONSENSE\r\n\r\n"), HasSubstr("HTTP/1.1 400"));
    // 70 connections that never finish a request: the oldest make room, so a reviewer
    // still gets in.
    std::vector<int> idle;
    for (int i = 0; i < 70; ++i) {
        const int fd = connect_to(bound);
        ASSERT_GE(fd, 0);
        ::send(fd, "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL);
        idle.push_back(fd);
    }
    EXPECT_THAT(http_exchange(bound, "GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
                HasSubstr("HTTP/1.1 200 OK"));
    for (const int fd : idle)
        ::close(fd);
    // Still serving after all of it.
    EXPECT_THAT(
        http_exchange(bound, "GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        HasSubstr("HTTP/1.1 200 OK"));
}

// How many answers a reply holds (status lines: "HTTP/1.1 " at a line's start): a request
// smuggled behind another is a second one.
size_t answers_in(const std::string& reply) {
    size_t count = 0;
    for (size_t at = reply.find("HTTP/1.1 "); at != std::string::npos;
         at = reply.find("HTTP/1.1 ", at + 1))
        count += at == 0 || reply[at - 1] == '\n';
    return count;
}

TEST_F(ReviewSiteTest, EveryFramingAmbiguityIsRefusedOnceAndTheConnectionClosed) {
    std::string bound;
    const int listening = serve::listen_tcp("127.0.0.1:0", false, "test", bound);
    HttpServer server(listening, std::make_unique<ReviewSite>(settings_, kToken));
    // Each head, then a body of "x=1" where it has one, then a second request: if the
    // server read the first as framed some way, the second would be answered too.
    using namespace std::string_literals;
    const std::string smuggled = "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n";
    struct Case {
        const char* what;
        std::string head;
        const char* status;
    };
    const std::vector<Case> cases = {
        {"identity", "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n",
         "400"},
        {"chunked not last",
         "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n", "400"},
        {"a coding not implemented",
         "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "501"},
        {"two fields", "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n", "501"},
        {"both lengths", "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n", "400"},
        {"two lengths", "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                        "Content-Length: 3\r\n\r\n", "400"},
        {"a length list", "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\n",
         "400"},
        {"a signed length", "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n",
         "400"},
        {"obs-fold", "POST /login HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 3\r\n\r\n",
         "400"},
        {"a bare CR", "POST /login HTTP/1.1\r\nHost: x\r\nX-A: a\rContent-Length: 3\r\n\r\n",
         "400"},
        {"a bare LF", "POST /login HTTP/1.1\r\nHost: x\nContent-Length: 3\r\n\r\n", "400"},
        {"space before the colon",
         "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length : 3\r\n\r\n", "400"},
        {"no Host", "GET /style.css HTTP/1.1\r\n\r\n", "400"},
        {"two Hosts", "GET /style.css HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400"},
        {"chunked in HTTP/1.0",
         "POST /login HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
        {"a NUL in a field", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n"s, "400"},
    };
    for (const auto& c : cases) {
        const std::string reply = http_exchange(bound, c.head + "x=1" + smuggled);
        EXPECT_THAT(reply, HasSubstr(std::string("HTTP/1.1 ") + c.status)) << c.what;
        EXPECT_THAT(reply, HasSubstr("Connection: close")) << c.what;
        EXPECT_EQ(answers_in(reply), 1u) << c.what << ":\n" << reply;
        EXPECT_THAT(reply, Not(HasSubstr("text/css"))) << c.what;
    }
    // Framed well, the same requests are read: a chunked body, then the next request.
    const std::string chunked = http_exchange(
        bound, "POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               "3\r\nx=1\r\n0\r\n\r\n" + smuggled);
    EXPECT_EQ(answers_in(chunked), 2u) << chunked;
    EXPECT_THAT(chunked, HasSubstr("text/css"));
    const std::string sized = http_exchange(
        bound, "POST /login HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nx=1" + smuggled);
    EXPECT_EQ(answers_in(sized), 2u) << sized;
}

// Clients that ask and never read: each sends requests, pipelined, until the server stops
// taking them because its answers fill every buffer between them. All at once, so that all
// are stalled well within the server's 10 s for an answer to be taken.
std::vector<int> connect_and_stall(const std::string& address, int count) {
    const auto [host, port] = serve::split_host_port(address, "test");
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
    ::inet_pton(AF_INET, host.c_str(), &to.sin_addr);
    std::vector<int> fds;
    for (int i = 0; i < count; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int small = 4096;  // the least the kernel allows, so that few answers fill it
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
            ::close(fd);
            break;
        }
        fds.push_back(fd);
    }
    std::string burst;
    for (int i = 0; i < 16; ++i)
        burst += "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n";
    // A socket is stalled once it has taken nothing in five rounds running.
    std::vector<int> refused(fds.size(), 0);
    for (bool all_stalled = false; !all_stalled;) {
        all_stalled = true;
        for (size_t i = 0; i < fds.size(); ++i) {
            if (refused[i] >= 5) continue;
            all_stalled = false;
            const ssize_t sent =
                ::send(fds[i], burst.data(), burst.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent > 0)
                refused[i] = 0;
            else if (sent < 0 && errno != EAGAIN)
                refused[i] = 5;  // closed by the server
            else
                ++refused[i];
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return fds;
}

TEST_F(ReviewSiteTest, ClientsThatNeverReadTheirAnswersCannotKeepAVisitorOut) {
    std::string bound;
    const int listening = serve::listen_tcp("127.0.0.1:0", false, "test", bound);
    HttpServer server(listening, std::make_unique<ReviewSite>(settings_, kToken));
    // 80 of them: past the 64 connections the server holds at once.
    const std::vector<int> stalled = connect_and_stall(bound, 80);
    ASSERT_EQ(stalled.size(), 80u);
    // Visitors are still answered while the stalled writers hold on.
    for (int i = 0; i < 3; ++i)
        EXPECT_THAT(
            http_exchange(bound, "GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            HasSubstr("HTTP/1.1 200 OK"))
            << "visitor " << i;
    for (const int fd : stalled)
        ::close(fd);
}

}  // namespace
}  // namespace arbiter::host::review_page
