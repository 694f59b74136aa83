// A plugin that does, on a chosen batch, one of the things an untrusted plugin can do to
// the process it runs in, or to the host's log, metrics and assessments. The modes that
// harm a process are never loaded into a host in these tests except isolated
// (`isolation = "process"`): in the host's own process they would end the test.
//
// Config: `mode`, one of "segfault" (SIGSEGV), "spin" (loops forever), "leak" (allocates
// 64 MiB a batch and keeps it), "socket" (opens a TCP socket), "write_file" (creates the
// file `path`), "fork" (starts a process), "threads" (starts `count` threads that sleep
// forever; publishes how many started as the gauge "threads_started"), "spin_thread"
// (starts a thread that spins forever, once), "none"; and, harmless to a process:
// "log_flood" (`count` log lines of 100 bytes a batch), "metric_names" (`count` gauges of
// new names a batch), "strangers" (`count` signals about players the match never had,
// and one about the batch's first player), "signal_flood" (`count` signals about the
// batch's first player); `count` (default 1000); `at_batch` (default 2): the batch of
// the match, counted from 1 (its sequence number + 1), on which it first misbehaves;
// `every` (default true): on every later batch too, else on that one alone. It counts the batches it has seen in its state
// (ARB_CAP_STATE) and publishes the count as the gauge "seen", so a test can tell whether
// its history survived a restart. It reports no signals.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <arbiter/sdk.hpp>

namespace {

std::vector<std::unique_ptr<char[]>> leaked;  // what "leak" keeps: never freed
std::atomic<uint64_t> spins{0};               // what "spin" counts, forever

class Misbehaves final : public arbiter::Analyzer {
  public:
    static constexpr arbiter::PluginInfo info{.name = "test-misbehaves",
                                              .version = "1.0.0",
                                              .contact = "tests@arbiter.invalid",
                                              .description = "misbehaves on a chosen batch",
                                              .model_class = arbiter::ModelClass::validation};

    explicit Misbehaves(const arbiter::Context& context)
        : Analyzer(context),
          mode_(context.config.string("mode", "none")),
          path_(context.config.string("path", "")),
          at_batch_(context.config.integer("at_batch", 2, arbiter::Range::at_least(1))),
          every_(context.config.boolean("every", true)),
          count_(context.config.integer("count", 1000, arbiter::Range::at_least(0))) {
        context.config.reject_unknown_keys();
        if (!context.config.is_describing()) context.host.info("created, mode " + mode_);
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override {
        const auto number = static_cast<int64_t>(batch.sequence()) + 1;
        if (number == at_batch_ || (every_ && number > at_batch_)) {
            misbehave();
            report(batch, signals);
        }
        ++seen_;
        host().gauge("seen", static_cast<double>(seen_));
    }

    std::vector<uint8_t> save_state() {
        arbiter::StateWriter out("MISB", 1);
        out.put<int64_t>(seen_);
        return out.finish();
    }

    void restore_state(std::span<const uint8_t> blob) {
        arbiter::StateReader in(blob, "MISB", 1);
        const auto seen = in.get<int64_t>();
        in.finish();
        seen_ = seen;
    }

  private:
    void misbehave() {
        if (mode_ == "segfault") {
            std::raise(SIGSEGV);
        } else if (mode_ == "spin") {
            for (;;) spins.fetch_add(1, std::memory_order_relaxed);
        } else if (mode_ == "leak") {
            const size_t size = 64u << 20;
            leaked.push_back(std::make_unique<char[]>(size));
            std::memset(leaked.back().get(), 1, size);  // touched: resident, not only reserved
        } else if (mode_ == "socket") {
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            if (fd >= 0) ::close(fd);
        } else if (mode_ == "write_file") {
            if (std::FILE* file = std::fopen(path_.c_str(), "w")) {
                std::fputs("written by an isolated plugin\n", file);
                std::fclose(file);
            }
        } else if (mode_ == "fork") {
            const pid_t child = ::fork();
            if (child == 0) ::_exit(0);
        } else if (mode_ == "threads") {
            for (int64_t i = 0; i < count_; ++i) {
                try {
                    std::thread([] {
                        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
                    }).detach();
                    ++threads_started_;
                } catch (const std::system_error&) {
                    break;  // the process may start no more
                }
            }
            host().gauge("threads_started", static_cast<double>(threads_started_));
        } else if (mode_ == "spin_thread") {
            std::thread([] {
                for (;;) spins.fetch_add(1, std::memory_order_relaxed);
            }).detach();
        } else if (mode_ == "log_flood") {
            const std::string line(100, 'x');
            for (int64_t i = 0; i < count_; ++i) host().info(line);
        } else if (mode_ == "metric_names") {
            for (int64_t i = 0; i < count_; ++i)
                host().gauge("name_" + std::to_string(seen_) + "_" + std::to_string(i), 1.0);
        }
    }

    void report(const arbiter::Batch& batch, arbiter::Signals& signals) {
        if (mode_ != "strangers" && mode_ != "signal_flood") return;
        uint32_t player = 0;
        for (const auto* event : batch.events())
            if (event->player() != 0) {
                player = event->player();
                break;
            }
        if (player == 0) return;
        const int64_t about_player = mode_ == "strangers" ? 1 : count_;
        for (int64_t i = 0; i < about_player; ++i)
            signals.emit({.player = player, .code = "test.misbehaves", .score = 0.5,
                          .confidence = 1.0, .evidence = arbiter::Evidence()});
        if (mode_ == "strangers")
            for (int64_t i = 0; i < count_; ++i)
                signals.emit({.player = static_cast<uint32_t>(1'000'000 + i),
                              .code = "test.misbehaves", .score = 0.5, .confidence = 1.0,
                              .evidence = arbiter::Evidence()});
    }

    std::string mode_;
    std::string path_;
    int64_t at_batch_;
    bool every_;
    int64_t count_;
    int64_t seen_ = 0;
    int64_t threads_started_ = 0;
};

}  // namespace

ARBITER_PLUGIN(Misbehaves);
