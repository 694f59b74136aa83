// A real browser for the tests: Debian's headless Chromium, driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: JSON messages ended by a NUL on descriptors
// 3 and 4), the way Puppeteer's pipe mode does it, without a WebSocket or a driver.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"

namespace arbiter::test {

class HeadlessBrowser {
  public:
    // The browser's program (chromium, chromium-browser, google-chrome on the PATH), or
    // nullopt when none is installed.
    static std::optional<std::filesystem::path> find();

    // Starts it with a fresh profile and opens one tab. Throws std::runtime_error (with
    // what the browser said) when it does not come up.
    explicit HeadlessBrowser(const std::filesystem::path& program);
    ~HeadlessBrowser();
    HeadlessBrowser(const HeadlessBrowser&) = delete;
    HeadlessBrowser& operator=(const HeadlessBrowser&) = delete;

    // Loads `url` and waits for its load event.
    void navigate(const std::string& url);
    // Runs `expression` in the page and returns its value (a string as it is, anything else
    // as JSON). A thrown exception is a std::runtime_error.
    std::string evaluate(const std::string& expression);
    // Runs `expression` (a click on a link or a submit button) and waits for the page it
    // leads to (after any redirects) to load.
    void evaluate_and_wait_for_load(const std::string& expression);
    // Lays the page out as on a screen `width` by `height` CSS pixels (a phone's, say), so
    // that its narrow-screen style applies; the next screenshot_png(width) shows it.
    void set_viewport(int width, int height);
    // The page as a PNG, `width` CSS pixels wide and as tall as its content (its top
    // `max_height` pixels when that is not 0).
    std::vector<uint8_t> screenshot_png(int width = 1200, int max_height = 0);

  private:
    nlohmann::json call(const std::string& method, nlohmann::json params = nlohmann::json::object(),
                        bool in_page = true);
    nlohmann::json next_message();
    void stop();
    void wait_for_event(const std::string& method);

    pid_t pid_ = -1;
    int to_browser_ = -1, from_browser_ = -1;
    std::string pending_;  // bytes read past the last message
    std::deque<nlohmann::json> events_;
    int next_id_ = 1;
    std::string session_;
    TempDir profile_;
    std::filesystem::path log_;
    std::chrono::seconds timeout_{30};
};

}  // namespace arbiter::test
