// The class a plugin author derives from.
//
//   class MyAnalyzer final : public arbiter::Analyzer {
//   public:
//       static constexpr arbiter::PluginInfo info{
//           .name = "my-analyzer", .version = "1.0.0", .contact = "me@example.org",
//           .description = "what it detects", .model_class = arbiter::ModelClass::validation};
//       explicit MyAnalyzer(const arbiter::Context& context);
//       void on_batch(const arbiter::Batch& batch, arbiter::Signals& signals) override;
//   };
//   ARBITER_PLUGIN(MyAnalyzer)
//
// Optional members, found by the SDK at compile time (each sets its capability bit and
// fills its slot of the C table):
//   void on_match_end(const arbiter::MatchKey&, arbiter::Signals&);   ARB_CAP_MATCH_END
//   void configure(const arbiter::Context&);                          ARB_CAP_RECONFIGURE
//   std::vector<uint8_t> save_state();                                ARB_CAP_STATE
//   void restore_state(std::span<const uint8_t>);                      (with save_state)
//   void baseline_begin();                                            ARB_CAP_BASELINE
//   std::vector<uint8_t> baseline_end();                               (with baseline_begin)
// Throw ConfigError for a bad config, StateError for a state blob you refuse; any
// other exception is reported as ARB_ERR_INTERNAL with its what(). None escapes.
//
// The config schema: the SDK constructs the analyzer once on ConfigTable::describing()
// and answers describe_config with what its constructor read (ARB_CAP_DESCRIBE_CONFIG).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <arbiter/arbiter_model_class.hpp>
#include <arbiter/arbiter_plugin.h>
#include <arbiter/sdk/config.hpp>
#include <arbiter/sdk/events.hpp>
#include <arbiter/sdk/signals.hpp>

namespace arbiter {

enum class LogLevel : uint32_t {
    trace = ARB_LOG_TRACE,
    debug = ARB_LOG_DEBUG,
    info = ARB_LOG_INFO,
    warn = ARB_LOG_WARN,
    error = ARB_LOG_ERROR,
};

// What a plugin says about itself during negotiation.
struct PluginInfo {
    const char* name;         // [a-z0-9_-], at most 64 bytes
    const char* version;      // the plugin's own version
    const char* contact;      // URL or address
    const char* description;  // one line
    ModelClass model_class;
    // The plugin keeps no state across matches: the host may shard it by match.
    bool shard_by_match = false;
    // The oldest ABI minor the plugin works with. Raise it only when the plugin needs
    // something that minor added; rebuilding against a newer SDK leaves it alone, so
    // the plugin keeps running on the hosts it ran on. See docs/abi-changes.md.
    uint32_t requires_abi_minor = 0;
    // The oldest event schema minor the plugin works with (it needs an event kind that
    // minor added). A host that sends an older schema refuses the plugin, naming both.
    uint32_t requires_schema_minor = 0;
    // The plugin describes its config for the host (describe_config): the SDK records
    // the schema from the analyzer's own constructor (config_schema.hpp). Turn it off for
    // a constructor that cannot run on an empty config.
    bool describe_config = true;
};

// The host's services for one instance: log, clock, metrics. Thread-safe. (Not the host
// itself: that is arbiter::host::Host, the program that loads plugins.)
class HostServices {
  public:
    HostServices() = default;
    HostServices(arb_host* handle, const arb_host_services* services)
        : handle_(handle), services_(services) {}

    void log(LogLevel level, std::string_view message) const {
        if (services_)
            services_->log(handle_, static_cast<uint32_t>(level), {message.data(), message.size()});
    }
    void debug(std::string_view message) const { log(LogLevel::debug, message); }
    void info(std::string_view message) const { log(LogLevel::info, message); }
    void warn(std::string_view message) const { log(LogLevel::warn, message); }
    void error(std::string_view message) const { log(LogLevel::error, message); }

    // The relay time of the batch in hand, never the wall clock.
    int64_t relay_time_us() const { return services_ ? services_->relay_time_us(handle_) : 0; }

    void count(std::string_view name, double value = 1.0) const {
        if (services_) services_->metric_add(handle_, {name.data(), name.size()}, value);
    }
    void gauge(std::string_view name, double value) const {
        if (services_) services_->metric_set(handle_, {name.data(), name.size()}, value);
    }

  private:
    arb_host* handle_ = nullptr;
    const arb_host_services* services_ = nullptr;
};

// The name HostServices had before, which read as the host itself; plugin sources that
// use it still build, with a warning that names the new one.
using Host [[deprecated("arbiter::Host is now arbiter::HostServices")]] = HostServices;

// What an analyzer is created (or reconfigured) with.
struct Context {
    HostServices host;
    ConfigTable config;                 // the plugin's own table; borrowed for the call
    std::span<const uint8_t> baseline;  // empty when none is configured; borrowed
    uint32_t shard_index = 0;
    uint32_t shard_count = 1;
};

class Analyzer {
  public:
    virtual ~Analyzer() = default;
    Analyzer(const Analyzer&) = delete;
    Analyzer& operator=(const Analyzer&) = delete;

    // One batch of one match, in order. Report signals through `signals`.
    virtual void on_batch(const Batch& batch, Signals& signals) = 0;

  protected:
    explicit Analyzer(const Context& context) : host_(context.host) {}
    const HostServices& host() const { return host_; }

  private:
    HostServices host_;
};

}  // namespace arbiter
