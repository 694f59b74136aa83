// Progress of long work, for a person watching a terminal: simulate, import, replay,
// evaluate and baseline each say how far they are; what is shown, if anything, is the
// display's business. Nothing is shown when stderr is not a terminal or with --quiet, so
// scripts, pipes and the tests see the same output as before.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::host {

enum class ProgressUnit { bytes, events, seconds_of_play };

class Progress {
  public:
    virtual ~Progress() = default;
    // A stretch of work of `total` units (0 when unknown), named for the person watching.
    virtual void start(std::string_view what, uint64_t total, ProgressUnit unit) = 0;
    // Where the work stands, in the same units: absolute, not added.
    virtual void update(uint64_t done) = 0;
    // The stretch is over: the display leaves the terminal as it found it.
    virtual void finish() = 0;
    // Something else is about to be written to the terminal: the line is erased (the next
    // update draws it again below).
    virtual void clear_line() {}
};

class NoProgress final : public Progress {
  public:
    void start(std::string_view, uint64_t, ProgressUnit) override {}
    void update(uint64_t) override {}
    void finish() override {}
};

// One line, drawn at the first update, redrawn in place at most ten times a second, and
// erased at the end (the rate from a second of work on, the time left from 1 % on too):
//   replay    [#########...........]  45%  36.2 MB of 80.4 MB  12.1 MB/s  4 s left
class TerminalProgress final : public Progress {
  public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    explicit TerminalProgress(std::FILE* out, Clock clock = std::chrono::steady_clock::now);
    ~TerminalProgress() override;

    void start(std::string_view what, uint64_t total, ProgressUnit unit) override;
    void update(uint64_t done) override;
    void finish() override;
    void clear_line() override;

    // The line as it would be drawn now (without the carriage return), for the tests.
    std::string line(uint64_t done) const;

  private:
    void draw(uint64_t done);

    std::FILE* out_;
    Clock clock_;
    std::string what_;
    uint64_t total_ = 0;
    ProgressUnit unit_ = ProgressUnit::bytes;
    std::chrono::steady_clock::time_point started_{}, last_drawn_{};
    bool active_ = false;
    bool drawn_ = false;       // the line is on the terminal now
    bool drawn_once_ = false;  // in this stretch
};

// One stretch of work, finished however the work leaves the scope (an exception too), so
// that a message printed after it never lands on the progress line.
class ProgressStretch {
  public:
    ProgressStretch(Progress* progress, std::string_view what, uint64_t total, ProgressUnit unit)
        : progress_(progress ? *progress : silent_) {
        progress_.start(what, total, unit);
    }
    ~ProgressStretch() { progress_.finish(); }
    ProgressStretch(const ProgressStretch&) = delete;
    ProgressStretch& operator=(const ProgressStretch&) = delete;
    void update(uint64_t done) { progress_.update(done); }

  private:
    NoProgress silent_;
    Progress& progress_;
};

// Files read one after another as one stretch of bytes: where the reader stands in the
// current file, plus every file before it. Finishes the stretch when it goes.
class FileSetProgress {
  public:
    FileSetProgress(Progress& progress, std::string_view what,
                    const std::vector<std::filesystem::path>& files);
    ~FileSetProgress() { progress_.finish(); }
    FileSetProgress(const FileSetProgress&) = delete;
    FileSetProgress& operator=(const FileSetProgress&) = delete;

    // The reader of files[index] stands at `offset`.
    void at(size_t index, uint64_t offset);

  private:
    Progress& progress_;
    std::vector<uint64_t> starts_;  // of each file in the whole stretch
};

// A TerminalProgress on stderr when stderr is a terminal and `quiet` is false; a
// NoProgress otherwise.
std::unique_ptr<Progress> progress_on_stderr(bool quiet);

}  // namespace arbiter::host
