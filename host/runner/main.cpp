// arbiter-plugin-runner: runs one plugin the operator does not trust
// (`isolation = "process"`) for the host that started it. It confines itself
// (confinement.hpp), then answers the host's requests over the link on descriptors 3 and
// 4 (host/src/isolation/channel.hpp) by calling the plugin through the same ABI and the
// same checks as the host's own PluginInstance. Not for people: the host starts it.
//
// Usage: arbiter-plugin-runner --parent PID --request-bytes N --reply-bytes N
//                              [--memory-mb N] [--cpu-seconds N] [--max-threads N]
//                              [--uid UID --gid GID]
// With --uid, the runner (started as root) becomes that user before anything else.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/host_services.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "confinement.hpp"
#include "isolation/channel.hpp"
#include "isolation/messages.hpp"

namespace arbiter::runner {

namespace iso = host::isolation;
using Clock = std::chrono::steady_clock;

// Log lines written during one call, kept for its reply (the host writes them to its log).
class CapturedLog final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
  public:
    std::vector<iso::LogLine> take(uint64_t& dropped) {
        dropped = dropped_;
        dropped_ = 0;
        return std::exchange(lines_, {});
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
        if (lines_.size() >= iso::kMaxLogLinesPerReply) {
            ++dropped_;
            return;
        }
        std::string text(message.payload.data(), message.payload.size());
        if (text.size() > iso::kMaxLogLineBytes) text.resize(iso::kMaxLogLineBytes);
        lines_.push_back({static_cast<uint32_t>(message.level), std::move(text)});
    }
    void flush_() override {}

  private:
    std::vector<iso::LogLine> lines_;
    uint64_t dropped_ = 0;
};

struct Options {
    int64_t parent = 0;
    uint64_t request_bytes = 0, reply_bytes = 0;
    Limits limits;
    std::optional<uint64_t> uid, gid;
};

bool parse_number(std::string_view text, uint64_t& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

bool parse_options(int argc, char** argv, Options& options) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        uint64_t value = 0;
        if (!parse_number(argv[i + 1], value)) return false;
        if (flag == "--parent")
            options.parent = static_cast<int64_t>(value);
        else if (flag == "--request-bytes")
            options.request_bytes = value;
        else if (flag == "--reply-bytes")
            options.reply_bytes = value;
        else if (flag == "--memory-mb")
            options.limits.memory_mb = value;
        else if (flag == "--cpu-seconds")
            options.limits.cpu_seconds = value;
        else if (flag == "--max-threads")
            options.limits.max_threads = value;
        else if (flag == "--uid")
            options.uid = value;
        else if (flag == "--gid")
            options.gid = value;
        else
            return false;
    }
    return argc % 2 == 1 && options.parent > 0 && options.uid.has_value() == options.gid.has_value() &&
           options.request_bytes >= 4096 &&
           options.reply_bytes >= 4096 && options.request_bytes <= (1ull << 32) &&
           options.reply_bytes <= (1ull << 32);
}

class Runner {
  public:
    explicit Runner(std::shared_ptr<CapturedLog> log) : log_(std::move(log)) {}

    iso::RunnerReply handle(iso::Op op, std::span<const uint8_t> payload) {
        iso::RunnerReply reply;
        iso::MessageReader in(payload);
        try {
            switch (op) {
                case iso::Op::load: load(in, reply); break;
                case iso::Op::create: create(in, reply); break;
                case iso::Op::batch: {
                    const int64_t relay_time = in.i64();
                    const auto bytes = in.bytes(payload.size());
                    in.finish();
                    reply.call = instance().on_batch_bytes(bytes, relay_time);
                    break;
                }
                case iso::Op::match_end: {
                    const std::string relay = in.text(1024);
                    const uint64_t match = in.u64();
                    in.finish();
                    reply.call = instance().on_match_end(relay, match);
                    break;
                }
                case iso::Op::save_state: {
                    in.finish();
                    std::string error;
                    reply.blob = instance().save_state(error);
                    if (!reply.blob) {
                        reply.call.status = ARB_ERR_STATE;
                        reply.call.error = error;
                    }
                    break;
                }
                case iso::Op::restore_state: {
                    const auto blob = in.bytes(payload.size());
                    in.finish();
                    reply.call = instance().restore_state(blob);
                    break;
                }
                case iso::Op::configure: {
                    settings_.config = to_vector(in.bytes(payload.size()));
                    const auto baseline = in.bytes(payload.size());
                    in.finish();
                    reply.call = instance().configure(settings_, baseline);
                    break;
                }
                default:
                    reply.call.status = ARB_ERR_INVALID_ARGUMENT;
                    reply.call.error = "the runner does not know request " +
                                       std::to_string(static_cast<uint32_t>(op));
            }
        } catch (const host::PluginError& error) {
            // A schema refusal from configure: the host checked first, so this is rare.
            reply.call.status = ARB_ERR_CONFIG;
            reply.call.error = error.what();
        } catch (const std::logic_error& error) {
            reply.call.status = ARB_ERR_INTERNAL;
            reply.call.error = error.what();
        } catch (const iso::ChannelError& error) {
            reply.call.status = ARB_ERR_INVALID_ARGUMENT;
            reply.call.error = error.what();
        }
        reply.logs = log_->take(reply.logs_dropped);
        reply.metrics = metric_changes();
        return reply;
    }

  private:
    static std::vector<uint8_t> to_vector(std::span<const uint8_t> bytes) {
        return {bytes.begin(), bytes.end()};
    }

