#include "workload.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>
#include <arbiter/host/config.hpp>

#ifndef ARBITER_BENCH_NOOP_PLUGIN
#define ARBITER_BENCH_NOOP_PLUGIN ""
#endif

namespace arbiter::bench {

MovementStream::MovementStream(StreamOptions options)
    : options_(std::move(options)),
      builder_(options_.relay_id, options_.match_id),
      tick_us_(static_cast<int64_t>(1e6 / options_.tick_rate_hz)) {
    motion_.reserve(options_.players);
    for (uint32_t i = 0; i < options_.players; ++i) {
        // Spread out on a grid, each heading its own way at 6 m/s.
        const float angle = static_cast<float>(i) * 2.399963f;  // the golden angle
        motion_.push_back({static_cast<float>(i % 1000) * 50.0f,
                           static_cast<float>(i / 1000) * 50.0f, 6.0f * std::cos(angle),
                           6.0f * std::sin(angle)});
    }
}

int64_t MovementStream::now_us() const {
    return static_cast<int64_t>(tick_) * tick_us_ +
           static_cast<int64_t>(next_player_) * tick_us_ / options_.players;
}

std::vector<uint8_t> MovementStream::next() {
    const float dt = static_cast<float>(tick_us_) / 1e6f;
    for (size_t n = 0; n < options_.batch_events; ++n) {
        Motion& m = motion_[next_player_];
        m.x += m.vx * dt;
        m.y += m.vy * dt;
        builder_.add(
            now_us(), tick_, next_player_ + 1,
            build::Position{
                .position = {m.x, m.y, 0.0f}, .velocity = {m.vx, m.vy, 0.0f}, .on_ground = true});
        if (++next_player_ == options_.players) {
            next_player_ = 0;
            ++tick_;
        }
    }
    events_ += options_.batch_events;
    return builder_.finish();
}

std::vector<std::vector<uint8_t>> MovementStream::prebuild(uint64_t events) {
    std::vector<std::vector<uint8_t>> batches;
    for (uint64_t done = 0; done < events; done += options_.batch_events)
        batches.push_back(next());
    return batches;
}

size_t verify_and_walk(std::span<const uint8_t> bytes, double& sink) {
    if (!flatbuffers::BufferHasIdentifier(bytes.data(), ARB_SCHEMA_FILE_IDENTIFIER)) return 0;
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    if (!verifier.VerifyBuffer<fb::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER)) return 0;
    const auto* root = flatbuffers::GetRoot<fb::EventBatch>(bytes.data());
    const auto* events = root->events();
    if (!events) return 0;
    double acc = 0;
    for (const fb::Event* event : *events) {
        acc += static_cast<double>(event->relay_time_us() + event->player()) +
               static_cast<double>(event->body_type());
        if (const auto* update = event->body_as_PositionUpdate(); update && update->position())
            acc += update->position()->x() + update->position()->y();
    }
    sink += acc;
    return events->size();
}

PluginSpec noop_plugin(const std::string& name) {
    return {name, ARBITER_BENCH_NOOP_PLUGIN};
}
PluginSpec reference_plugin() {
    return {"reference", "reference"};
}
PluginSpec lagpool_plugin() {
    return {"lagpool", "lagpool"};
}
PluginSpec kaladin_plugin() {
    return {"kaladin", "kaladin"};
}
PluginSpec accounts_plugin() {
    return {"accounts", "accounts"};
}
bool has_accounts_plugin() {
    std::error_code error;
    return std::filesystem::exists(host::default_bundled_plugin_dir() / "arbiter-accounts.so", error);
}

std::unique_ptr<host::Host> make_host(const std::vector<PluginSpec>& plugins, uint32_t threads) {
    // As root, isolated plugins' runners need an unprivileged user to become.
    std::string text = "[host]\nserver_id = \"bench\"\nlog_level = \"warn\"\nthreads = " +
                       std::to_string(threads) + "\n" +
                       (::geteuid() == 0 ? "runner_user = \"nobody\"\n" : "") +
                       "[sinks]\nsecurity_log = \"\"\n";
    for (const PluginSpec& plugin : plugins)
        text += "[plugins." + plugin.name + "]\nlibrary = \"" + plugin.library + "\"\n" +
                (plugin.isolated ? "isolation = \"process\"\n" : "") +
                (plugin.runs_between_calls ? "run_between_calls = true\n" : "");
    // The host logs each plugin it loads and reloads at info; the tables are the output.
    spdlog::set_level(spdlog::level::warn);
    host::ConfigLoadOptions options;
    options.bundled_plugin_dir = host::default_bundled_plugin_dir();
    auto host = std::make_unique<host::Host>(
        host::parse_config(text, "bench-config.toml", std::filesystem::current_path(), options));
    for (const std::string& error : host->plugin_errors())
        throw std::runtime_error("plugin refused: " + error);
    return host;
}

}  // namespace arbiter::bench
