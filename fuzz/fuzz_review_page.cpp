// The review page on any request: its routes (logged in or not), form and query decoding,
// and the drawings of evidence of any shape. Every answer is a status, never a crash, and
// no answer echoes markup it was given.
//
// Input: byte 0 picks the method and whether the request carries a live session; then the
// target up to the first newline; the rest is the body. The same bytes, when they parse as
// JSON, are also drawn as a dossier's events; they are also checked as a request head
// (request_head.hpp) and shown as a name (showable_name), which must never let a control
// character or a C1 one through, and never grow past its bound.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "store/store.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "fuzz_input.hpp"
#include "review_page/form.hpp"
#include "review_page/render.hpp"
#include "review_page/request_head.hpp"
#include "review_page/site.hpp"

namespace {

using namespace arbiter::host;

struct Fixture {
    std::unique_ptr<review_page::ReviewSite> site;
    std::string cookie;
    std::string form_token;
    std::filesystem::path folder;

    ~Fixture() {
        site.reset();
        std::error_code ignored;
        std::filesystem::remove_all(folder, ignored);
    }

    Fixture() {
        spdlog::set_level(spdlog::level::off);
        char name[] = "/tmp/arbiter-fuzz-review-XXXXXX";
        if (!::mkdtemp(name)) std::abort();
        folder = name;
        StoreSettings settings;
        settings.path = (folder / "review.db").string();
        {
            StoreSink sink(settings, "fuzz", 0.3, 0.7);
            SignalRecord signal;
            signal.plugin = "reference";
            signal.code = "movement.speed";
            signal.player = {"relay", 1, 1};
            signal.score = 0.9;
            signal.confidence = 1;
            signal.account = "mallory";
            signal.evidence_json =
                R"({"from":{"t_us":1,"x":1,"y":2},"to":{"t_us":2,"x":3,"y":4},"intervals_ms":[1,2,3]})";
            sink.on_signal(signal);
            // Both kinds of subject, and an account spelled like the other kind: what a
            // typed `subject=` or an `id=` is read as (canonical_subject).
            signal.account = "";
            sink.on_signal(signal);
            signal.account = "player:relay/1/1";
            sink.on_signal(signal);
            sink.flush();
        }
        site = std::make_unique<review_page::ReviewSite>(settings, "fuzz-token-0123456789");
        const auto login = site->handle({"POST", "/login", "", "application/x-www-form-urlencoded",
                                         "reviewer=fuzz&token=fuzz-token-0123456789", "fuzz"});
        for (const auto& [header, value] : login.headers)
            if (header == "Set-Cookie") cookie = value.substr(0, value.find(';'));
        const std::string page = site->handle({"GET", "/", cookie, "", "", "fuzz"}).body;
        const auto at = page.find("name=\"form_token\" value=\"");
        if (at == std::string::npos || cookie.empty()) std::abort();
        form_token = page.substr(at + 25, 64);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Fixture fixture;
    if (size == 0) return 0;
    const std::string text(arbiter::fuzz::as_text(data + 1, size - 1));
    const size_t newline = text.find('\n');
    review_page::Request request;
    static const char* kMethods[] = {"GET", "POST", "PUT", "HEAD"};
    request.method = kMethods[data[0] & 3];
    request.target = text.substr(0, newline);
    request.body = newline == std::string::npos ? "" : text.substr(newline + 1);
    request.content_type = "application/x-www-form-urlencoded";
    request.peer = "fuzz";
    if (data[0] & 4) request.cookie = fixture.cookie;
    // With bit 3 the body's own form token is replaced by the session's, to reach a verdict.
    if (data[0] & 8) request.body += "&form_token=" + fixture.form_token;
    const auto response = fixture.site->handle(request);
    if (response.status < 200 || response.status > 599) std::abort();
    if (response.body.find("<script") != std::string::npos) std::abort();

    (void)canonical_subject(text);
    (void)review_page::parse_urlencoded(text);
    (void)review_page::cookie_value(text, "arbiter_review");
    const size_t head_end = text.find("\r\n\r\n");
    const std::string head =
        head_end == std::string::npos ? text + "\r\n\r\n" : text.substr(0, head_end + 4);
    if (const auto problem = review_page::check_request_head(head))
        if ((problem->status != 400 && problem->status != 501) || problem->why.empty())
            std::abort();
    const size_t max_chars = data[0] & 0x3F;
    const ShownName shown = show_name(text, max_chars);
    size_t characters = 0;
    for (size_t i = 0; i < shown.text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(shown.text[i]);
        if (byte < 0x20 || byte == 0x7F) std::abort();
        if (byte == 0xC2 && i + 1 < shown.text.size() &&
            static_cast<unsigned char>(shown.text[i + 1]) < 0xA0)
            std::abort();  // U+0080 to U+009F: C1 controls
        characters += (byte & 0xC0) != 0x80;
    }
    if (!is_valid_utf8(shown.text)) std::abort();
    if (max_chars >= 2 && characters > max_chars) std::abort();
    (void)review_page::html_name(text, max_chars);
    const auto parsed = parse_untrusted_json(text, 1 << 20);
    if (parsed.ok()) {
        (void)review_page::path_plot_svg(parsed.value);
        (void)review_page::interval_histograms_svg(parsed.value);
    }
    return 0;
}
