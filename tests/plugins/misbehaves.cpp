// A plugin that does, on a chosen batch, one of the things an untrusted plugin can do to
// the process it runs in. Never loaded into a host in these tests except isolated
// (`isolation = "process"`): in the host's own process most of them would end the test.
//
// Config: `mode`, one of "segfault" (SIGSEGV), "spin" (loops forever), "leak" (allocates
// 64 MiB a batch and keeps it), "socket" (opens a TCP socket), "write_file" (creates the
// file `path`), "fork" (starts a process), "none"; `at_batch` (default 2): the batch of
// the match, counted from 1 (its sequence number + 1), on which it first misbehaves;
// `every` (default true): on every later batch too, else on that one alone. It counts the batches it has seen in its state
// (ARB_CAP_STATE) and publishes the count as the gauge "seen", so a test can tell whether
// its history survived a restart. It reports no signals.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
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
          every_(context.config.boolean("every", true)) {
        context.config.reject_unknown_keys();
        if (!context.config.is_describing()) context.host.info("created, mode " + mode_);
    }

    void on_batch(const arbiter::Batch& batch, arbiter::Signals&) override {
        const auto number = static_cast<int64_t>(batch.sequence()) + 1;
        if (number == at_batch_ || (every_ && number > at_batch_)) misbehave();
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
        }
    }

    std::string mode_;
    std::string path_;
    int64_t at_batch_;
    bool every_;
    int64_t seen_ = 0;
};

}  // namespace

ARBITER_PLUGIN(Misbehaves);
