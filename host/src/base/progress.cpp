#include "arbiter/host/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace arbiter::host {

namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 20;
// The first draw comes at the first update, a few microseconds and bytes in, where a rate
// is noise (a file's header read in 60 us is 270 kB/s) and the time left from it nonsense
// (15 minutes for 3 seconds of work). Neither is shown before a second of work, and the
// time left not before a hundredth of the total, when the rate has settled.
constexpr double kRateAfterSeconds = 1.0;
constexpr double kTimeLeftAfterFraction = 0.01;

std::string amount(double value, ProgressUnit unit) {
    switch (unit) {
        case ProgressUnit::bytes:
            if (value >= 1e9) return fmt::format("{:.1f} GB", value / 1e9);
            if (value >= 1e6) return fmt::format("{:.1f} MB", value / 1e6);
            if (value >= 1e3) return fmt::format("{:.1f} kB", value / 1e3);
            return fmt::format("{:.0f} B", value);
        case ProgressUnit::events:
            if (value >= 1e6) return fmt::format("{:.2f} M events", value / 1e6);
            if (value >= 1e3) return fmt::format("{:.1f} k events", value / 1e3);
            return fmt::format("{:.0f} events", value);
        case ProgressUnit::seconds_of_play:
            return fmt::format("{:.0f} s of play", value);
    }
    return {};
}

std::string duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto whole = static_cast<uint64_t>(seconds + 0.5);
    if (whole >= 3600)
        return fmt::format("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60);
    if (whole >= 60) return fmt::format("{}:{:02}", whole / 60, whole % 60);
    return fmt::format("{} s", whole);
}

}  // namespace

TerminalProgress::TerminalProgress(std::FILE* out, Clock clock)
    : out_(out), clock_(std::move(clock)) {}

TerminalProgress::~TerminalProgress() {
    finish();
}

void TerminalProgress::start(std::string_view what, uint64_t total, ProgressUnit unit) {
    finish();
    what_ = what;
    total_ = total;
    unit_ = unit;
    started_ = clock_();
    last_drawn_ = started_;
    drawn_once_ = false;
    active_ = true;
}

void TerminalProgress::update(uint64_t done) {
    if (!active_) return;
    // The first update draws (finish erases it again, so short work leaves no trace); then
    // at most ten redraws a second, however often the work reports.
    const auto now = clock_();
    if (drawn_once_ && now - last_drawn_ < kRedrawEvery) return;
    drawn_once_ = true;
    last_drawn_ = now;
    draw(done);
}

void TerminalProgress::finish() {
    if (!active_) return;
    active_ = false;
    clear_line();
}

void TerminalProgress::clear_line() {
    if (!drawn_) return;
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
    drawn_ = false;
}

std::string TerminalProgress::line(uint64_t done) const {
    const double seconds = std::chrono::duration<double>(clock_() - started_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    std::string text = fmt::format("{:<9} ", what_);
    if (total_ > 0) {
        const double fraction =
            std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
        const int filled = static_cast<int>(fraction * kBarWidth);
        text += fmt::format("[{:#<{}}{:.<{}}]", "", filled, "", kBarWidth - filled);
        if (unit_ == ProgressUnit::seconds_of_play)
            text += fmt::format(" {:3.0f}%  {} s of {}", fraction * 100.0, done,
                                amount(static_cast<double>(total_), unit_));
        else
            text += fmt::format(" {:3.0f}%  {} of {}", fraction * 100.0,
                                amount(static_cast<double>(done), unit_),
                                amount(static_cast<double>(total_), unit_));
    } else {
        text += amount(static_cast<double>(done), unit_);
    }
    if (rate > 0 && seconds >= kRateAfterSeconds) {
        // Seconds of play per second of work is a speed-up over real time.
        text += unit_ == ProgressUnit::seconds_of_play ? fmt::format("  {:.0f}x real time", rate)
                                                       : fmt::format("  {}/s", amount(rate, unit_));
        if (total_ > done &&
            static_cast<double>(done) >= kTimeLeftAfterFraction * static_cast<double>(total_))
            text += "  " + duration(static_cast<double>(total_ - done) / rate) + " left";
    }
    return text;
}

void TerminalProgress::draw(uint64_t done) {
    std::fprintf(out_, "\r%s\x1b[K", line(done).c_str());
    std::fflush(out_);
    drawn_ = true;
}

FileSetProgress::FileSetProgress(Progress& progress, std::string_view what,
                                 const std::vector<std::filesystem::path>& files)
    : progress_(progress) {
    uint64_t total = 0;
    for (const auto& file : files) {
        starts_.push_back(total);
        std::error_code error;
        const auto size = std::filesystem::file_size(file, error);
        if (!error) total += size;  // an unreadable file is reported by its reader
    }
    progress_.start(what, total, ProgressUnit::bytes);
}

void FileSetProgress::at(size_t index, uint64_t offset) {
    if (index < starts_.size()) progress_.update(starts_[index] + offset);
}

std::unique_ptr<Progress> progress_on_stderr(bool quiet) {
    if (quiet || !::isatty(STDERR_FILENO)) return std::make_unique<NoProgress>();
    return std::make_unique<TerminalProgress>(stderr);
}

}  // namespace arbiter::host
