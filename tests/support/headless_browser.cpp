#include "support/headless_browser.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace arbiter::test {

using nlohmann::json;

namespace {

std::vector<uint8_t> base64_decode(const std::string& text) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::vector<uint8_t> out;
    uint32_t bits = 0;
    int count = 0;
    for (const char c : text) {
        const int v = value(c);
        if (v < 0) continue;  // padding
        bits = (bits << 6) | static_cast<uint32_t>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<uint8_t>(bits >> count));
        }
    }
    return out;
}

}  // namespace

std::optional<std::filesystem::path> HeadlessBrowser::find() {
    const char* path = std::getenv("PATH");
    std::stringstream folders(path ? path : "/usr/bin:/bin");
    std::string folder;
    while (std::getline(folders, folder, ':'))
        for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
            const auto candidate = std::filesystem::path(folder) / name;
            if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        }
    return std::nullopt;
}

HeadlessBrowser::HeadlessBrowser(const std::filesystem::path& program) {
    int commands[2], replies[2];
    if (::pipe2(commands, O_CLOEXEC) != 0 || ::pipe2(replies, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    log_ = profile_ / "browser.log";
    const std::string profile = "--user-data-dir=" + (profile_ / "profile").string();
    std::vector<std::string> args = {program.string(),          "--headless",
                                     "--remote-debugging-pipe", profile,
                                     "--no-first-run",          "--no-default-browser-check",
                                     "--disable-gpu",           "--disable-extensions",
                                     "--disable-dev-shm-usage", "--hide-scrollbars",
                                     "--window-size=1200,900",  "about:blank"};
    // Chromium's own sandbox refuses to run as root; the tests run as root in CI.
    if (::geteuid() == 0) args.insert(args.begin() + 1, "--no-sandbox");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid_ == 0) {
        // Descriptors 3 and 4 are the protocol's; nothing else is inherited.
        // Moved out of the way first: dup2 onto itself would keep close-on-exec.
        const int log = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int in = ::fcntl(commands[0], F_DUPFD_CLOEXEC, 10);
        const int out = ::fcntl(replies[1], F_DUPFD_CLOEXEC, 10);
        ::dup2(log, 1);
        ::dup2(log, 2);
        ::dup2(in, 3);
        ::dup2(out, 4);
        std::vector<char*> argv;
        for (auto& arg : args)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(commands[0]);
    ::close(replies[1]);
    to_browser_ = commands[1];
    from_browser_ = replies[0];
    try {
        const json created = call("Target.createTarget", {{"url", "about:blank"}}, false);
        const json attached =
            call("Target.attachToTarget", {{"targetId", created.at("targetId")}, {"flatten", true}},
                 false);
        session_ = attached.at("sessionId").get<std::string>();
        call("Page.enable");
        call("Runtime.enable");
    } catch (...) {
        stop();
        throw;
    }
}

HeadlessBrowser::~HeadlessBrowser() {
    stop();
}

void HeadlessBrowser::stop() {
    if (to_browser_ >= 0) ::close(std::exchange(to_browser_, -1));
    if (from_browser_ >= 0) ::close(std::exchange(from_browser_, -1));
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
}

json HeadlessBrowser::next_message() {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
        const size_t end = pending_.find('\0');
        if (end != std::string::npos) {
            json message = json::parse(pending_.substr(0, end));
            pending_.erase(0, end + 1);
            return message;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{from_browser_, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
            throw std::runtime_error("the browser said nothing for " +
                                     std::to_string(timeout_.count()) + " s; its log:\n" +
                                     read_text(log_));
        char chunk[65536];
        const ssize_t got = ::read(from_browser_, chunk, sizeof chunk);
        if (got <= 0)
            throw std::runtime_error("the browser closed its pipe; its log:\n" + read_text(log_));
        pending_.append(chunk, static_cast<size_t>(got));
    }
}

json HeadlessBrowser::call(const std::string& method, json params, bool in_page) {
    const int id = next_id_++;
    json message = {{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (in_page) message["sessionId"] = session_;
    const std::string text = message.dump() + '\0';
    for (size_t sent = 0; sent < text.size();) {
        const ssize_t n = ::write(to_browser_, text.data() + sent, text.size() - sent);
        if (n <= 0)
            throw std::runtime_error("cannot write to the browser: " +
                                     std::string(std::strerror(errno)));
        sent += static_cast<size_t>(n);
    }
    for (;;) {
        json reply = next_message();
        if (reply.contains("id") && reply["id"] == id) {
            if (reply.contains("error"))
                throw std::runtime_error(method + ": " + reply["error"].dump());
            return reply.value("result", json::object());
        }
        if (reply.contains("method")) events_.push_back(std::move(reply));
    }
}

void HeadlessBrowser::wait_for_event(const std::string& method) {
    for (;;) {
        while (!events_.empty()) {
            const json event = std::move(events_.front());
            events_.pop_front();
            if (event.value("method", "") == method && event.value("sessionId", "") == session_)
                return;
        }
        json message = next_message();
        if (message.contains("method")) events_.push_back(std::move(message));
    }
}

void HeadlessBrowser::navigate(const std::string& url) {
    events_.clear();
    const json result = call("Page.navigate", {{"url", url}});
    if (result.contains("errorText"))
        throw std::runtime_error("cannot load " + url + ": " + result["errorText"].dump());
    wait_for_event("Page.loadEventFired");
}

std::string HeadlessBrowser::evaluate(const std::string& expression) {
    const json result =
        call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}});
    if (result.contains("exceptionDetails"))
        throw std::runtime_error("in the page: " + expression + ": " +
                                 result["exceptionDetails"].dump());
    const json value = result.at("result").value("value", json());
    return value.is_string() ? value.get<std::string>() : value.dump();
}

void HeadlessBrowser::evaluate_and_wait_for_load(const std::string& expression) {
    events_.clear();
    evaluate(expression);
    wait_for_event("Page.loadEventFired");
}

void HeadlessBrowser::set_viewport(int width, int height) {
    call("Emulation.setDeviceMetricsOverride",
         {{"width", width}, {"height", height}, {"deviceScaleFactor", 1}, {"mobile", false}});
}

std::vector<uint8_t> HeadlessBrowser::screenshot_png(int width, int max_height) {
    const json metrics = call("Page.getLayoutMetrics");
    double height = metrics.at("cssContentSize").at("height").get<double>();
    if (max_height > 0) height = std::min(height, static_cast<double>(max_height));
    const json shot =
        call("Page.captureScreenshot",
             {{"format", "png"},
              {"captureBeyondViewport", true},
              {"clip", {{"x", 0}, {"y", 0}, {"width", width}, {"height", height}, {"scale", 1}}}});
    return base64_decode(shot.at("data").get<std::string>());
}

}  // namespace arbiter::test
