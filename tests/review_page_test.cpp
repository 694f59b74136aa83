// The review loop end to end, with real parts: `arbiter serve` writing to a store and
// serving the review page, headless Chromium logging in, reading the evidence and
// recording a verdict, the test reading it back from the store; and two `arbiter serve`
// hosts on one PostgreSQL seeing one account flagged on both.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "arbiter/host/config.hpp"
#include "store/store.hpp"
#include "support/cli.hpp"
#include "support/headless_browser.hpp"
#include "support/postgres_server.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kReviewToken = "review-token-0123456789abcdef";

std::string plugins_of_the_sample() {
    return "[plugins.reference]\nlibrary = \"reference\"\n"
           "[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = 1.1\n"
           "window_s = 1.0\n"
           "[plugins.accounts]\nlibrary = \"accounts\"\n"
           "[plugins.lagpool]\nlibrary = \"lagpool\"\n"
           "[plugins.kaladin]\nlibrary = \"kaladin\"\n";
}

// Sends `events` to a server's relay socket; `arbiter send` returns once the server has
// processed every batch (the store may still be committing the last of them).
void send(const fs::path& events, const fs::path& socket, const fs::path& work_dir) {
    auto sent = arbiter::test::run_command({ARBITER_EXE, "send", events.string(), socket.string()},
                                           work_dir);
    ASSERT_EQ(sent.exit_status, 0) << sent.err;
}

uint64_t flags_of(const std::vector<arbiter::host::ReviewStore::QueueEntry>& entries,
                  const std::string& subject) {
    for (const auto& e : entries)
        if (e.subject == subject) return e.events;
    return 0;
}

