#include "serve/event_processor.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "serve/serve_protocol.hpp"
#include "arbiter/host/sinks.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "serve/prometheus.hpp"

namespace arbiter::host::serve {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// Hands each raised action to the processor, which knows which relay to tell.
class RoutingSink : public Sink {
  public:
    explicit RoutingSink(std::function<void(const Assessment&)> route) : route_(std::move(route)) {}
    void on_action(const Assessment& assessment) override { route_(assessment); }

  private:
    std::function<void(const Assessment&)> route_;
};

std::string error_json(const std::string& problem, uint64_t offset) {
    return serve_protocol::error_json(problem, offset, false);
}

}  // namespace

EventProcessor::EventProcessor(Host& host, ConfigLoadOptions options, WorkQueue& queue,
                               Outbox& outbox)
    : host_(host),
      options_(std::move(options)),
      queue_(queue),
      outbox_(outbox),
      reloading_(
          host_, [this](const PluginSettings& settings) { load_off_the_event_path(settings); },
          [this](PluginSlot retired) {
              std::vector<PluginSlot> old;
              old.push_back(std::move(retired));
              release_off_the_event_path(std::move(old));
          }) {
    router_ =
        std::make_shared<RoutingSink>([this](const Assessment& assessment) { route(assessment); });
    host_.add_sink(router_);
}

EventProcessor::~EventProcessor() {
    host_.remove_sink(router_);
}

void EventProcessor::run() {
    while (!drained_) {
        // With worker threads, the batches in flight are taken in (and their actions go to
        // the relays) as soon as the input runs dry, not at the next batch.
        const bool in_flight = host_.batches_in_flight() > 0;
        // A reload going shard by shard is answered soon after its last shard is across,
        // even when no batch comes.
        auto work = queue_.pop(in_flight            ? std::chrono::milliseconds(0)
                               : host_.installing() ? std::chrono::milliseconds(2)
                                                    : std::chrono::milliseconds(200));
        if (!work && in_flight) {
            try {
                host_.flush();
            } catch (const std::exception& error) {
                spdlog::error("serve: taking in the last batches: {}", error.what());
            }
        }
        if (work) {
            try {
                handle(*work);
            } catch (const std::exception& error) {
                // The host catches what plugins throw; this is the host's own failure on
                // one item (out of memory, say). The item is reported and the stream goes on.
                spdlog::error("serve: could not process a {} item: {}",
                              static_cast<int>(work->kind), error.what());
                if (work->kind == Work::Kind::drain && !drained_) {
                    // The drain failed outside its own protected steps: it is over all the
                    // same, so that the server stops.
                    drain_clean_ = false;
                    drained_ = true;
                    outbox_.post_drained();
                }
                if (work->kind == Work::Kind::installed || work->kind == Work::Kind::config_loaded)
                    abandon_load(*work, error.what());
                if (work->connection)
                    reply(work->connection, wire::FrameKind::error,
                          error_json(error.what(), work->offset));
            }
        }
        try {
            collect_installs();
        } catch (const std::exception& error) {
            spdlog::error("serve: ending a reload: {}", error.what());
        }
        if (Clock::now() - last_housekeeping_ >= std::chrono::seconds(1)) {
            last_housekeeping_ = Clock::now();
            sample_rate();
            end_idle_matches();
        }
    }
}

void EventProcessor::handle(Work& work) {
    switch (work.kind) {
        case Work::Kind::batch:
            return on_batch(work);
        case Work::Kind::sync:
            return on_sync(work);
        case Work::Kind::closed:
            relay_stats_.erase(work.connection);
            return;
        case Work::Kind::control:
            return on_control(work);
        case Work::Kind::metrics:
            return on_metrics(work);
        case Work::Kind::reload:
            return request_reload(work.text, work.connection);
        case Work::Kind::config_changed:
            return request_config(work.connection);
        case Work::Kind::installed:
            return on_installed(work);
        case Work::Kind::config_loaded:
            return on_config_loaded(work);
        case Work::Kind::drain:
            return drain();
    }
}

