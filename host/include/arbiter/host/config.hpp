// server_config.toml: what the operator sets, read and checked in one place.
//
// Every error names the file, line and column and what was expected; unknown keys are
// errors too, so that a misspelt setting is never silently ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <arbiter/arbiter_model_class.hpp>

#include "arbiter/host/plugin_signature.hpp"

namespace arbiter::host {

// The one enum the SDK declares a plugin's class with (arbiter_model_class.hpp).
using ModelClass = arbiter::ModelClass;
const char* to_string(ModelClass model_class);
std::optional<ModelClass> model_class_from_string(std::string_view text);

struct SourcePosition {
    std::string file;
    uint32_t line = 0;
    uint32_t column = 0;
    std::string str() const;  // "file:line:column", or "file" when unknown
};

// One or more problems in a config file, each "file:line:column: what".
class ConfigError : public std::runtime_error {
  public:
    explicit ConfigError(std::vector<std::string> problems);
    const std::vector<std::string>& problems() const { return problems_; }

  private:
    std::vector<std::string> problems_;
};

struct AggregationSettings {
    double monitor_threshold = 0.3;
    double review_threshold = 0.7;
    // With enforcement on, a FlagForReview whose strongest class reaches this becomes
    // ShadowRestrict. Enforcement is off by default: Arbiter reports, people decide.
    double restrict_threshold = 0.95;
    bool enforcement = false;
    // A validation score at or above review_threshold reaches FlagForReview alone.
    bool validation_alone_reaches_review = true;
    // Classes that reach FlagForReview only with a second class at Monitor or above.
    std::vector<ModelClass> second_class_required = {ModelClass::behavioural,
                                                     ModelClass::statistical};
    // A trip-wire from a plugin allowed to raise them reaches FlagForReview alone.
    bool tripwires_reach_review = true;