// Polls the store until `ready` holds of its queue (the writer commits every 20 ms here).
std::vector<arbiter::host::ReviewStore::QueueEntry> queue_when(
    const arbiter::host::StoreSettings& settings,
    const std::function<bool(const std::vector<arbiter::host::ReviewStore::QueueEntry>&)>& ready) {
    arbiter::host::ReviewStore store(settings);
    std::vector<arbiter::host::ReviewStore::QueueEntry> entries;
    for (int i = 0; i < 200; ++i) {
        entries = store.queue();
        if (ready(entries)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return entries;
}

// Where the screenshots go: ARBITER_SCREENSHOT_DIR when set (docs/review.md's come from
// there), else the test's own folder.
fs::path screenshot_dir(const fs::path& fallback) {
    const char* dir = std::getenv("ARBITER_SCREENSHOT_DIR");
    return dir && *dir ? fs::path(dir) : fallback;
}

// Writes a config with a store, the sample's plugins and the review page into `dir` and
// starts `arbiter serve` on it, its relays on `socket`.
std::unique_ptr<arbiter::test::ServerProcess> serve_with_review_page(const fs::path& dir,
                                                                     const fs::path& socket) {
    arbiter::test::write_text(dir / "review.token", std::string(kReviewToken) + "\n");
    fs::permissions(dir / "review.token", fs::perms::owner_read | fs::perms::owner_write);
    arbiter::test::write_text(
        dir / "server_config.toml",
        "[host]\nserver_id = \"host-a\"\n\n[aggregation]\nmonitor_threshold = 0.3\n"
        "review_threshold = 0.7\n\n[sinks]\nreport_threshold = 0.3\n\n[store]\npath = \"" +
            (dir / "review.db").string() +
            "\"\ncommit_interval_ms = 20\n\n[serve]\nunix_socket = \"" + socket.string() +
            "\"\nreview_listen = \"127.0.0.1:0\"\nreview_token_file = \"review.token\"\n" +
            plugins_of_the_sample());
    return std::make_unique<arbiter::test::ServerProcess>(dir / "server_config.toml", dir);
}

// Logs in on the page the browser shows (the login form) as `reviewer` with `token`.
void log_in(arbiter::test::HeadlessBrowser& browser, const std::string& reviewer,
            const std::string& token) {
    browser.evaluate_and_wait_for_load("document.getElementById('reviewer').value = '" +
                                       reviewer +
                                       "';"
                                       "document.getElementById('token').value = '" +
                                       token +
                                       "';"
                                       "document.getElementById('login').click()");
}

// Whether all of `text` matches the regular expression `pattern` (ECMAScript).
bool matches(const std::string& text, const std::string& pattern) {
    return std::regex_match(text, std::regex(pattern));
}

// The text of the "Why" cell of the first row of the flags table whose check cell
// satisfies the JavaScript predicate `check` (on its text, `c`); "" when none does.
std::string why_of_flag(arbiter::test::HeadlessBrowser& browser, const std::string& check) {
    return browser.evaluate(
        "(() => { const row = Array.from(document.querySelectorAll('#flags > tbody > tr'))"
        ".find(r => { const c = r.children[3].textContent; return " +
        check + "; }); return row ? row.querySelector('td.why').textContent : ''; })()");
}

}  // namespace

TEST(ReviewPage, ABrowserLogsInReadsTheEvidenceAndRecordsAVerdictTheStoreKeeps) {
    const auto program = arbiter::test::HeadlessBrowser::find();
    if (!program)
        GTEST_SKIP() << "no browser: install Debian's chromium (apt-get install chromium) for "
                        "this test";
    arbiter::test::TempDir dir;
    const fs::path socket = dir / "relays.sock";
    const auto server_owned = serve_with_review_page(dir.path(), socket);
    auto& server = *server_owned;
    ASSERT_FALSE(server.review_address().empty()) << server.log();
    send(fs::path(SAMPLES_DIR) / "sample-match.arbev", socket, dir.path());
    arbiter::host::StoreSettings store;
    store.path = (dir / "review.db").string();
    // The sample's flags: 4 of trent's, 17 of mallory's (docs/review.md).
    const auto queued = queue_when(store, [](const auto& entries) {
        return flags_of(entries, "trent") == 4 && flags_of(entries, "mallory") == 17;
    });
    ASSERT_EQ(queued.size(), 2u);
    ASSERT_EQ(flags_of(queued, "mallory"), 17u);

    const std::string base = "http://" + server.review_address();
    arbiter::test::HeadlessBrowser browser(*program);

    // Without a session every page leads to the login form; a wrong token is refused.
    browser.navigate(base + "/");
    EXPECT_EQ(browser.evaluate("document.title"), "Log in · Arbiter review");
    log_in(browser, "alice", "not the token at all");
    EXPECT_EQ(browser.evaluate("document.querySelector('.problem').textContent"),
              "That token is not the page's.");
    log_in(browser, "alice", kReviewToken);

    // The queue: the sample's two cheaters, trent (a trip-wire) first.
    EXPECT_EQ(browser.evaluate("document.title"), "Queue · Arbiter review");
    EXPECT_EQ(browser.evaluate("Array.from(document.querySelectorAll('#queue a.player'))"
                               ".map(a => a.textContent).join(',')"),
              "trent,mallory");
    // Each line says the action the aggregator took, the strongest first.
    const std::string actions = browser.evaluate(
        "Array.from(document.querySelectorAll('#queue td.action')).map(a => a.textContent)"
        ".join(',')");
    EXPECT_PRED2(matches, actions, std::string("(ShadowRestrict|FlagForReview|Monitor|Clear),"
                                             "(ShadowRestrict|FlagForReview|Monitor|Clear)"));
    EXPECT_EQ(browser.evaluate(
                  "(() => { const rank = {Clear: 0, Monitor: 1, FlagForReview: 2, "
                  "ShadowRestrict: 3}; const r = Array.from(document.querySelectorAll("
                  "'#queue td.action')).map(a => rank[a.textContent] ?? -1); "
                  "return String(r.every((v, i) => i == 0 || r[i - 1] >= v)); })()"),
              "true");
    const fs::path shots = screenshot_dir(dir.path());
    arbiter::test::write_bytes(shots / "review-queue.png", browser.screenshot_png());

    // mallory's dossier, reached by the link: her path drawn from the evidence, her flags.
    browser.evaluate_and_wait_for_load(
        "Array.from(document.querySelectorAll('#queue a.player'))"
        ".find(a => a.textContent == 'mallory').click()");
    EXPECT_EQ(browser.evaluate("document.getElementById('subject').textContent"), "mallory");
    EXPECT_EQ(browser.evaluate("String(document.querySelectorAll('#path-plot polyline.flagged')"
                               ".length > 0)"),
              "true");
    EXPECT_EQ(browser.evaluate("String(document.querySelectorAll('#flags > tbody > tr').length)"),
              "17");
    // The style sheet is the page's own and applies (the CSP allows nothing else).
    EXPECT_EQ(browser.evaluate("getComputedStyle(document.querySelector('header'))"
                               ".backgroundColor"),
              "rgb(36, 41, 46)");
    // Each flag says why in words: the measure, the stretch, the limit (20 m/s * 1.1).
    EXPECT_PRED2(matches, why_of_flag(browser, "c == 'reference:movement.speed'"),
                std::string("speed [0-9]+\\.[0-9] m/s over [0-9]+\\.[0-9] s, "
                                        "limit 22\\.0 m/s"));
    // The evidence as a table of entries with units, the JSON behind a <details> (the
    // limit, 22.000000000000004, was stored as the whole number it nearly is).
    EXPECT_EQ(browser.evaluate(
                  "Array.from(document.querySelectorAll('#flags table.evidence th'))"
                  ".find(th => th.textContent == 'limit_mps').nextElementSibling.textContent"),
              "22 m/s");
    EXPECT_EQ(browser.evaluate("document.querySelector('#flags details summary').textContent"),
              "JSON");
    browser.set_viewport(1280, 900);
    arbiter::test::write_bytes(shots / "review-dossier.png", browser.screenshot_png(1280, 2000));
    browser.set_viewport(400, 800);
    arbiter::test::write_bytes(shots / "review-dossier-narrow.png", browser.screenshot_png(400, 2400));
    browser.set_viewport(1280, 900);

    // The verdict, with a note: one click only asks, repeating the choice; nothing is
    // recorded until the second.
    browser.evaluate_and_wait_for_load(
        "document.getElementById('note').value = 'speed hack: 31 m/s for 4 s <b>sure</b>';"
        "document.getElementById('confirmed').click()");
    EXPECT_EQ(browser.evaluate("document.title"), "Record this verdict? · Arbiter review");
    EXPECT_EQ(browser.evaluate("document.getElementById('confirm-verdict').textContent"),
              "Confirmed");
    EXPECT_EQ(browser.evaluate("document.getElementById('confirm-player').textContent"),
              "mallory");
    EXPECT_EQ(browser.evaluate("document.getElementById('note').value"),
              "speed hack: 31 m/s for 4 s <b>sure</b>");
    {
        arbiter::host::ReviewStore before(store);
        EXPECT_EQ(json::parse(before.dossier("mallory")->json)["verdicts"].size(), 0u);
    }
    browser.evaluate_and_wait_for_load("document.getElementById('record').click()");
    EXPECT_EQ(browser.evaluate("document.getElementById('message').textContent"),
              "Verdict recorded.");
    EXPECT_EQ(browser.evaluate("document.querySelector('#verdicts tbody tr td:nth-child(3)')"
                               ".textContent"),
              "alice");

    // The store has it, as the reviewer gave it, and mallory has left the queue.
    arbiter::host::ReviewStore review(store);
    const auto dossier = review.dossier("mallory");
    ASSERT_TRUE(dossier.has_value());
    const json verdicts = json::parse(dossier->json)["verdicts"];
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0]["verdict"], "confirmed");
    EXPECT_EQ(verdicts[0]["reviewer"], "alice");
    EXPECT_EQ(verdicts[0]["note"], "speed hack: 31 m/s for 4 s <b>sure</b>");
    browser.navigate(base + "/");
    EXPECT_EQ(browser.evaluate("Array.from(document.querySelectorAll('#queue a.player'))"
                               ".map(a => a.textContent).join(',')"),
              "trent");
    // trent's teleport (the trip-wire of the sample: severity 4) says how far and the limit.
    browser.navigate(base + "/player?subject=trent");
    EXPECT_PRED2(matches, why_of_flag(browser, "c == 'reference:movement.teleport'"),
                 std::string("(trip-wire: )?distance 250 m, limit 100 m"))
        << browser.evaluate("Array.from(document.querySelectorAll('#flags > tbody > tr'))"
                            ".map(r => r.children[3].textContent + ': ' + "
                            "r.querySelector('td.why').textContent).join('\\n')");

    // A script that types like a metronome (kaladin's timing checks): its intervals drawn.
    auto made = arbiter::test::run_command(
        {ARBITER_EXE, "simulate", (dir / "bot.arbev").string(), "--players", "metronome=1",
         "--duration-s", "60", "--seed", "3", "--relay", "relay-bot", "--quiet"},
        dir.path());
    ASSERT_EQ(made.exit_status, 0) << made.err;
    send(dir / "bot.arbev", socket, dir.path());
    const std::string bot = json::parse(
        arbiter::test::read_text(dir / "bot.truth.json"))["matches"][0]["players"][0]["account"];
    EXPECT_EQ(bot, "sim-3-1-000001@relay-bot");
    const auto with_bot =
        queue_when(store, [&](const auto& entries) { return flags_of(entries, bot) > 0; });
    ASSERT_GT(flags_of(with_bot, bot), 0u);
    browser.navigate(base + "/player?subject=" + bot);
    EXPECT_NE(
        browser.evaluate("String(document.querySelectorAll('svg.histogram rect.bar').length)"),
        "0");
    // Its timing flag in words: the measure over its window, the limit.
    EXPECT_PRED2(matches, why_of_flag(browser, "c.startsWith('kaladin:timing.')"),
                std::string(".* [0-9.e+-]+( [a-z/]+)? over [0-9]+\\.[0-9] s, "
                                        "limit [0-9.e+-]+.*"));
    arbiter::test::write_bytes(shots / "review-dossier-timing.png", browser.screenshot_png());

    // Logging out ends the session: the queue leads to the login form again.
    browser.evaluate_and_wait_for_load("document.querySelector('form.logout button').click()");
    browser.navigate(base + "/");
    EXPECT_EQ(browser.evaluate("document.title"), "Log in · Arbiter review");
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