void EventProcessor::on_batch(Work& work) {
    RelayStats& stats = relay_stats_[work.connection];
    // The owner is known before the plugins see the batch: an action its very first batch
    // raises reaches the relay (it used to be dropped, the match not yet owned).
    Host::PushResult pushed =
        host_.push_batch(work.payload, work.text, [&](const std::string& relay, uint64_t match) {
            match_owner_[{relay, match}] = work.connection;
        });
    if (pushed.problem) {
        ++stats.refused;
        reply(work.connection, wire::FrameKind::error,
              error_json("batch refused: " + *pushed.problem, work.offset));
        return;
    }
    ++stats.batches;
    stats.events += pushed.events;
    const MatchKey match{pushed.relay_id, pushed.match_id};
    if (pushed.ended_match) {
        match_owner_[match] = work.connection;
        send_match_assessments(match);
        forget(match);
        return;
    }
    match_owner_[match] = work.connection;
    last_batch_at_[match] = Clock::now();
}

void EventProcessor::on_sync(const Work& work) {
    // Everything this connection sent before the sync has been processed (and its actions
    // sent): say how much. A sink's failure meanwhile is the log's business, not this
    // relay's: the sync is answered all the same.
    try {
        host_.flush();
    } catch (const std::exception& error) {
        spdlog::error("serve: taking in batches before a sync: {}", error.what());
    }
    const RelayStats& stats = relay_stats_[work.connection];
    reply(work.connection, wire::FrameKind::sync,
          serve_protocol::sync_reply(
              work.payload,
              {.batches = stats.batches, .events = stats.events, .refused = stats.refused}));
}

void EventProcessor::on_control(const Work& work) {
    using serve_protocol::ControlVerb;
    const serve_protocol::ControlRequest request = serve_protocol::parse_control_line(
        std::string_view(reinterpret_cast<const char*>(work.payload.data()), work.payload.size()));
    auto answer = [&](const json& body) { answer_control(work.connection, body); };
    switch (request.verb) {
        case ControlVerb::status:
            return answer(status_json(work.text));
        case ControlVerb::plugins:
            return answer(plugins_json());
        case ControlVerb::assessments: {
            json list = json::array();
            for (const auto& assessment : host_.assessments())
                list.push_back(json::parse(assessment_json(assessment)));
            return answer(list);
        }
        case ControlVerb::reload_config:
            return request_config(work.connection);
        case ControlVerb::reload_plugin:
            return request_reload(request.argument, work.connection);
        case ControlVerb::unknown:
            return answer({{"ok", false}, {"error", request.problem}});
    }
}

// The host's figures are taken here, between two batches, so that one scrape is one
// moment; what plugins record, and the text, are left to the scrape thread: however many
// series the plugins made, the batches behind this scrape do not wait for them.
void EventProcessor::on_metrics(const Work& work) {
    MetricsView view = metrics_view(host_);
    view.uptime_s = std::chrono::duration<double>(Clock::now() - started_).count();
    view.queue_bytes = queue_.queued_bytes();
    view.queue_capacity_bytes = queue_.capacity();
    view.queue_peak_bytes = queue_.peak_bytes();
    view.relay_connections = work.offset;
    view.reloads_ok = reloads_ok_;
    view.reloads_failed = reloads_failed_;
    const bool head = std::string_view(reinterpret_cast<const char*>(work.payload.data()),
                                       work.payload.size()) == "HEAD";
    scrapes_.post([view = std::move(view), head, connection = work.connection,
                   &metrics = host_.metrics(), &outbox = outbox_]() mutable {
        // The scrape is answered whatever happens: until it is, it holds one of its slots.
        std::string text;
        try {
            add_plugin_metrics(view, metrics);
            text = serve_protocol::http_response(200, kPrometheusContentType,
                                                 render_prometheus(view), head);
        } catch (const std::exception& error) {
            spdlog::error("serve: rendering /metrics: {}", error.what());
            text = serve_protocol::http_response(
                503, "text/plain; charset=utf-8",
                std::string("the metrics could not be rendered: ") + error.what() + "\n");
        }
        outbox.post(Reply{
            .connection = connection, .bytes = {text.begin(), text.end()}, .close_after = true});
    });
}

