// The event thread of `arbiter serve`: the only thread that touches the Host. It takes
// the network thread's work in order (batches, syncs, commands, reload steps), runs
// each batch through the pipeline, and sends each relay the assessments of its players
// as they change.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "arbiter/host/host.hpp"
#include "arbiter/host/reload_coordinator.hpp"
#include "arbiter/host/wire.hpp"
#include "serve/background_worker.hpp"
#include "serve/outbox.hpp"
#include "serve/work_queue.hpp"

namespace arbiter::host::serve {

// A reload's report as the control socket gives it (reload answers and status).
nlohmann::json report_json(const ReloadReport& report);

class EventProcessor {
  public:
    EventProcessor(Host& host, ConfigLoadOptions options, WorkQueue& queue, Outbox& outbox);
    ~EventProcessor();
    EventProcessor(const EventProcessor&) = delete;
    EventProcessor& operator=(const EventProcessor&) = delete;

    // The thread's body: returns once a drain has been processed.
    void run();
    // After run(): whether every step of the drain succeeded.
    bool drain_clean() const { return drain_clean_; }
    // The files whose change means a reload: the config and each plugin's library.
    std::vector<WatchedFile> watched_files() const;

  private:
    using MatchKey = std::pair<std::string, uint64_t>;
    struct RelayStats {
        uint64_t batches = 0;
        uint64_t events = 0;
        uint64_t refused = 0;
    };

    void handle(Work& work);
    void on_batch(Work& work);
    void on_sync(const Work& work);
    void on_control(const Work& work);
    void on_metrics(const Work& work);
    // A load on the loader thread, and the requests that came while it ran. Those are
    // answered by one more load once it is done: a file that changes ten times during a
    // load is loaded twice, not ten times, so the loader holds at most one job per plugin
    // and one for the config (and the releases of what they replaced).
    struct LoadInFlight {
        bool busy = false;
        std::vector<uint64_t> answer_to;  // connections to answer when this load is done
        bool again = false;
        std::vector<uint64_t> answer_next;
        // True when the caller is to start a load now.
        bool request(uint64_t connection);
        // This load is done: the connections to answer; `again` tells whether to start the next.
        std::vector<uint64_t> finish(bool& again);
    };

    void note_reload(const ReloadReport& report);
    void request_reload(const std::string& plugin, uint64_t connection);
    void start_reload(const std::string& plugin);
    void load_off_the_event_path(const PluginSettings& settings);
    void on_installed(Work& work);
    // A reload's install is over (at once, or its last shard across): tell who asked.
    void finish_reload(const ReloadReport& report);
    // The staged installs (Host::begin_install) that ended since the last call.
    void collect_installs();
    void request_config(uint64_t connection);
    void start_config_load();
    void on_config_loaded(Work& work);
    void answer_all(const std::vector<uint64_t>& connections, const nlohmann::json& answer);
    void abandon_load(const Work& work, const std::string& why);
    void release_off_the_event_path(std::vector<PluginSlot> retired);
    void drain();

    void reply(uint64_t connection, wire::FrameKind kind, const std::string& json);
    void answer_control(uint64_t connection, const nlohmann::json& answer);
    void route(const Assessment& assessment);
    void send_match_assessments(const MatchKey& match);
    void forget(const MatchKey& match);
    void end_idle_matches();
    void sample_rate();
    nlohmann::json status_json(const std::string& connections_json) const;
    nlohmann::json plugins_json() const;

    Host& host_;
    ConfigLoadOptions options_;
    WorkQueue& queue_;
    Outbox& outbox_;
    std::shared_ptr<Sink> router_;
    std::map<MatchKey, uint64_t> match_owner_;  // the connection that last fed the match
    std::map<MatchKey, std::chrono::steady_clock::time_point> last_batch_at_;
    std::map<uint64_t, RelayStats> relay_stats_;
    std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> rate_samples_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_housekeeping_ = started_;
    std::vector<ReloadReport> recent_reloads_;
    uint64_t reloads_ok_ = 0, reloads_failed_ = 0;
    std::map<std::string, LoadInFlight> reloads_;  // by plugin
    ReloadCoordinator reloading_;
    LoadInFlight config_load_;
    bool drained_ = false;
    bool drain_clean_ = true;
    // Renders /metrics: what plugins record can be too large to render between batches.
    // Its jobs read the host's Metrics (under their own lock) and post to the outbox.
    BackgroundWorker scrapes_;
    BackgroundWorker loader_;  // last: its jobs may post back while it winds down
};

}  // namespace arbiter::host::serve