    bool operator==(const AggregationSettings&) const = default;
};

struct SinkSettings {
    std::string security_log;       // path of the JSON Lines security-event log; "" = none
    double report_threshold = 0.3;  // a signal's weighted score needed to be logged
};

struct HostSettings {
    std::string server_id = "arbiter";  // names this host in security events
    std::string work_dir;               // private folder for plugin copies; "" = a new one
    std::string log_level = "info";
    uint64_t max_batch_bytes = 16u * 1024u * 1024u;
    // Embedding only (arbiter_host_create): start although some plugins were refused. Off,
    // so that a host that would report every player Clear for want of its plugins does
    // not start as if all were well.
    bool partial_start = false;
    // The program that runs an isolated plugin; "" = arbiter-plugin-runner beside the
    // bundled plugins' folder (<prefix>/lib/arbiter). Held to the plugin library's file
    // rules (file_trust.hpp): whoever can write it runs code unconfined at each start.
    std::string plugin_runner;
    // The user an isolated plugin's runner becomes when the host runs as root; required
    // then (a runner left root could read the host's memory whatever the filter). ""
    // when the host does not run as root, which then refuses it.
    std::string runner_user;
    // Worker threads dispatch spreads matches over (parallel_dispatch.hpp); 0 or 1 runs
    // every plugin on the pushing thread. Unset: the number of cores for the `arbiter`
    // commands, 1 for a host embedded through the C API (whose callbacks promise the
    // caller's thread). Read at start only.
    std::optional<uint32_t> threads;
    // What `threads` comes to when unset: the number of cores (at least 1).
    static uint32_t default_threads();
};

// [serve]: how `arbiter serve` listens for relays (docs/serve-protocol.md). Read here so
// that a mistake in it is reported with the rest of the file; the other commands ignore it.
struct ServeSettings {
    std::string unix_socket;           // path of the relays' Unix socket; "" = none
    uint64_t unix_socket_mode = 0600;  // its file mode, set before anyone can connect
    std::string tcp_listen;            // "address:port" for relays over TCP; "" = none
    bool tcp_allow_remote = false;     // without it, tcp_listen must be a loopback address
    std::string token;                 // the shared token a TCP relay gives in its hello
    // [serve.relays.NAME]: relays with a token of their own. A relay named here must give
    // it; every batch of a connection must carry the relay name its hello gave.
    struct RelayCredential {
        std::string token;
        std::string token_file;  // read at start, like token_file
    };
    std::map<std::string, RelayCredential> relays;
    std::string token_file;  // or a file holding it (first line); read at start
    bool unix_requires_token = false;
    std::string control_socket;  // `arbiter ctl` talks here; "" = none
    std::string metrics_listen;  // "address:port" serving GET /metrics (Prometheus); "" = none
    bool metrics_allow_remote = false;  // without it, metrics_listen must be a loopback address
    // "address:port" serving the review page (docs/review.md) over the [store]; "" = none.
    std::string review_listen;
    bool review_allow_remote = false;  // without it, review_listen must be a loopback address
    std::string review_token_file;     // the file holding the page's login token (first line)
    uint64_t max_queued_bytes = 64u * 1024u * 1024u;  // received, not yet processed
    uint64_t max_reply_bytes = 8u * 1024u * 1024u;    // per connection, not yet sent
    uint64_t max_connections = 256;                   // relays at once; more are turned away
    // Connections that must give a token and have not yet: counted apart from the relays,
    // capped, and closed when no hello comes in time, so that sockets that never say
    // hello cannot keep an honest relay out.
    uint64_t max_pending_connections = 16;
    uint64_t hello_timeout_ms = 10'000;
    // Hellos refused where a token is needed (a wrong or missing token, an unknown relay,
    // a malformed hello), counted per address and overall in a window: past either bound,
    // hellos are refused unchecked until the window ends, so a token cannot be guessed at
    // the speed of the network. Addresses that gave a right token are exempt from the
    // overall bound; the per-address table holds this many, the least recent evicted.
    uint64_t token_failures_per_address = 5;
    uint64_t token_failures_overall = 100;
    uint64_t token_failure_window_ms = 60'000;
    uint64_t token_failure_addresses = 4096;
    bool watch = true;                // reload plugins and the config when their files change
    uint64_t watch_settle_ms = 250;   // quiet time after a change before acting on it
    uint64_t idle_match_end_s = 600;  // a match with no batch for this long is ended; 0 = never
};

// What one plugin may take of the host, in its process or isolated (plugin_bounds.hpp):
// past a bound the rest is dropped and counted. Read from [plugins.NAME].
struct PluginLimits {
    uint64_t max_signals_per_call = 100'000;  // signals one call may report
    uint64_t max_metric_names = 256;          // distinct metric names the plugin may use
    uint64_t log_bytes_per_s = 64 * 1024;     // log it may write, a second's worth at once
    bool operator==(const PluginLimits&) const = default;
};

struct PluginSettings {
    std::string name;               // the key under [plugins]
    std::filesystem::path library;  // resolved path of the .so
    bool bundled = false;           // library named a bundled plugin
    bool enabled = true;
    std::optional<ModelClass> model_class;  // operator's override of the declared class
    double weight = 1.0;
    bool tripwires = false;          // may raise trip-wires (default: bundled ones)
    std::filesystem::path baseline;  // "" = none
    // The longest one call into the plugin (a batch, a match's end) should take. A plugin in
    // the host's process cannot be stopped safely, so one past it is logged and counted
    // (PluginCallStats::over_deadline), and the stream waits for it.
    uint64_t deadline_ms = 1000;
    // The library's SHA-256 the operator pinned (64 lower-case hex digits), or "": a file
    // whose hash differs is refused, checked on the private copy that is loaded.
    std::string sha256;
    // The keys one of which must have signed the library ([plugins.NAME] signed_by, or all
    // of [signing] keys when [signing] require is set), and its minisign signature file
    // (signature; default LIBRARY.minisig). No signer: no signature asked for.
    std::vector<SigningKey> signers;
    std::filesystem::path signature;
    // isolation = "process": the plugin runs in a confined child process of its own
    // (isolated_instance.hpp), which the host restarts from its last checkpoint when it
    // fails and quarantines when it keeps failing. The rest bound and pace that child.
    struct Isolation {
        bool process = false;
        uint64_t memory_mb = 1024;       // address space of the child (RLIMIT_AS)
        uint64_t cpu_seconds = 0;        // CPU time of one child (RLIMIT_CPU); 0 = no limit
        uint64_t checkpoint_batches = 1000;  // save the state after this many calls,
        uint64_t checkpoint_seconds = 10;    // or this long after the last save
        uint64_t max_restarts = 3;           // faults allowed within restart_window_s;
        uint64_t restart_window_s = 300;     // one more quarantines the plugin
        // Threads of the child, its first included: the runner bounds them (RLIMIT_NPROC)
        // and the host checks the count after each call; past it the child is a fault.
        uint64_t max_threads = 64;
        // Whether the child may run between calls. Off: the host stops it (SIGSTOP) once
        // it has answered and lets it go on (SIGCONT) with the next call, so that no
        // thread of the plugin uses the host's CPU while the plugin is not being asked.
        bool run_between_calls = false;
        // [host] plugin_runner and runner_user, as the child is started with them.
        std::string runner;
        std::string runner_user;
        bool operator==(const Isolation&) const = default;
    } isolation;
    PluginLimits limits;
    std::vector<uint8_t> config;  // [plugins.NAME.config] as a FlexBuffers map
    SourcePosition position;      // of [plugins.NAME]
    // Where each key of the plugin's own table stands, by dotted path, so that a
    // plugin's complaint about a key can point at the file, line and column.
    std::map<std::string, SourcePosition> config_positions;