void EventProcessor::drain() {
    // Everything received before SIGTERM has been processed; end the open matches so
    // that each plugin reports what it holds, tell the relays, and flush the sinks.
    // Each step is protected: whatever fails is logged and the drain still completes, or
    // SIGTERM would leave the server hanging with its sinks unflushed.
    std::vector<MatchKey> open = host_.open_matches();
    drain_clean_ = host_.close();
    for (const auto& match : open) {
        try {
            send_match_assessments(match);
        } catch (const std::exception& error) {
            drain_clean_ = false;
            spdlog::error("serve: drain: the final assessments of match {}/{}: {}",
                          escape_for_message(match.first, 80), match.second, error.what());
        }
    }
    const auto& counters = host_.counters();
    spdlog::info("serve: drained: {} batches ({} events) processed, {} refused, {} signals; {}",
                 counters.batches, counters.events, counters.refused_batches, counters.signals,
                 drain_clean_ ? "sinks flushed" : "with failures (logged above)");
    drained_ = true;
    outbox_.post_drained();
}

void EventProcessor::reply(uint64_t connection, wire::FrameKind kind,
                           const std::string& json_text) {
    if (connection == 0) return;
    Reply reply;
    reply.connection = connection;
    wire::append_frame(reply.bytes, kind, json_text);
    outbox_.post(std::move(reply));
}

void EventProcessor::answer_control(uint64_t connection, const nlohmann::json& answer) {
    if (connection == 0) return;  // the request came from the file watcher
    // The control protocol is plain text: one JSON document, then the connection ends.
    const std::string text = dump_json(answer, 2) + "\n";
    outbox_.post(
        Reply{.connection = connection, .bytes = {text.begin(), text.end()}, .close_after = true});
}

void EventProcessor::route(const Assessment& assessment) {
    auto owner = match_owner_.find({assessment.player.relay_id, assessment.player.match_id});
    if (owner == match_owner_.end()) return;
    reply(owner->second, wire::FrameKind::assessment, assessment_json(assessment));
}

void EventProcessor::send_match_assessments(const MatchKey& match) {
    auto owner = match_owner_.find(match);
    if (owner == match_owner_.end()) return;
    for (const auto& assessment : host_.match_assessments(match.first, match.second))
        reply(owner->second, wire::FrameKind::assessment, assessment_json(assessment));
}

void EventProcessor::forget(const MatchKey& match) {
    // The relay has the final assessments and the sinks had every action as it rose: the
    // match's players leave, so that a server's memory follows the matches in play.
    host_.forget_match(match.first, match.second);
    match_owner_.erase(match);
    last_batch_at_.erase(match);
}

void EventProcessor::end_idle_matches() {
    const uint64_t idle_s = host_.config().serve.idle_match_end_s;
    if (idle_s == 0) return;
    // Ending a match waits for a reload going shard by shard (Host::end_match); an idle
    // match can wait a second or two for it instead, and the event thread does not.
    if (host_.installing()) return;
    const auto now = Clock::now();
    for (auto it = last_batch_at_.begin(); it != last_batch_at_.end();) {
        if (now - it->second < std::chrono::seconds(idle_s)) {
            ++it;
            continue;
        }
        const MatchKey match = it->first;
        it = last_batch_at_.erase(it);
        spdlog::info("match {}/{}: no batch for {} s; ending it", match.first, match.second,
                     idle_s);
        host_.end_match(match.first, match.second);
        send_match_assessments(match);
        forget(match);
    }
}

void EventProcessor::sample_rate() {
    rate_samples_.emplace_back(Clock::now(), host_.counters().events);
    while (rate_samples_.size() > 11)
        rate_samples_.pop_front();
}