    host::PluginInstance& instance() {
        if (!instance_) throw std::logic_error("no instance: create has not succeeded");
        return *instance_;
    }

    void load(iso::MessageReader& in, iso::RunnerReply& reply) {
        const std::string copy = in.text(4096), source = in.text(4096), label = in.text(256);
        in.finish();
        settings_.name = label;
        settings_.library = source;
        // The host holds the plugin to its bounds, on its side of the link.
        settings_.limits = host::PluginBounds::kUnbounded;
        try {
            library_ = host::PluginLibrary::open_copy(copy, source, label, &metrics_);
            reply.identity = library_->identity();
        } catch (const host::PluginError& error) {
            reply.call.status = ARB_ERR_UNSUPPORTED;
            reply.call.error = error.what();
        }
    }

    void create(iso::MessageReader& in, iso::RunnerReply& reply) {
        settings_.config = to_vector(in.bytes(in_limit_));
        const auto baseline = in.bytes(in_limit_);
        const uint32_t shard_index = in.u32(), shard_count = in.u32();
        in.finish();
        if (!library_) throw std::logic_error("no library: load has not succeeded");
        instance_.reset();
        try {
            instance_ = std::make_unique<host::PluginInstance>(library_, settings_, baseline,
                                                               shard_index, shard_count, &metrics_);
        } catch (const host::CreateError& error) {
            reply.call.status = error.status() == ARB_OK ? ARB_ERR_INTERNAL : error.status();
            reply.call.error = error.status() == ARB_OK
                                   ? "create returned ARB_OK but no instance"
                                   : error.detail();
        }
    }

    // Counters as what they gained since the last reply, gauges as they stand.
    std::vector<iso::MetricUpdate> metric_changes() {
        std::vector<iso::MetricUpdate> changes;
        for (const auto& [name, value] : metrics_.entries()) {
            auto& sent = sent_[name];
            if (value.counter) {
                if (value.value != sent.value) changes.push_back({name, true, value.value - sent.value});
            } else if (value.value != sent.value || sent.counter) {
                changes.push_back({name, false, value.value});
            }
            sent = value;
            if (changes.size() >= iso::kMaxMetricsPerReply) break;
        }
        return changes;
    }

    std::shared_ptr<CapturedLog> log_;
    host::Metrics metrics_;
    std::map<std::string, host::Metrics::Value> sent_;
    host::PluginSettings settings_;
    std::shared_ptr<host::PluginLibrary> library_;
    std::unique_ptr<host::PluginInstance> instance_;
    uint64_t in_limit_ = UINT64_MAX;
};

int run(int argc, char** argv) {
    Options options;
    if (!parse_options(argc, argv, options)) return iso::kExitBadStart;
    // First of all, the user the host chose; set before the death signal, which a change
    // of user clears.
    if (options.uid && !become_user(static_cast<uid_t>(*options.uid), static_cast<gid_t>(*options.gid)))
        return iso::kExitConfinement;
    // Gone with the host, whatever ends it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != options.parent) return iso::kExitBadStart;

    struct stat memory {};
    const uint64_t total = options.request_bytes + options.reply_bytes;
    if (::fstat(iso::kRunnerMemoryFd, &memory) != 0 || static_cast<uint64_t>(memory.st_size) != total)
        return iso::kExitBadStart;
    void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, iso::kRunnerMemoryFd, 0);
    if (base == MAP_FAILED) return iso::kExitBadStart;
    iso::SharedAreas areas{static_cast<uint8_t*>(base), options.request_bytes, options.reply_bytes};

    auto log = std::make_shared<CapturedLog>();
    auto logger = std::make_shared<spdlog::logger>("runner", log);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);

    if (const std::string problem = confine(options.limits, iso::kRunnerSocketFd); !problem.empty()) {
        // The host reads the reason from the one reply it gets.
        iso::RunnerReply reply;
        reply.call.status = ARB_ERR_INTERNAL;
        reply.call.error = "the runner could not confine itself: " + problem;
        iso::Channel channel(iso::kRunnerSocketFd, areas, iso::Channel::Side::runner);
        try {
            channel.receive(Clock::time_point::max(), UINT64_MAX);
            channel.send(iso::Op::reply, iso::encode_reply(reply), Clock::now() + std::chrono::seconds(5));
        } catch (...) {
        }
        return iso::kExitConfinement;
    }

    iso::Channel channel(iso::kRunnerSocketFd, areas, iso::Channel::Side::runner);
    Runner runner(log);
    for (;;) {
        iso::Channel::Message message;
        try {
            message = channel.receive(Clock::time_point::max(), 1ull << 40);
        } catch (const iso::ChannelError& error) {
            // The host closed the link (it is done with the plugin) or broke it.
            return error.kind() == iso::ChannelError::Kind::closed ? 0 : iso::kExitBadStart;
        }
        const iso::RunnerReply reply = runner.handle(message.op, message.payload);
        try {
            channel.send(iso::Op::reply, iso::encode_reply(reply), Clock::time_point::max());
        } catch (const iso::ChannelError&) {
            return 0;
        }
    }
}

}  // namespace arbiter::runner

int main(int argc, char** argv) {
    int code = 0;
    try {
        code = arbiter::runner::run(argc, argv);
    } catch (const std::bad_alloc&) {
        code = arbiter::host::isolation::kExitOutOfMemory;
    } catch (...) {
        code = arbiter::host::isolation::kExitBadStart;
    }
    // No destructor runs: the plugin's statics may do what the filter forbids, and
    // nothing here needs flushing.
    ::_exit(code);
}