    // The position of a key path the plugin named, or of its table.
    SourcePosition locate(const std::string& key_path) const;
    // Whether an instance made from `other` is what these settings would make: the same
    // plugin, library, pin, table, baseline, isolation and bounds. (Weight, class and trip-wires are the
    // host's own, applied to a generation at its swap.)
    bool makes_what(const PluginSettings& other) const {
        return name == other.name && library == other.library && pin() == other.pin() &&
               config == other.config && baseline == other.baseline &&
               isolation == other.isolation && limits == other.limits;
    }
    // What the library's bytes must satisfy before they are loaded.
    LibraryPin pin() const { return {sha256, signers, signature}; }
};

// [signing]: the minisign public keys the operator trusts to sign plugin libraries.
struct SigningSettings {
    std::vector<SigningKey> keys;  // by the names the config gives them
    bool require = false;          // every plugin must be signed by one of them
};

// [store]: the database reviewers work from (store.hpp, docs/review.md).
struct StoreSettings {
    std::string path;      // the SQLite file; "" = none
    std::string postgres;  // or a PostgreSQL connection string (libpq's); "" = none
    uint64_t commit_interval_ms = 200;  // how often the writer commits; what kill -9 may lose
    uint64_t max_queued = 100'000;      // records waiting for the writer; past it, lost (counted)
    // `on_unwritable`: a store that cannot be written at start (read only, no privilege,
    // unreachable) refuses the start (false), or starts with a warning (true) and is
    // reopened until it can be written.
    bool start_unwritable = false;
    bool enabled() const { return !path.empty() || !postgres.empty(); }
    // For messages: the file, or "PostgreSQL".
    std::string where() const { return path.empty() ? std::string("PostgreSQL store") : path; }
    bool operator==(const StoreSettings&) const = default;
};

// [correlation]: tier 6 fed back into the aggregation (docs/review.md, "Correlation as
// evidence"). What the store holds of a player's account from other servers becomes
// signals of a source of its own, "correlation", one per class of the flags it stands
// for, so that two servers that each put an account at Monitor add up. Needs [store].
struct CorrelationSettings {
    bool enabled = false;
    uint64_t window_days = 7;  // flags older than this on other servers do not count
    double weight = 1.0;       // as a plugin's weight: score × weight
    // `class`: the class the aggregation gives these signals; none = each keeps the class of the
    // flags it stands for (behavioural flags elsewhere stay behavioural evidence here, so
    // that timing alone still cannot reach FlagForReview).
    std::optional<ModelClass> model_class;
    uint64_t refresh_s = 30;  // how often the accounts in play are looked up again
    // At a match's end, how long the host waits for lookups not yet answered (so that a
    // replay's final assessments do not depend on the writer's timing); then it goes on.
    uint64_t settle_ms = 2000;
    bool operator==(const CorrelationSettings&) const = default;
};

struct ServerConfig {
    std::filesystem::path file;
    HostSettings host;
    SigningSettings signing;
    AggregationSettings aggregation;
    SinkSettings sinks;
    StoreSettings store;
    CorrelationSettings correlation;
    ServeSettings serve;
    std::vector<PluginSettings> plugins;  // in file order
};

// The log levels `[host] log_level` and every `--log-level` take, and the same for a message.
bool is_log_level(std::string_view name);
inline constexpr const char* kLogLevelsText = "trace, debug, info, warn, error, off";

struct ConfigLoadOptions {
    // Where the bundled plugins are, for `library = "reference"`.
    std::filesystem::path bundled_plugin_dir;
};

// The folder of the bundled plugins next to the running executable
// (<exe dir>/../lib/arbiter/plugins), as laid out in the build tree and in an install.
std::filesystem::path default_bundled_plugin_dir();

// Reads and checks a config file. Throws ConfigError listing every problem found.
ServerConfig load_config(const std::filesystem::path& file, const ConfigLoadOptions& options = {});
// The same for text in memory; `name` stands for the file in messages, and relative
// paths resolve against `base_dir`.
ServerConfig parse_config(std::string_view text, const std::string& name,
                          const std::filesystem::path& base_dir,
                          const ConfigLoadOptions& options = {});

}  // namespace arbiter::host
