// What the event thread hands back to the network thread: bytes for a connection,
// new paths to watch, and word that the drain is complete. Posting wakes the network
// thread through an eventfd.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "serve/file_watcher.hpp"

namespace arbiter::host::serve {

struct Reply {
    uint64_t connection = 0;
    std::vector<uint8_t> bytes;
    bool close_after = false;  // a control reply: the connection ends once it is sent
};

struct Mail {
    std::vector<Reply> replies;
    std::optional<std::vector<WatchedFile>> watch;  // the files to watch now
    bool drained = false;
};

class Outbox {
  public:
    explicit Outbox(int wake_fd) : wake_fd_(wake_fd) {}

    void post(Reply reply) {
        {
            std::lock_guard lock(mutex_);
            mail_.replies.push_back(std::move(reply));
        }
        wake();
    }
    void post_watch(std::vector<WatchedFile> files) {
        {
            std::lock_guard lock(mutex_);
            mail_.watch = std::move(files);
        }
        wake();
    }
    void post_drained() {
        {
            std::lock_guard lock(mutex_);
            mail_.drained = true;
        }
        wake();
    }
    Mail take() {
        std::lock_guard lock(mutex_);
        return std::exchange(mail_, Mail{});
    }

  private:
    void wake() {
        const uint64_t one = 1;
        // A full eventfd counter already means "wake up"; nothing is lost if this fails.
        [[maybe_unused]] auto written = ::write(wake_fd_, &one, sizeof one);
    }

    int wake_fd_;
    std::mutex mutex_;
    Mail mail_;
};

}  // namespace arbiter::host::serve