TEST(ReviewPage, LookAlikeAndLongAccountsAreDistinctRowsAndTheirLinksWork) {
    const auto program = arbiter::test::HeadlessBrowser::find();
    if (!program)
        GTEST_SKIP() << "no browser: install Debian's chromium (apt-get install chromium) for "
                        "this test";
    arbiter::test::TempDir dir;
    const fs::path socket = dir / "relays.sock";
    const auto server_owned = serve_with_review_page(dir.path(), socket);
    auto& server = *server_owned;
    ASSERT_FALSE(server.review_address().empty()) << server.log();

    // Five players who move 1 km a second: mallory, three who pass for her (a zero-width
    // space, a Cyrillic a, a right-to-left override) and one with a 60 KB account (as
    // long as a line `arbiter import` reads may hold; its hex was past a request's 8 KiB).
    const std::string huge = "huge-" + std::string(60'000, 'x');
    const std::vector<std::string> accounts = {"mallory", "mal\u200Blory", "m\u0430llory",
                                               "\u202Eyrollam", huge};
    std::string rows;
    for (const auto& account : accounts)
        for (int t = 0; t < 6; ++t)
            rows += json{{"source", "s"}, {"game", "g"},           {"player", account},
                         {"t_seconds", t}, {"action_kind", "position"}, {"x", t * 1000},
                         {"y", 0}}
                        .dump() +
                    "\n";
    arbiter::test::write_text(dir / "in.jsonl", rows);
    auto imported = arbiter::test::run_command(
        {ARBITER_EXE, "import", (dir / "in.jsonl").string(), (dir / "in.arbev").string()},
        dir.path());
    ASSERT_EQ(imported.exit_status, 0) << imported.err;
    send(dir / "in.arbev", socket, dir.path());
    arbiter::host::StoreSettings store;
    store.path = (dir / "review.db").string();
    const auto queued = queue_when(store, [&](const auto& entries) {
        for (const auto& account : accounts)
            if (flags_of(entries, account) == 0) return false;
        return true;
    });
    for (const auto& account : accounts)
        ASSERT_GT(flags_of(queued, account), 0u) << account.substr(0, 20);

    const std::string base = "http://" + server.review_address();
    arbiter::test::HeadlessBrowser browser(*program);
    browser.navigate(base + "/login");
    log_in(browser, "alice", kReviewToken);
    ASSERT_EQ(browser.evaluate("document.title"), "Queue · Arbiter review");
    // Five rows a reviewer can tell apart: the look-alikes marked, nothing invisible left,
    // the huge account cut.
    const std::string names = browser.evaluate(
        "Array.from(document.querySelectorAll('#queue a.player')).map(a => a.textContent)"
        ".sort().join('|')");
    EXPECT_EQ(names, "huge-" + std::string(42, 'x') +
                         "\u2026|mallory|\u26A0\\u{202E}yrollam|\u26A0m\\u{0430}llory|"
                         "\u26A0mal\\u{200B}lory");
    arbiter::test::write_bytes(screenshot_dir(dir.path()) / "review-queue-lookalikes.png",
                               browser.screenshot_png());

    // The huge account's link leads to its dossier, which names it whole; a verdict there
    // lands on it.
    browser.evaluate_and_wait_for_load(
        "Array.from(document.querySelectorAll('#queue a.player'))"
        ".find(a => a.textContent.startsWith('huge-')).click()");
    EXPECT_EQ(browser.evaluate("document.getElementById('subject').textContent"), huge);
    browser.evaluate_and_wait_for_load("document.getElementById('inconclusive').click()");
    EXPECT_EQ(json::parse(arbiter::host::ReviewStore(store).dossier(huge)->json)["verdicts"].size(),
              0u);
    browser.evaluate_and_wait_for_load("document.getElementById('record').click()");
    EXPECT_EQ(browser.evaluate("document.getElementById('message').textContent"),
              "Verdict recorded.");
    arbiter::host::ReviewStore review(store);
    EXPECT_EQ(json::parse(review.dossier(huge)->json)["verdicts"].size(), 1u);
    EXPECT_EQ(json::parse(review.dossier("mallory")->json)["verdicts"].size(), 0u);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
}

TEST(ReviewPage, TwoServeHostsOnOnePostgresqlRankTheAccountFlaggedOnBothFirst) {
    std::string why_not;
    auto postgres = arbiter::test::PostgresServer::start(why_not);
    if (!postgres) GTEST_SKIP() << why_not;
    arbiter::test::TempDir dir;
    // Host A (seed 11): player-000003 runs a speed hack, player-000001 teleports (a
    // trip-wire: severity 4). Host B, another relay (seed 15): player-000003 again, with a
    // speed hack: --accounts gives both runs the same people. The truth files say who is
    // who; the seeds were picked so that the speeders coincide.
    auto simulate = [&](const std::string& out, const std::string& players, const std::string& seed,
                        const std::string& relay) {
        auto made = arbiter::test::run_command(
            {ARBITER_EXE, "simulate", (dir / out).string(), "--players", players, "--duration-s",
             "60", "--seed", seed, "--relay", relay, "--accounts", "player", "--quiet"},
            dir.path());
        ASSERT_EQ(made.exit_status, 0) << made.err;
    };
    simulate("a.arbev", "honest=1,speed_hack=1,teleport=1", "11", "relay-a");
    simulate("b.arbev", "honest=2,speed_hack=1", "15", "relay-b");
    auto account_of = [&](const std::string& truth, const std::string& profile) {
        const json parsed = json::parse(arbiter::test::read_text(dir / truth));
        for (const auto& player : parsed["matches"][0]["players"])
            if (player["profile"] == profile) return player["account"].get<std::string>();
        return std::string();
    };
    const std::string both = account_of("a.truth.json", "speed_hack");
    const std::string teleporter = account_of("a.truth.json", "teleport");
    ASSERT_EQ(account_of("b.truth.json", "speed_hack"), both);
    ASSERT_NE(teleporter, both);
    auto config = [&](const std::string& name) {
        const fs::path file = dir / (name + ".toml");
        arbiter::test::write_text(
            file, "[host]\nserver_id = \"" + name + "\"\n\n[store]\npostgres = \"" +
                      postgres->conninfo() +
                      "\"\ncommit_interval_ms = 20\n\n[serve]\nunix_socket = \"" +
                      (dir / (name + ".sock")).string() + "\"\n" + plugins_of_the_sample());
        return file;
    };
    arbiter::test::ServerProcess a(config("host-a"), dir.path());
    arbiter::test::ServerProcess b(config("host-b"), dir.path());
    send(dir / "a.arbev", dir / "host-a.sock", dir.path());
    send(dir / "b.arbev", dir / "host-b.sock", dir.path());

    arbiter::host::StoreSettings store;
    store.postgres = postgres->conninfo();
    const auto entries = queue_when(
        store, [](const auto& queue) { return !queue.empty() && queue.front().servers == 2; });
    ASSERT_GE(entries.size(), 2u);
    EXPECT_EQ(entries[0].subject, both);
    EXPECT_EQ(entries[0].servers, 2u);
    ASSERT_FALSE(entries[0].correlation.empty());
    EXPECT_NE(entries[0].correlation[0].find("flagged on 2 servers"), std::string::npos)
        << entries[0].correlation[0];
    // The teleporter, flagged on one host only, comes after it, whatever its severity.
    const auto other = std::find_if(entries.begin(), entries.end(),
                                    [&](const auto& e) { return e.subject == teleporter; });
    ASSERT_NE(other, entries.end());
    EXPECT_EQ(other->servers, 1u);
    EXPECT_EQ(other->max_severity, 4);
    // `arbiter review` on either host's config says the same.
    auto queue = arbiter::test::run_command(
        {ARBITER_EXE, "review", (dir / "host-b.toml").string(), "queue", "--json"}, dir.path());
    ASSERT_EQ(queue.exit_status, 0) << queue.err;
    EXPECT_EQ(json::parse(arbiter::test::lines_of(queue.out).at(0))["player"], both);
    EXPECT_EQ(a.stop(SIGTERM), 0) << a.log();
    EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}