json EventProcessor::status_json(const std::string& connections_json) const {
    double events_per_second = 0;
    if (rate_samples_.size() >= 2) {
        const auto& [t0, e0] = rate_samples_.front();
        const auto& [t1, e1] = rate_samples_.back();
        const double seconds = std::chrono::duration<double>(t1 - t0).count();
        if (seconds > 0) events_per_second = static_cast<double>(e1 - e0) / seconds;
    }
    json connections = json::parse(connections_json, nullptr, false);
    if (!connections.is_array()) connections = json::array();
    for (auto& connection : connections) {
        auto stats = relay_stats_.find(connection.value("id", uint64_t{0}));
        const RelayStats none;
        const RelayStats& s = stats == relay_stats_.end() ? none : stats->second;
        connection["batches"] = s.batches;
        connection["events"] = s.events;
        connection["refused"] = s.refused;
    }
    json plugins = json::array();
    for (const auto& slot : host_.plugins()) {
        json entry = {{"name", slot.settings.name},
                      {"version", slot.active() ? slot.library->identity().version : ""},
                      {"active", slot.active()},
                      {"error", slot.error},
                      {"calls", slot.stats.calls},
                      {"errors", slot.stats.errors},
                      {"busy_ms", static_cast<double>(slot.stats.busy_ns) / 1e6},
                      {"slowest_call_ms", static_cast<double>(slot.stats.slowest_ns) / 1e6},
                      {"over_deadline", slot.stats.over_deadline},
                      {"isolation", "none"}};
        // What the instance is, not what the settings ask for: the two differ while a
        // change of isolation is being loaded, or when it was refused.
        const IsolationStatus isolated =
            slot.active() ? slot.instance->isolation() : IsolationStatus{};
        if (slot.bounds) {
            const PluginBounds::Refused refused = slot.bounds->refused();
            entry["past_bounds"] = {{"log_lines", refused.log_lines},
                                    {"log_bytes", refused.log_bytes},
                                    {"metric_names", refused.metric_names},
                                    {"signals_over_bound", refused.signals_over_bound},
                                    {"signals_about_strangers", refused.signals_about_strangers}};
        }
        if (isolated.isolated) {
            entry["isolation"] = "process";
            entry["pid"] = isolated.pid;
            entry["restarts"] = isolated.restarts;
            entry["checkpoints"] = isolated.checkpoints;
            entry["replayed"] = isolated.replayed;
            entry["last_fault"] = isolated.last_fault;
            entry["quarantined"] = isolated.quarantined;
        }
        plugins.push_back(std::move(entry));
    }
    json reloads = json::array();
    for (const auto& report : recent_reloads_)
        reloads.push_back(report_json(report));
    const auto& counters = host_.counters();
    return {{"server_id", host_.config().host.server_id},
            {"uptime_s", std::chrono::duration<double>(Clock::now() - started_).count()},
            {"events_per_second", events_per_second},
            {"queue",
             {{"bytes", queue_.queued_bytes()},
              {"capacity", queue_.capacity()},
              {"peak_bytes", queue_.peak_bytes()}}},
            {"counters",
             {{"batches", counters.batches},
              {"events", counters.events},
              {"refused_batches", counters.refused_batches},
              {"signals", counters.signals},
              {"matches_ended", counters.matches_ended},
              {"open_matches", host_.open_matches().size()},
              {"tracked_players", host_.tracked_players()}}},
            {"connections", connections},
            {"plugins", plugins},
            {"recent_reloads", reloads}};
}

json EventProcessor::plugins_json() const {
    json plugins = json::array();
    for (const auto& slot : host_.plugins()) {
        json entry = {{"name", slot.settings.name},     {"library", slot.settings.library.string()},
                      {"active", slot.active()},        {"error", slot.error},
                      {"weight", slot.settings.weight}, {"class", to_string(slot.model_class)}};
        if (slot.active()) {
            const auto& id = slot.library->identity();
            entry["plugin"] = id.name;
            entry["version"] = id.version;
            entry["abi"] = fmt::format("{}.{}", id.abi_major, id.abi_minor);
            entry["schema"] = fmt::format("{}.{}", id.schema_major, id.schema_minor);
            entry["capabilities"] = describe_capabilities(id.capabilities);
            entry["private_copy"] = slot.library->private_copy().filename().string();
        }
        plugins.push_back(entry);
    }
    return plugins;
}

std::vector<WatchedFile> EventProcessor::watched_files() const {
    std::vector<WatchedFile> files{{host_.config().file, ""}};
    for (const auto& settings : host_.config().plugins) {
        if (!settings.enabled) continue;
        files.push_back({settings.library, settings.name});
        // A new build and its signature land one after the other: either one settling
        // reloads the plugin, so whichever comes last brings the pair in.
        if (!settings.signature.empty()) files.push_back({settings.signature, settings.name});
    }
    return files;
}

}  // namespace arbiter::host::serve
