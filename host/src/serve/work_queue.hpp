// What the network thread hands the event thread, in arrival order, with a bound on
// the bytes waiting: when the queue is full the network thread takes no further frame
// from any relay (what it has read waits in that connection's decoder, and it reads no
// more), so the kernel's socket buffers fill and TCP or the Unix socket pushes back on
// the relay. Nothing received is ever dropped for want of room. The bound: the network
// thread pushes a frame only while the queue holds less than its capacity, so the bytes
// waiting never pass capacity + one frame (serve.max_queued_bytes + host.max_batch_bytes);
// the one exception is a drain, which takes what the kernel already held for each relay.
//
// The urgent side holds commands and reload steps. It is bounded by what may ask: one
// item per control or scrape connection (their number is capped), one reload per
// configured plugin and one config change (a request equal to one still waiting is the
// same request, and is not queued twice), and one `installed` or `config_loaded` per load
// in flight (EventProcessor runs one load per plugin and one for the config at a time).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"
#include "arbiter/host/dispatch.hpp"

namespace arbiter::host::serve {

// server_config.toml read, and the plugins its change must load made, on the loader
// thread: what the event thread needs to apply it in one short step.
struct ConfigLoad {
    std::optional<ServerConfig> next;   // empty when the file was refused
    std::vector<std::string> problems;  // why it was
    std::vector<PluginSlot> prepared;   // Host::plugins_to_load, each made by prepare_plugin
};

struct Work {
    enum class Kind {
        batch,           // a relay's batch
        sync,            // a relay asks to hear back once everything before is processed
        closed,          // a relay's connection ended
        control,         // an `arbiter ctl` command
        metrics,         // a scrape of /metrics (offset: relays connected; payload "HEAD" or "GET")
        reload,          // reload a plugin (its file changed, or ctl asked)
        config_changed,  // server_config.toml changed (or ctl asked)
        installed,       // a new plugin generation is ready to be swapped in
        config_loaded,   // a changed config is read and its new plugins made
        drain,           // SIGTERM: everything before this is all there will be
    };
    Kind kind = Kind::batch;
    uint64_t connection = 0;               // who asked, and who hears the reply; 0 = nobody
    std::vector<uint8_t> payload;          // batch bytes, sync payload
    uint64_t offset = 0;                   // of the frame in its stream; metrics: relays connected
    std::string text;                      // control command, plugin name, connections (JSON)
    std::shared_ptr<PluginSlot> prepared;  // installed
    std::shared_ptr<ConfigLoad> config;    // config_loaded
};

class WorkQueue {
  public:
    explicit WorkQueue(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

    // Relays' frames, counted against the capacity.
    void push(Work work) {
        std::lock_guard lock(mutex_);
        bytes_ += work.payload.size();
        peak_bytes_ = std::max(peak_bytes_, bytes_);
        items_.push_back(std::move(work));
        ready_.notify_one();
    }
    // Commands and reload steps: never held back by a full queue, and taken first, so
    // that `arbiter ctl` answers and a swap happens between two batches even under load.
    void push_urgent(Work work) {
        std::lock_guard lock(mutex_);
        if (work.connection == 0 &&
            (work.kind == Work::Kind::reload || work.kind == Work::Kind::config_changed)) {
            for (const Work& waiting : urgent_)
                if (waiting.connection == 0 && waiting.kind == work.kind &&
                    waiting.text == work.text)
                    return;  // the file changed again before the first request was taken
        }
        urgent_.push_back(std::move(work));
        ready_.notify_one();
    }
    bool has_room() const {
        std::lock_guard lock(mutex_);
        return bytes_ < capacity_;
    }
    uint64_t queued_bytes() const {
        std::lock_guard lock(mutex_);
        return bytes_;
    }
    // The most that was ever waiting: what the bound above promises, seen from outside.
    uint64_t peak_bytes() const {
        std::lock_guard lock(mutex_);
        return peak_bytes_;
    }
    size_t urgent_items() const {
        std::lock_guard lock(mutex_);
        return urgent_.size();
    }
    uint64_t capacity() const { return capacity_; }

    std::optional<Work> pop(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        if (!ready_.wait_for(lock, timeout, [&] { return !urgent_.empty() || !items_.empty(); }))
            return std::nullopt;
        std::deque<Work>& from = urgent_.empty() ? items_ : urgent_;
        Work work = std::move(from.front());
        from.pop_front();
        if (&from == &items_) bytes_ -= work.payload.size();
        return work;
    }

  private:
    const uint64_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Work> items_;
    std::deque<Work> urgent_;
    uint64_t bytes_ = 0;
    uint64_t peak_bytes_ = 0;
};

}  // namespace arbiter::host::serve
