#include "arbiter/host/snapshot_handover.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "arbiter/host/host_services.hpp"

namespace arbiter::host {

// What the forked copy sends before its state (or its error): both ends are the same
// build, so the header goes as the bytes of this struct.
struct SnapshotHandover::ChildAnswer {
    static constexpr uint32_t kMagic = 0x41524253;  // "ARBS"
    uint32_t magic = kMagic;
    uint32_t saved = 0;  // 1: the state follows; 0: the save's error text does
    uint64_t save_ns = 0;
    uint64_t size = 0;
};

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

bool write_all(int fd, const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    while (size > 0) {
        const ssize_t wrote = ::write(fd, bytes, size);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return false;
        bytes += wrote;
        size -= static_cast<size_t>(wrote);
    }
    return true;
}

}  // namespace

// The forked copy: saves, answers, and leaves without running a destructor or an
// atexit handler of the host's (they belong to the parent: sockets, logs, files).
void SnapshotHandover::save_in_forked_copy(AnalyzerInstance& old, int to_parent) {
    services_in_forked_copy();
    const auto start = Clock::now();
    std::optional<std::vector<uint8_t>> state;
    std::string error;
    try {
        state = old.save_state(error);
    } catch (const std::exception& thrown) {
        error = thrown.what();
    } catch (...) {
        error = "the save threw";
    }
    ChildAnswer answer;
    answer.saved = state ? 1 : 0;
    answer.save_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    answer.size = state ? state->size() : error.size();
    const bool sent =
        write_all(to_parent, &answer, sizeof answer) &&
        write_all(to_parent, state ? state->data() : static_cast<const void*>(error.data()),
                  answer.size);
    ::_exit(sent ? 0 : 1);
}

void SnapshotHandover::make_the_next_fork_cheaper() {
    ::malloc_trim(0);
}

std::unique_ptr<SnapshotHandover> SnapshotHandover::begin(
    std::unique_ptr<AnalyzerInstance>& old, std::unique_ptr<AnalyzerInstance>& fresh,
    std::string& error, size_t kept_bytes, std::chrono::milliseconds save_deadline,
    std::chrono::milliseconds catch_up_patience) {
    if (!old || !fresh || !old->in_process()) {
        error = "only an instance in the host's own process can be saved by a fork";
        return nullptr;
    }
    int ends[2];
    // Close-on-exec: a child another thread spawns (an isolated plugin's runner) must not
    // hold the write end open, or the end of the copy's answer would never be seen.
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        error = fmt::format("no pipe for the forked copy: {}", std::strerror(errno));
        return nullptr;
    }
    // A larger pipe: fewer trips for a state of many megabytes (best effort).
    ::fcntl(ends[0], F_SETPIPE_SZ, 1 << 20);
    const pid_t parent = ::getpid();
    const auto start = Clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        // A copy whose host died (and cannot kill it) must not live on holding the host's
        // sockets: it dies with the thread that forked it.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);
        ::close(ends[0]);
        save_in_forked_copy(*old, ends[1]);
    }
    const double fork_us = us_since(start);
    ::close(ends[1]);
    if (child < 0) {
        error = fmt::format("fork failed: {}", std::strerror(errno));
        ::close(ends[0]);
        return nullptr;
    }
    std::unique_ptr<SnapshotHandover> handover;
    try {
        handover.reset(
            new SnapshotHandover(child, ends[0], kept_bytes, save_deadline, catch_up_patience));
        handover->result_.fork_us = fork_us;
        handover->old_ = std::move(old);
        handover->fresh_ = std::move(fresh);
        handover->thread_ = std::thread([h = handover.get()] { h->run(); });
    } catch (const std::exception& thrown) {
        // No thread (out of memory, or of threads): everything back as it was.
        error = fmt::format("no thread for the handover: {}", thrown.what());
        if (handover) {
            if (handover->old_) old = std::move(handover->old_);
            if (handover->fresh_) fresh = std::move(handover->fresh_);
        } else {
            ::close(ends[0]);
        }
        ::kill(child, SIGKILL);
        int status = 0;
        while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        return nullptr;
    }
    return handover;
}

SnapshotHandover::SnapshotHandover(pid_t child, int from_child, size_t kept_bytes,
                                   std::chrono::milliseconds save_deadline,
                                   std::chrono::milliseconds catch_up_patience)
    : child_(child),
      from_child_(from_child),
      kept_limit_(kept_bytes),
      save_deadline_(save_deadline),
      catch_up_patience_(catch_up_patience) {}

