#include "serve/file_watcher.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace arbiter::host::serve {

namespace {

constexpr uint32_t kChangeMask = IN_CLOSE_WRITE | IN_MOVED_TO;

std::filesystem::path absolute_of(const std::filesystem::path& path) {
    std::error_code ignored;
    auto absolute = std::filesystem::absolute(path, ignored);
    return (ignored ? path : absolute).lexically_normal();
}

}  // namespace

FileWatcher::FileWatcher(std::chrono::milliseconds settle) : settle_(settle) {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0)
        throw std::runtime_error(std::string("cannot watch files (inotify): ") +
                                 std::strerror(errno));
}

FileWatcher::~FileWatcher() {
    if (fd_ >= 0) ::close(fd_);
}

void FileWatcher::watch(const std::vector<WatchedFile>& files) {
    for (const auto& [descriptor, folder] : folders_)
        ::inotify_rm_watch(fd_, descriptor);
    folders_.clear();
    files_.clear();
    std::set<std::filesystem::path> folders;
    for (WatchedFile file : files) {
        file.path = absolute_of(file.path);
        files_.push_back(file);
        folders.insert(file.path.parent_path());
    }
    for (const auto& folder : folders) {
        const int descriptor = ::inotify_add_watch(fd_, folder.c_str(), kChangeMask);
        if (descriptor < 0) {
            spdlog::warn("cannot watch {} for changes: {}; changes there need `arbiter ctl reload`",
                         folder.string(), std::strerror(errno));
            continue;
        }
        folders_[descriptor] = folder;
    }
}

void FileWatcher::read_events() {
    alignas(inotify_event) char buffer[16 * 1024];
    while (true) {
        const ssize_t length = ::read(fd_, buffer, sizeof buffer);
        if (length <= 0) return;  // EAGAIN: all read
        for (ssize_t at = 0; at < length;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            auto folder = folders_.find(event->wd);
            if (folder == folders_.end() || event->len == 0) continue;
            const auto changed = folder->second / event->name;
            for (const auto& file : files_)
                if (file.path == changed)
                    pending_[changed] = std::chrono::steady_clock::now() + settle_;
        }
    }
}

std::vector<WatchedFile> FileWatcher::settled() {
    std::vector<WatchedFile> out;
    const auto now = std::chrono::steady_clock::now();
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second > now) {
            ++it;
            continue;
        }
        for (const auto& file : files_)
            if (file.path == it->first) out.push_back(file);
        it = pending_.erase(it);
    }
    return out;
}

int FileWatcher::next_timeout_ms() const {
    if (pending_.empty()) return -1;
    auto soonest = pending_.begin()->second;
    for (const auto& [path, when] : pending_)
        soonest = std::min(soonest, when);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        soonest - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, wait.count() + 1));
}

}  // namespace arbiter::host::serve
