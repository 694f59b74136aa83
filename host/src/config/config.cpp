// Reads server_config.toml: the host's own tables here, a plugin's in plugin_table.cpp.
// toml++ comes in through table_reader.hpp alone, into these two translation units (its
// header is expensive to compile; Debian's package provides the compiled implementation).
#include "arbiter/host/config.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <flatbuffers/flexbuffers.h>

#include <toml++/toml.h>

#include "arbiter/host/file_trust.hpp"
#include "arbiter/host/suggest.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "config/plugin_table.hpp"
#include "config/table_reader.hpp"
#include "config/toml_prescan.hpp"

namespace arbiter::host {

const char* to_string(ModelClass model_class) {
    switch (model_class) {
        case ModelClass::validation:
            return "validation";
        case ModelClass::behavioural:
            return "behavioural";
        case ModelClass::statistical:
            return "statistical";
    }
    return "unknown";
}

std::optional<ModelClass> model_class_from_string(std::string_view text) {
    if (text == "validation") return ModelClass::validation;
    if (text == "behavioural" || text == "behavioral") return ModelClass::behavioural;
    if (text == "statistical") return ModelClass::statistical;
    return std::nullopt;
}

std::string SourcePosition::str() const {
    if (line == 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

static std::string join_problems(const std::vector<std::string>& problems) {
    std::string text;
    for (const auto& problem : problems)
        text += (text.empty() ? "" : "\n") + problem;
    return text;
}

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_problems(problems)), problems_(std::move(problems)) {}

SourcePosition PluginSettings::locate(const std::string& key_path) const {
    // The plugin may name a key inside an array ("weapons[2]") or a key we do not know:
    // fall back to the nearest enclosing key, then to the plugin's table.
    std::string path = key_path;
    while (!path.empty()) {
        if (auto it = config_positions.find(path); it != config_positions.end()) return it->second;
        auto cut = path.find_last_of(".[");
        if (cut == std::string::npos) break;
        path.resize(cut);
    }
    return position;
}

std::filesystem::path default_bundled_plugin_dir() {
    // Found from the binary that holds this code, not from the running program: a relay
    // in Python or C that loads libarbiter-host.so has its own executable somewhere else.
    // The library stands in <prefix>/lib, the executable in <prefix>/bin, and the plugins
    // in <prefix>/lib/arbiter/plugins, in the build tree as in an install.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&default_bundled_plugin_dir), &info) != 0 &&
        info.dli_fname && *info.dli_fname) {
        std::error_code error;
        auto holder = std::filesystem::canonical(info.dli_fname, error);
        if (!error) {
            const bool in_library = holder.filename().string().starts_with("libarbiter-host.so");
            auto lib_dir = in_library ? holder.parent_path() : holder.parent_path() / ".." / "lib";
            return (lib_dir / "arbiter" / "plugins").lexically_normal();
        }
    }
    std::error_code error;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return {};
    return (exe.parent_path() / ".." / "lib" / "arbiter" / "plugins").lexically_normal();
}

namespace {

using namespace config_reading;
// A path in the config: relative ones are relative to the config file's folder.
std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir) {
    if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (base_dir / path).lexically_normal().string();
}

void read_serve(const toml::table& table, const std::string& file,
                const std::filesystem::path& base_dir, std::vector<std::string>& problems,
                ServeSettings& serve) {
    TableReader reader(table, "serve", file, problems);
    if (reader.string("unix_socket", serve.unix_socket)) {
        serve.unix_socket = resolve_path(serve.unix_socket, base_dir);
        // sockaddr_un holds 107 bytes and a NUL.
        if (serve.unix_socket.size() > 107)
            reader.problem(*table.get("unix_socket"), "unix_socket",
                           "a Unix socket path can be at most 107 bytes long");
    }
    if (reader.string("control_socket", serve.control_socket)) {
        serve.control_socket = resolve_path(serve.control_socket, base_dir);
        if (serve.control_socket.size() > 107)
            reader.problem(*table.get("control_socket"), "control_socket",
                           "a Unix socket path can be at most 107 bytes long");
    }
    if (reader.string("tcp_listen", serve.tcp_listen) && !serve.tcp_listen.empty() &&
        serve.tcp_listen.rfind(':') == std::string::npos)
        reader.problem(*table.get("tcp_listen"), "tcp_listen",
                       "expected \"address:port\", e.g. \"127.0.0.1:7878\"");
    reader.boolean("tcp_allow_remote", serve.tcp_allow_remote);
    reader.integer("unix_socket_mode", serve.unix_socket_mode, 0, 0777);
    if (reader.string("metrics_listen", serve.metrics_listen) && !serve.metrics_listen.empty() &&
        serve.metrics_listen.rfind(':') == std::string::npos)
        reader.problem(*table.get("metrics_listen"), "metrics_listen",
                       "expected \"address:port\", e.g. \"127.0.0.1:9464\"");
    reader.boolean("metrics_allow_remote", serve.metrics_allow_remote);
    if (reader.string("review_listen", serve.review_listen) && !serve.review_listen.empty() &&
        serve.review_listen.rfind(':') == std::string::npos)
        reader.problem(*table.get("review_listen"), "review_listen",
                       "expected \"address:port\", e.g. \"127.0.0.1:8088\"");
    reader.boolean("review_allow_remote", serve.review_allow_remote);
    if (reader.string("review_token_file", serve.review_token_file))
        serve.review_token_file = resolve_path(serve.review_token_file, base_dir);
    if (!serve.review_listen.empty() && serve.review_token_file.empty())
        reader.problem(*table.get("review_listen"), "review_listen",
                       "the review page needs a login token: set serve.review_token_file");
    reader.string("token", serve.token);
    if (reader.string("token_file", serve.token_file))
        serve.token_file = resolve_path(serve.token_file, base_dir);
    reader.boolean("unix_requires_token", serve.unix_requires_token);
    reader.integer("max_queued_bytes", serve.max_queued_bytes, 1024 * 1024,
                   16ll * 1024 * 1024 * 1024);
    reader.integer("max_reply_bytes", serve.max_reply_bytes, 64 * 1024, 1024ll * 1024 * 1024);
    reader.integer("max_connections", serve.max_connections, 1, 65'536);
    reader.integer("max_pending_connections", serve.max_pending_connections, 1, 65'536);
    reader.integer("hello_timeout_ms", serve.hello_timeout_ms, 100, 600'000);
    reader.integer("token_failures_per_address", serve.token_failures_per_address, 1, 1'000'000);
    reader.integer("token_failures_overall", serve.token_failures_overall, 1, 100'000'000);
    reader.integer("token_failure_window_ms", serve.token_failure_window_ms, 1000, 86'400'000);
    reader.integer("token_failure_addresses", serve.token_failure_addresses, 16, 1'048'576);
    reader.boolean("watch", serve.watch);
    reader.integer("watch_settle_ms", serve.watch_settle_ms, 0, 60'000);
    reader.integer("idle_match_end_s", serve.idle_match_end_s, 0, 7 * 24 * 3600);
    if (!serve.token.empty() && !serve.token_file.empty())
        problems.push_back(reader.where(table).str() +
                           ": serve: give token or token_file, not both");
    if (const toml::table* relays = reader.table("relays")) {
        for (const auto& [key, node] : *relays) {
            const std::string name(key.str());
            TableReader relay_reader(*relays, "serve.relays", file, problems);
            const toml::table* table_of_relay = relay_reader.table(name);
            if (!table_of_relay) continue;
            TableReader credential(*table_of_relay, "serve.relays." + name, file, problems);
            ServeSettings::RelayCredential entry;
            credential.string("token", entry.token);
            if (credential.string("token_file", entry.token_file))
                entry.token_file = resolve_path(entry.token_file, base_dir);
            if (name.empty() || name.size() > 64 || name.find('\0') != std::string::npos)
                problems.push_back(credential.where(*table_of_relay).str() +
                                   ": serve.relays: a relay's name is 1 to 64 bytes");
            if (entry.token.empty() == entry.token_file.empty())
                problems.push_back(credential.where(*table_of_relay).str() + ": serve.relays." +
                                   name + ": give token or token_file (one of them)");
            credential.reject_unknown();
            serve.relays.emplace(name, std::move(entry));
        }
    }
    if (!serve.tcp_listen.empty() && serve.token.empty() && serve.token_file.empty() &&
        serve.relays.empty())
        reader.problem(*table.get("tcp_listen"), "tcp_listen",
                       "relays over TCP must give a token: set serve.token, serve.token_file or a "
                       "[serve.relays.NAME] table");
    reader.reject_unknown();
}

ServerConfig read_config(const toml::table& root, const std::string& file,
                         const std::filesystem::path& base_dir, const ConfigLoadOptions& options) {
    std::vector<std::string> problems;
    ServerConfig config;
    config.file = file;
    TableReader top(root, "", file, problems);

    if (const toml::table* host = top.table("host")) {
        TableReader reader(*host, "host", file, problems);
        reader.string("server_id", config.host.server_id);
        reader.string("work_dir", config.host.work_dir);
        if (reader.string("log_level", config.host.log_level) &&
            !is_log_level(config.host.log_level))
            reader.problem(*host->get("log_level"), "log_level",
                           std::string("expected one of ") + kLogLevelsText);
        reader.integer("max_batch_bytes", config.host.max_batch_bytes, 1024, 64ll * 1024 * 1024);
        reader.boolean("partial_start", config.host.partial_start);
        if (host->contains("threads")) {
            uint64_t threads = 0;
            reader.integer("threads", threads, 0, 256);
            config.host.threads = static_cast<uint32_t>(threads);
        }
        if (reader.string("plugin_runner", config.host.plugin_runner))
            config.host.plugin_runner = resolve_path(config.host.plugin_runner, base_dir);
        if (reader.string("runner_user", config.host.runner_user) &&
            (config.host.runner_user.empty() || config.host.runner_user == "root"))
            reader.problem(*host->get("runner_user"), "runner_user",
                           "expected the name of an unprivileged user for isolated plugins' "
                           "runners (a dedicated one, such as \"arbiter-plugins\"), not \"" +
                               config.host.runner_user + "\"");
        if (!config.host.work_dir.empty() &&
            std::filesystem::path(config.host.work_dir).is_relative())
            config.host.work_dir = (base_dir / config.host.work_dir).lexically_normal().string();
        reader.reject_unknown();
    }

    // Before [plugins], whose signed_by names these keys.
    if (const toml::table* signing = top.table("signing")) {
        TableReader reader(*signing, "signing", file, problems);
        if (const toml::table* keys = reader.table("keys")) {
            for (const auto& [key, node] : *keys) {
                const std::string name(key.str());
                if (!node.is_string()) {
                    reader.problem(node, "keys." + name,
                                   std::string("expected a minisign public key (\"RW...\"), got ") +
                                       type_name(node));
                    continue;
                }
                try {
                    config.signing.keys.push_back(
                        parse_signing_key(name, *node.value<std::string>()));
                } catch (const SignatureError& error) {
                    reader.problem(node, "keys." + name, error.what());
                }
            }
        }
        reader.boolean("require", config.signing.require);
        if (config.signing.require && config.signing.keys.empty())
            problems.push_back(reader.where(*signing).str() +
                               ": signing: require is true, but [signing] keys lists no key");
        reader.reject_unknown();
    }

    if (const toml::table* aggregation = top.table("aggregation")) {
        TableReader reader(*aggregation, "aggregation", file, problems);
        auto& a = config.aggregation;
        reader.number("monitor_threshold", a.monitor_threshold, 0.0, 1.0);
        reader.number("review_threshold", a.review_threshold, 0.0, 1.0);
        reader.number("restrict_threshold", a.restrict_threshold, 0.0, 1.0);
        reader.boolean("enforcement", a.enforcement);
        reader.boolean("validation_alone_reaches_review", a.validation_alone_reaches_review);
        reader.model_classes("second_class_required", a.second_class_required);
        reader.boolean("tripwires_reach_review", a.tripwires_reach_review);
        if (a.monitor_threshold > a.review_threshold)
            problems.push_back(reader.where(*aggregation).str() +
                               ": aggregation: monitor_threshold must not exceed review_threshold");
        if (a.review_threshold > a.restrict_threshold)
            problems.push_back(
                reader.where(*aggregation).str() +
                ": aggregation: review_threshold must not exceed restrict_threshold");
        reader.reject_unknown();
    }

    if (const toml::table* sinks = top.table("sinks")) {
        TableReader reader(*sinks, "sinks", file, problems);
        if (reader.string("security_log", config.sinks.security_log) &&
            !config.sinks.security_log.empty() &&
            std::filesystem::path(config.sinks.security_log).is_relative())
            config.sinks.security_log =
                (base_dir / config.sinks.security_log).lexically_normal().string();
        reader.number("report_threshold", config.sinks.report_threshold, 0.0, 1.0);
        reader.reject_unknown();
    }

    if (const toml::table* store = top.table("store")) {
        TableReader reader(*store, "store", file, problems);
        if (reader.string("path", config.store.path) && !config.store.path.empty())
            config.store.path = resolve_path(config.store.path, base_dir);
        reader.string("postgres", config.store.postgres);
        if (!config.store.path.empty() && !config.store.postgres.empty())
            reader.problem(*store->get("postgres"), "postgres",
                           "a store is one file (path) or one PostgreSQL database (postgres), "
                           "not both");
        reader.integer("commit_interval_ms", config.store.commit_interval_ms, 1, 60'000);
        reader.integer("max_queued", config.store.max_queued, 1, 100'000'000);
        std::string unwritable;
        if (reader.string("on_unwritable", unwritable)) {
            if (unwritable == "start")
                config.store.start_unwritable = true;
            else if (unwritable != "refuse")
                reader.problem(*store->get("on_unwritable"), "on_unwritable",
                               "expected \"refuse\" (the host does not start) or \"start\" (it "
                               "starts, warns, and writes once the store can be written), got \"" +
                                   unwritable + "\"");
        }
        reader.reject_unknown();
    }

    if (const toml::table* serve = top.table("serve"))
        read_serve(*serve, file, base_dir, problems, config.serve);

    if (const toml::table* correlation = top.table("correlation")) {
        TableReader reader(*correlation, "correlation", file, problems);
        CorrelationSettings& c = config.correlation;
        reader.boolean("enabled", c.enabled);
        reader.integer("window_days", c.window_days, 1, 365);
        reader.number("weight", c.weight, 0.0, 1.0);
        // As a plugin's `class`; left out, each signal keeps the class of its flags.
        reader.model_class("class", c.model_class);
        reader.integer("refresh_s", c.refresh_s, 1, 86'400);
        reader.integer("settle_ms", c.settle_ms, 0, 60'000);
        reader.reject_unknown();
        if (c.enabled && !config.store.enabled())
            problems.push_back(reader.where(*correlation).str() +
                               ": correlation: it reads what other servers reported from the "
                               "store: set [store] path or postgres");
    }

    if (!config.serve.review_listen.empty() && !config.store.enabled())
        problems.push_back(file + ": serve.review_listen: the review page works from the store: "
                                  "set [store] path or postgres");

    if (const toml::table* plugins = top.table("plugins")) {
        for (const auto& [key, node] : *plugins) {
            std::string name(key.str());
            const auto& begin = key.source().begin;
            SourcePosition position{file, begin.line, begin.column};
            if (!node.is_table()) {
                problems.push_back(position.str() + ": plugins." + name +
                                   ": expected a table, got " + type_name(node));
                continue;
            }
            read_plugin(name, *node.as_table(), position, base_dir, options, file, problems,
                        config);
        }
        // toml++ keeps a table's keys sorted; plugins run in the order the file gives.
        std::stable_sort(config.plugins.begin(), config.plugins.end(),
                         [](const auto& a, const auto& b) {
                             return std::tie(a.position.line, a.position.column) <
                                    std::tie(b.position.line, b.position.column);
                         });
    }
    top.reject_unknown();
    if (config.correlation.enabled)
        for (const auto& plugin : config.plugins)
            if (plugin.name == "correlation")
                problems.push_back(plugin.position.str() +
                                   ": plugins.correlation: with [correlation] enabled, "
                                   "'correlation' names the store's signals; give this plugin "
                                   "another key");

    if (!problems.empty()) throw ConfigError(std::move(problems));
    return config;
}

}  // namespace

bool is_log_level(std::string_view name) {
    for (const char* level : {"trace", "debug", "info", "warn", "error", "off"})
        if (name == level) return true;
    return false;
}

ServerConfig parse_config(std::string_view text, const std::string& name,
                          const std::filesystem::path& base_dir, const ConfigLoadOptions& options) {
    if (const auto problem = toml_text_problem(text)) {
        const SourcePosition position{name, static_cast<uint32_t>(problem->line),
                                      static_cast<uint32_t>(problem->column)};
        throw ConfigError({position.str() + ": " + problem->what});
    }
    toml::table root;
    try {
        root = toml::parse(text, name);
    } catch (const toml::parse_error& error) {
        const auto& begin = error.source().begin;
        SourcePosition position{name, begin.line, begin.column};
        std::string what(error.description());
        // toml++ calls a missing closing quote a control character (the line feed) or the
        // end of the file: where that is what happened, say so.
        if (const auto open = first_unclosed_string(text);
            open && open->explains(begin.line, begin.column))
            what = open->describe();
        throw ConfigError({position.str() + ": " + what});
    }
    return read_config(root, name, base_dir, options);
}

ServerConfig load_config(const std::filesystem::path& file, const ConfigLoadOptions& options) {
    // Whoever can write the config names the libraries the host loads: it is held to the
    // rules of a plugin library (owner, write bits, its folder's too), and a config is a
    // few kilobytes, so one that is not (a link to /dev/zero, a log written over it) is
    // refused rather than read to the end.
    std::vector<uint8_t> bytes;
    try {
        bytes = read_trusted_file(file, kConfigRules);
    } catch (const std::runtime_error& error) {
        throw ConfigError({error.what()});
    }
    auto base_dir = std::filesystem::absolute(file).parent_path();
    return parse_config(std::string(bytes.begin(), bytes.end()), file.string(), base_dir, options);
}

}  // namespace arbiter::host

namespace arbiter::host {

uint32_t HostSettings::default_threads() {
    const unsigned cores = std::thread::hardware_concurrency();
    return cores == 0 ? 1 : std::min(cores, 256u);
}

}  // namespace arbiter::host