SnapshotHandover::~SnapshotHandover() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
    if (from_child_ >= 0) ::close(from_child_);
}

bool SnapshotHandover::receive(ChildAnswer& answer, std::vector<uint8_t>& body,
                               std::string& error) {
    const auto deadline = Clock::now() + save_deadline_;
    size_t got = 0;  // of the header, then of the body
    bool in_body = false;
    while (true) {
        {
            std::lock_guard lock(mutex_);
            if (stop_) {
                error = "the host stopped before the forked copy answered";
                return false;
            }
        }
        if (Clock::now() >= deadline) {
            error = fmt::format(
                "the forked copy did not save within {} s",
                std::chrono::duration_cast<std::chrono::seconds>(save_deadline_).count());
            return false;
        }
        pollfd wait{from_child_, POLLIN, 0};
        const int ready = ::poll(&wait, 1, 100);
        if (ready < 0 && errno != EINTR) {
            error = fmt::format("waiting for the forked copy: {}", std::strerror(errno));
            return false;
        }
        if (ready <= 0) continue;
        uint8_t* into = in_body ? body.data() + got : reinterpret_cast<uint8_t*>(&answer) + got;
        const size_t want = in_body ? body.size() - got : sizeof answer - got;
        const ssize_t read = ::read(from_child_, into, want);
        if (read < 0 && errno == EINTR) continue;
        if (read <= 0) {
            error = read == 0 ? "the forked copy ended before it answered (it died in the save)"
                              : fmt::format("reading the forked copy: {}", std::strerror(errno));
            return false;
        }
        got += static_cast<size_t>(read);
        if (!in_body && got == sizeof answer) {
            if (answer.magic != ChildAnswer::kMagic || answer.size > (uint64_t{1} << 40)) {
                error = fmt::format(
                    "the forked copy's answer has a bad header (magic {:#x}, {} bytes said)",
                    answer.magic, answer.size);
                return false;
            }
            body.resize(static_cast<size_t>(answer.size));
            in_body = true;
            got = 0;
        }
        if (in_body && got == body.size()) return true;
    }
}

bool SnapshotHandover::read_from_child(std::optional<std::vector<uint8_t>>& state,
                                       std::string& error) {
    ChildAnswer answer;
    std::vector<uint8_t> body;
    bool answered = false;
    try {
        answered = receive(answer, body, error);
    } catch (const std::exception& thrown) {
        // No room for the state (out of memory): the reload is made whole, not the host
        // ended by an exception on this thread.
        error = fmt::format("taking the forked copy's answer: {}", thrown.what());
    }
    // The copy is reaped here, once, whatever happened: killed first unless it answered.
    if (!answered) ::kill(child_, SIGKILL);
    int status = 0;
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    if (!answered) return false;
    {
        std::lock_guard lock(mutex_);
        result_.save_us = static_cast<double>(answer.save_ns) / 1000.0;
    }
    if (answer.saved)
        state = std::move(body);
    else
        error.assign(body.begin(), body.end());
    return true;
}

void SnapshotHandover::run() {
    std::optional<std::vector<uint8_t>> state;
    std::string error;
    if (!read_from_child(state, error)) {
        std::unique_lock lock(mutex_);
        result_.error = error;
        finish(Outcome::snapshot_failed, lock);
        return;
    }
    if (!state) {
        std::unique_lock lock(mutex_);
        result_.error = error;
        finish(Outcome::save_refused, lock);
        return;
    }
    const auto restore_start = Clock::now();
    CallResult restored;
    try {
        restored = fresh_->restore_state(*state);
    } catch (const std::exception& thrown) {
        restored.status = ARB_ERR_INTERNAL;
        restored.error = thrown.what();
    }
    const double restore_us = us_since(restore_start);
    const size_t bytes = state->size();
    if (!restored.ok()) {
        std::unique_lock lock(mutex_);
        result_.bytes = bytes;
        result_.restore_us = restore_us;
        result_.restored = std::move(restored);
        finish(Outcome::restore_refused, lock);
        return;
    }
    state.reset();  // the memory back before the catch-up

    // The catch-up: the kept calls, in the order they were made, until none is left. The
    // last look at an empty queue and the end are under one lock, so no call is kept
    // after it: the next goes to the new instance.
    fresh_->set_quiet(true);
    const auto catch_up_start = Clock::now();
    const auto throttle_at = catch_up_start + catch_up_patience_;
    uint64_t made = 0;
    std::unique_lock lock(mutex_);
    while (!stop_ && !kept_.empty()) {
        if (!result_.throttled && Clock::now() >= throttle_at) result_.throttled = true;
        Kept call = std::move(kept_.front());
        kept_.pop_front();
        kept_bytes_ -= call.batch ? call.batch->bytes.size() : 0;
        lock.unlock();
        room_or_done_.notify_all();
        try {
            if (call.batch)
                fresh_->on_batch(*call.batch);
            else
                fresh_->on_match_end(call.relay_id, call.match_id);
        } catch (...) {
            // The instance's own call wrapper catches what a plugin throws; anything here
            // is the host's (out of memory) and the call is lost for the new instance only.
        }
        ++made;
        lock.lock();
        if (result_.throttled) ++made_since_throttle_;
    }
    fresh_->set_quiet(false);
    result_.bytes = bytes;
    result_.restore_us = restore_us;
    result_.restored = std::move(restored);
    result_.catch_up_us = us_since(catch_up_start);
    result_.calls_made_again = made;
    if (stop_) return;
    finish(Outcome::carried, lock);
}

