#include "arbiter/host/sharded_instance.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "arbiter/host/snapshot_handover.hpp"

namespace arbiter::host {

uint32_t shard_of(std::string_view relay_id, uint64_t match_id, uint32_t count) {
    if (count <= 1) return 0;
    // FNV-1a over the relay id, then the match id mixed in (splitmix64's finaliser), so
    // that consecutive match ids of one relay spread over the shards.
    uint64_t hash = 0xcbf29ce484222325ull;
    for (unsigned char c : relay_id)
        hash = (hash ^ c) * 0x100000001b3ull;
    uint64_t x = hash ^ (match_id + 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return static_cast<uint32_t>(x % count);
}

uint32_t shards_for_threads(uint32_t threads) {
    if (threads <= 1) return 1;
    constexpr uint32_t kShardsPerThread = 32;
    constexpr uint32_t kMostShards = 256;
    return std::max(threads, std::min(threads * kShardsPerThread, kMostShards));
}

namespace {

// The envelope of a sharded plugin's state: the magic, the number of shards, then each
// shard's blob with its length, all little-endian as the host writes it. The host made
// it and reads it back; a plugin never sees it (each shard gets its own blob).
constexpr char kMagic[8] = {'A', 'R', 'B', 'S', 'H', 'R', 'D', '1'};

void put_u64(std::vector<uint8_t>& out, uint64_t value) {
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

bool get_u64(std::span<const uint8_t>& in, uint64_t& value) {
    if (in.size() < 8) return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
        value |= uint64_t{in[i]} << (8 * i);
    in = in.subspan(8);
    return true;
}

// Whether a shard that was asked to restore may hold (part of) the state now: only a
// refusal with ARB_ERR_STATE promises the instance is as it was made (arbiter_plugin.h).
bool may_hold_state(const CallResult& restored) {
    return restored.status != ARB_ERR_STATE;
}

// The calling thread's CPU time so far, us.
double thread_cpu_us() {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

double elapsed_us(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - since)
        .count();
}

// One shard's state from `from` to `to`, timed, for a whole carry and a staged step alike.
// What either side throws becomes the failure of the side it came from: nothing may leave
// a helper thread or a lane. Making the text is tried too (out of memory is the likely
// throw), and a failure to make it leaves the status alone to say it.
ShardStep carry_one(AnalyzerInstance& from, AnalyzerInstance& to) noexcept {
    ShardStep step;
    const auto start = std::chrono::steady_clock::now();
    auto failed = [&step](const char* why) noexcept {
        if (step.saved) step.restored.status = ARB_ERR_INTERNAL;
        try {
            (step.saved ? step.restored.error : step.save_error) = why;
        } catch (...) {
        }
    };
    try {
        std::string error;
        auto blob = from.save_state(error);
        const auto saved_at = std::chrono::steady_clock::now();
        step.save_us = elapsed_us(start);
        if (blob) {
            step.saved = true;
            step.bytes = blob->size();
            step.restored = to.restore_state(*blob);
            step.restore_us = elapsed_us(saved_at);
        } else {
            step.save_error = std::move(error);
        }
    } catch (const std::exception& error) {
        failed(error.what());
    } catch (...) {
        failed("an exception that is no std::exception");
    }
    step.us = elapsed_us(start);
    return step;
}

CallResult refused(std::string why) {
    CallResult result;
    result.status = ARB_ERR_STATE;
    result.error = std::move(why);
    return result;
}

}  // namespace

ShardedInstance::ShardedInstance(std::vector<std::unique_ptr<AnalyzerInstance>> shards)
    : shards_(std::move(shards)) {}

void ShardedInstance::remember_config(const PluginSettings& settings,
                                      std::vector<uint8_t> baseline) {
    settings_ = settings;
    baseline_ = std::move(baseline);
}

CallResult ShardedInstance::on_batch(const VerifiedBatch& batch) {
    return shards_[shard_of(batch.relay_id, batch.match_id, shard_count())]->on_batch(batch);
}

CallResult ShardedInstance::on_match_end(const std::string& relay_id, uint64_t match_id) {
    return shards_[shard_of(relay_id, match_id, shard_count())]->on_match_end(relay_id, match_id);
}

std::optional<std::vector<uint8_t>> ShardedInstance::save_state(std::string& error) {
    std::vector<uint8_t> envelope(std::begin(kMagic), std::end(kMagic));
    put_u64(envelope, shards_.size());
    for (size_t k = 0; k < shards_.size(); ++k) {
        auto blob = shards_[k]->save_state(error);
        if (!blob) {
            error = fmt::format("shard {} of {}: {}", k, shards_.size(), error);
            return std::nullopt;
        }
        put_u64(envelope, blob->size());
        envelope.insert(envelope.end(), blob->begin(), blob->end());
    }
    return envelope;
}

CallResult ShardedInstance::restore_state(std::span<const uint8_t> blob) {
    if (blob.size() < sizeof kMagic || std::memcmp(blob.data(), kMagic, sizeof kMagic) != 0)
        return refused(
            fmt::format("the state was saved by an instance that ran unsharded; this "
                        "one runs as {} shards ([host] threads)",
                        shards_.size()));
    blob = blob.subspan(sizeof kMagic);
    uint64_t count = 0;
    if (!get_u64(blob, count) || count != shards_.size())
        return refused(
            fmt::format("the state holds {} shards, this instance runs {}", count, shards_.size()));
    // Every blob is found before any is restored: a cut envelope changes nothing.
    std::vector<std::span<const uint8_t>> parts;
    for (uint64_t k = 0; k < count; ++k) {
        uint64_t size = 0;
        if (!get_u64(blob, size) || size > blob.size())
            return refused(fmt::format("the state's shard {} is cut short", k));
        parts.push_back(blob.first(size));
        blob = blob.subspan(size);
    }
    if (!blob.empty()) return refused("the state has bytes after its last shard");
    for (size_t k = 0; k < shards_.size(); ++k) {
        CallResult result = shards_[k]->restore_state(parts[k]);
        if (result.ok()) continue;
        result.error = fmt::format("shard {} of {}: {}", k, shards_.size(), result.error);
        // The shards before k took their state, and k may hold part of it: make them fresh
        // again, so that the host's "started fresh" holds for every shard.
        std::vector<char> took(k + 1, 1);
        took[k] = may_hold_state(result);
        result.error += remake_shards(took);
        return result;
    }
    return {};
}

std::string ShardedInstance::remake_shards(const std::vector<char>& took) {
    std::string problems;
    for (size_t k = 0; k < took.size(); ++k) {
        if (!took[k]) continue;
        try {
            if (!remake_) throw std::runtime_error("no way to make it again");
            shards_[k] = remake_(static_cast<uint32_t>(k));
        } catch (const std::exception& error) {
            problems += fmt::format(
                "; but shard {} could not be made fresh again and keeps what it restored ({})", k,
                error.what());
        }
    }
    return problems;
}

ShardCarry ShardedInstance::carry_state_from(ShardedInstance& from, uint32_t parallel) {
    const size_t count = shards_.size();
    if (from.shards_.size() != count)
        throw std::logic_error("carry_state_from between instances of different shard counts");
    if (count == 0) return {};
    std::vector<ShardStep> outcomes(count);
    // Shards are handed out one at a time to the helpers and to this thread.
    std::atomic<size_t> next{0};
    auto drain = [&]() noexcept {
        for (size_t k = next++; k < count; k = next++)
            outcomes[k] = carry_one(*from.shards_[k], *shards_[k]);
    };
    {
        std::vector<std::thread> helpers;
        const size_t helpers_wanted = std::min<size_t>(count, std::max<uint32_t>(parallel, 1)) - 1;
        try {
            helpers.reserve(helpers_wanted);
            for (size_t i = 0; i < helpers_wanted; ++i)
                helpers.emplace_back(drain);
        } catch (...) {
            // No thread (or no memory for one) to be had: the shards left are carried here.
        }
        drain();
        for (auto& helper : helpers)
            helper.join();
    }

    ShardCarry carry;
    std::vector<char> took(count, 0);
    for (size_t k = 0; k < count; ++k) {
        const ShardStep& out = outcomes[k];
        carry.bytes += out.bytes;
        carry.shard_us.push_back(out.us);
        carry.save_us += out.save_us;
        carry.restore_us += out.restore_us;
        took[k] = out.saved && may_hold_state(out.restored);
        if (!out.saved && carry.saved) {
            carry.saved = false;
            carry.save_error = fmt::format("shard {} of {}: {}", k, count, out.save_error);
        } else if (out.saved && !out.restored.ok() && carry.restored.ok()) {
            carry.restored = out.restored;
            carry.restored.error = fmt::format("shard {} of {}: {}", k, count, out.restored.error);
        }
    }
    if (!carry.ok()) {
        const std::string problems = remake_shards(took);
        (carry.saved ? carry.restored.error : carry.save_error) += problems;
    }
    return carry;
}

void ShardedInstance::remake_if_refused(uint32_t k, ShardStep& step) noexcept {
    if (!step.saved || step.restored.ok() || !may_hold_state(step.restored)) return;
    try {
        std::vector<char> took(k + 1, 0);
        took[k] = 1;
        step.remake_problem = remake_shards(took);
    } catch (...) {
        step.remake_problem = "; and it could not be made fresh again";
    }
}

ShardStep ShardedInstance::carry_shard_into(uint32_t k, ShardedInstance& live) noexcept {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_us();
    ShardStep step = carry_one(*live.shards_[k], *shards_[k]);
    remake_if_refused(k, step);
    std::swap(shards_[k], live.shards_[k]);
    step.us = elapsed_us(start);
    step.cpu_us = thread_cpu_us() - cpu_start;
    return step;
}

ShardStep ShardedInstance::fork_shard_into(uint32_t k, ShardedInstance& live) noexcept {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_us();
    std::string error;
    std::unique_ptr<SnapshotHandover> handover;
    try {
        handover = SnapshotHandover::begin(live.shards_[k], shards_[k], error);
    } catch (const std::exception& thrown) {
        // begin leaves both shards where they were when it fails, by a throw or not.
        handover.reset();
        try {
            error = thrown.what();
        } catch (...) {
        }
    }
    if (!handover) {
        ShardStep step = carry_shard_into(k, live);
        try {
            step.fork_problem = std::move(error);
        } catch (...) {
        }
        return step;
    }
    ShardStep step;
    step.forked = true;
    // The old and the new shard are the handover's now: it answers for shard k.
    live.shards_[k] = std::move(handover);
    step.us = elapsed_us(start);
    step.cpu_us = thread_cpu_us() - cpu_start;
    return step;
}

bool ShardedInstance::handover_running(uint32_t k) const {
    const auto* handover = dynamic_cast<const SnapshotHandover*>(shards_.at(k).get());
    return handover && !handover->done();
}

void ShardedInstance::wait_for_handover(uint32_t k) {
    if (auto* handover = dynamic_cast<SnapshotHandover*>(shards_.at(k).get()))
        handover->wait_done();
}

void ShardedInstance::end_shard_handover(uint32_t k, ShardedInstance& live,
                                         ShardStep& step) noexcept {
    auto* handover = dynamic_cast<SnapshotHandover*>(live.shards_[k].get());
    if (!handover) return;
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_us();
    handover->wait_done();  // done already when the host posts this step
    SnapshotHandover::Result result;
    try {
        result = handover->result();
    } catch (...) {
        // No memory for its texts: the outcome alone is enough to end it right.
        result = {};
        result.outcome = handover->outcome();
        if (result.outcome == SnapshotHandover::Outcome::restore_refused)
            result.restored.status = ARB_ERR_INTERNAL;
    }
    std::unique_ptr<AnalyzerInstance> done = std::move(live.shards_[k]);
    live.shards_[k] = handover->take_old();
    shards_[k] = handover->take_fresh();
    done.reset();  // its thread has ended: this only joins it
    step.us += result.waited_us;
    step.save_us = result.save_us;
    step.throttled_us = result.throttled_us;
    step.fork_us = result.fork_us;
    if (result.outcome == SnapshotHandover::Outcome::snapshot_failed) {
        // The old shard answered throughout: carried now, as a whole reload would carry it.
        ShardStep carried = carry_shard_into(k, live);
        carried.forked = true;
        carried.us += step.us;  // the fork, and what its calls waited for room
        carried.cpu_us += step.cpu_us;
        carried.throttled_us = result.throttled_us;
        carried.fork_us = result.fork_us;
        try {
            carried.fork_problem = "the forked copy gave no state (" + result.error + ")";
        } catch (...) {
        }
        step = std::move(carried);
        return;
    }
    step.saved = result.outcome != SnapshotHandover::Outcome::save_refused;
    step.restored = std::move(result.restored);
    step.bytes = result.bytes;
    step.restore_us = result.restore_us;
    step.catch_up_us = result.catch_up_us;
    step.calls_made_again = result.calls_made_again;
    step.most_kept_bytes = result.most_kept_bytes;
    if (!step.saved) step.save_error = std::move(result.error);
    remake_if_refused(k, step);
    std::swap(shards_[k], live.shards_[k]);
    step.us += elapsed_us(start);
    step.cpu_us += thread_cpu_us() - cpu_start;
}

void ShardedInstance::exchange_making(ShardedInstance& other) noexcept {
    std::swap(remake_, other.remake_);
    std::swap(settings_, other.settings_);
    std::swap(baseline_, other.baseline_);
}

CallResult ShardedInstance::configure(const PluginSettings& settings,
                                      std::span<const uint8_t> baseline) {
    for (size_t k = 0; k < shards_.size(); ++k) {
        CallResult result = shards_[k]->configure(settings, baseline);
        if (result.ok()) continue;
        result.error = fmt::format("shard {} of {}: {}", k, shards_.size(), result.error);
        // The shards before this one took the new config: give them back the old one, and
        // say so if one will not take it back (the shards then disagree).
        for (size_t back = 0; back < k; ++back) {
            std::string problem;
            try {
                const CallResult undone = shards_[back]->configure(settings_, baseline_);
                if (!undone.ok()) problem = undone.error;
            } catch (const std::exception& error) {
                problem = error.what();
            }
            if (!problem.empty())
                result.error += fmt::format(
                    "; shard {} kept the new config, refusing the old one "
                    "back: {}",
                    back, problem);
        }
        return result;
    }
    settings_ = settings;
    baseline_.assign(baseline.begin(), baseline.end());
    return {};
}

}  // namespace arbiter::host
