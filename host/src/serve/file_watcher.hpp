// Notices when the config or a plugin library is replaced on disk, so that
// `arbiter serve` reloads it. Watches the folders, not the files: deploy tools replace
// a file by renaming a new one over it, which a watch on the old file would miss.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace arbiter::host::serve {

struct WatchedFile {
    std::filesystem::path path;
    std::string plugin;  // the plugin it is the library or signature of; "" for the config
};

class FileWatcher {
  public:
    // Throws std::runtime_error when inotify is unavailable.
    explicit FileWatcher(std::chrono::milliseconds settle);
    ~FileWatcher();
    FileWatcher(const FileWatcher&) = delete;
    FileWatcher& operator=(const FileWatcher&) = delete;

    int fd() const { return fd_; }
    // Replaces the set of files watched.
    void watch(const std::vector<WatchedFile>& files);
    // Reads what inotify has; a watched file written or renamed into place starts (or
    // restarts) its settle timer.
    void read_events();
    // The files whose settle time has passed since their last change; each once.
    std::vector<WatchedFile> settled();
    // How long until the next file settles, or -1 when none is pending (for poll()).
    int next_timeout_ms() const;

  private:
    int fd_ = -1;
    std::chrono::milliseconds settle_;
    std::map<int, std::filesystem::path> folders_;  // watch descriptor → folder
    std::vector<WatchedFile> files_;
    std::map<std::filesystem::path, std::chrono::steady_clock::time_point> pending_;
};

}  // namespace arbiter::host::serve