void SnapshotHandover::finish(Outcome outcome, std::unique_lock<std::mutex>& lock) {
    result_.outcome = outcome;
    if (outcome != Outcome::carried) {
        // Nothing kept is made again: the new instance (when it answers) starts fresh from
        // here, as after a whole reload that carried nothing.
        kept_.clear();
        kept_bytes_ = 0;
    }
    done_ = true;
    lock.unlock();
    room_or_done_.notify_all();
}

bool SnapshotHandover::keep(Kept call, size_t bytes, std::unique_lock<std::mutex>& lock) {
    if (!done_ && kept_bytes_ + bytes > kept_limit_ && kept_bytes_ > 0) {
        const auto start = Clock::now();
        room_or_done_.wait(lock, [&] { return done_ || kept_bytes_ + bytes <= kept_limit_; });
        result_.waited_us += us_since(start);
    }
    if (!done_ && result_.throttled) {
        // Two made again for each one kept: the kept calls run out at half the pace.
        const auto start = Clock::now();
        room_or_done_.wait(
            lock, [&] { return done_ || made_since_throttle_ >= 2 * kept_since_throttle_; });
        const double waited = us_since(start);
        result_.throttled_us += waited;
        result_.longest_throttle_us = std::max(result_.longest_throttle_us, waited);
        if (!done_) ++kept_since_throttle_;
    }
    if (done_) return false;
    kept_.push_back(std::move(call));
    kept_bytes_ += bytes;
    result_.most_kept_bytes = std::max(result_.most_kept_bytes, kept_bytes_);
    lock.unlock();
    return true;
}

CallResult SnapshotHandover::on_batch(const VerifiedBatch& batch) {
    std::unique_lock lock(mutex_);
    if (!done_ && keep(Kept{batch, {}, 0}, batch.bytes.size(), lock)) return old_->on_batch(batch);
    if (lock.owns_lock()) lock.unlock();
    return answering().on_batch(batch);
}

CallResult SnapshotHandover::on_match_end(const std::string& relay_id, uint64_t match_id) {
    std::unique_lock lock(mutex_);
    if (!done_ && keep(Kept{std::nullopt, relay_id, match_id}, 0, lock))
        return old_->on_match_end(relay_id, match_id);
    if (lock.owns_lock()) lock.unlock();
    return answering().on_match_end(relay_id, match_id);
}

std::optional<std::vector<uint8_t>> SnapshotHandover::save_state(std::string& error) {
    std::unique_lock lock(mutex_);
    AnalyzerInstance& now = done_ ? answering() : *old_;
    lock.unlock();
    return now.save_state(error);
}

CallResult SnapshotHandover::restore_state(std::span<const uint8_t>) {
    throw std::logic_error("a state restored during a reload's handover (the host ends it first)");
}

CallResult SnapshotHandover::configure(const PluginSettings&, std::span<const uint8_t>) {
    throw std::logic_error("a config given during a reload's handover (the host ends it first)");
}

bool SnapshotHandover::done() const {
    std::lock_guard lock(mutex_);
    return done_;
}

void SnapshotHandover::wait_done() {
    std::unique_lock lock(mutex_);
    room_or_done_.wait(lock, [&] { return done_; });
}

SnapshotHandover::Outcome SnapshotHandover::outcome() const {
    std::lock_guard lock(mutex_);
    return result_.outcome;
}

SnapshotHandover::Result SnapshotHandover::result() const {
    std::lock_guard lock(mutex_);
    return result_;
}

}  // namespace arbiter::host
