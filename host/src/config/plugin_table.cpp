#include "config/plugin_table.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "arbiter/host/file_trust.hpp"

namespace arbiter::host::config_reading {

namespace {

bool valid_plugin_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!(std::islower(static_cast<unsigned char>(c)) ||
              std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
            return false;
    return true;
}

// [plugins.NAME] signed_by and signature: which of [signing] keys may have signed the
// library, and where its minisign signature is.
void read_signers(TableReader& reader, const toml::table& table, PluginSettings& plugin,
                  const std::filesystem::path& base_dir, const SigningSettings& signing) {
    std::vector<std::pair<std::string, const toml::node*>> names;
    if (const toml::node* node = reader.get("signed_by")) {
        if (node->is_string()) {
            names.emplace_back(*node->value<std::string>(), node);
        } else if (const toml::array* array = node->as_array()) {
            for (const auto& item : *array) {
                if (!item.is_string()) {
                    reader.problem(item, "signed_by", "expected the names of [signing] keys");
                    return;
                }
                names.emplace_back(*item.value<std::string>(), &item);
            }
        } else {
            reader.problem(
                *node, "signed_by",
                std::string("expected a key's name or an array of them, got ") + type_name(*node));
            return;
        }
    }
    for (const auto& named : names) {
        const std::string& name = named.first;
        const toml::node* node = named.second;
        auto key = std::find_if(signing.keys.begin(), signing.keys.end(),
                                [&](const SigningKey& k) { return k.name == name; });
        if (key == signing.keys.end()) {
            std::string known;
            for (const SigningKey& k : signing.keys)
                known += (known.empty() ? "" : ", ") + k.name;
            reader.problem(*node, "signed_by",
                           "no key '" + name + "' in [signing] keys" +
                               (known.empty() ? std::string(" (it lists none)")
                                              : " (it lists " + known + ")"));
            continue;
        }
        plugin.signers.push_back(*key);
    }
    if (names.empty() && signing.require) plugin.signers = signing.keys;
    std::string signature;
    if (reader.string("signature", signature)) {
        if (plugin.signers.empty())
            reader.problem(*table.get("signature"), "signature",
                           "a signature file, but no key to check it with: name one (signed_by) "
                           "or require signatures ([signing] require)");
        std::filesystem::path path(signature);
        plugin.signature = path.is_absolute() ? path : (base_dir / path).lexically_normal();
    } else if (!plugin.signers.empty()) {
        plugin.signature = plugin.library.string() + ".minisig";
    }
}

void read_isolation(TableReader& reader, const toml::table& table,
                    PluginSettings::Isolation& isolation) {
    std::string mode;
    if (reader.string("isolation", mode)) {
        if (mode == "process")
            isolation.process = true;
        else if (mode != "none")
            reader.problem(*table.get("isolation"), "isolation",
                           "expected \"none\" (in the host's process) or \"process\" (in a "
                           "confined child process), got \"" +
                               mode + "\"");
    }
    const char* const keys[] = {"memory_mb",          "cpu_seconds",      "checkpoint_batches",
                                "checkpoint_seconds", "max_restarts",     "restart_window_s",
                                "max_threads",        "run_between_calls"};
    reader.integer("memory_mb", isolation.memory_mb, 64, 1024 * 1024);
    reader.integer("cpu_seconds", isolation.cpu_seconds, 0, 365ll * 24 * 3600);
    reader.integer("checkpoint_batches", isolation.checkpoint_batches, 1, 1'000'000'000);
    reader.integer("checkpoint_seconds", isolation.checkpoint_seconds, 1, 24 * 3600);
    reader.integer("max_restarts", isolation.max_restarts, 0, 1000);
    reader.integer("restart_window_s", isolation.restart_window_s, 1, 7 * 24 * 3600);
    reader.integer("max_threads", isolation.max_threads, 1, 4096);
    reader.boolean("run_between_calls", isolation.run_between_calls);
    if (isolation.process) return;
    for (const char* key : keys)
        if (const toml::node* node = table.get(key))
            reader.problem(*node, key,
                           "applies to an isolated plugin only: add isolation = \"process\", "
                           "or remove it");
}

}  // namespace

bool is_bundled_name(const std::string& library) {
    return !library.empty() && library.find('/') == std::string::npos &&
           library.find(".so") == std::string::npos;
}

void read_plugin(const std::string& name, const toml::table& table, const SourcePosition& position,
                 const std::filesystem::path& base_dir, const ConfigLoadOptions& options,
                 const std::string& file, std::vector<std::string>& problems, ServerConfig& out) {
    TableReader reader(table, "plugins." + name, file, problems);
    PluginSettings plugin;
    plugin.name = name;
    plugin.position = position;
    if (!valid_plugin_name(name))
        problems.push_back(position.str() + ": plugins." + name +
                           ": a plugin's key is lower-case letters, digits, '_' and '-'");
    // The host's own metrics are named host.*, a plugin's <key>.*: the two must not meet.
    if (name == "host")
        problems.push_back(position.str() +
                           ": plugins.host: 'host' is reserved for the host's "
                           "own metrics; give the plugin another key");

    std::string library;
    if (!reader.string("library", library) || library.empty()) {
        problems.push_back(
            position.str() + ": plugins." + name +
            ": 'library' is required (a bundled plugin's name, or the path of a .so)");
    } else if (is_bundled_name(library)) {
        plugin.bundled = true;
        auto dir = options.bundled_plugin_dir.empty() ? default_bundled_plugin_dir()
                                                      : options.bundled_plugin_dir;
        plugin.library = dir / ("arbiter-" + library + ".so");
    } else {
        std::filesystem::path path(library);
        plugin.library = path.is_absolute() ? path : (base_dir / path).lexically_normal();
    }
    plugin.tripwires = plugin.bundled;
    reader.boolean("enabled", plugin.enabled);
    reader.model_class("class", plugin.model_class);
    reader.number("weight", plugin.weight, 0.0, 100.0);
    reader.integer("deadline_ms", plugin.deadline_ms, 1, 600'000);
    reader.boolean("tripwires", plugin.tripwires);
    read_isolation(reader, table, plugin.isolation);
    if (plugin.isolation.process) {
        // [host] says how every child starts; each isolated plugin carries it, so that a
        // change there starts its child again like a change of its own table.
        plugin.isolation.runner = out.host.plugin_runner;
        plugin.isolation.runner_user = out.host.runner_user;
    }
    reader.integer("max_signals_per_call", plugin.limits.max_signals_per_call, 1, 10'000'000);
    reader.integer("max_metric_names", plugin.limits.max_metric_names, 0, 10'000'000);
    reader.integer("log_bytes_per_s", plugin.limits.log_bytes_per_s, 1024, 1ll << 30);
    if (reader.string("sha256", plugin.sha256)) {
        std::transform(plugin.sha256.begin(), plugin.sha256.end(), plugin.sha256.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const bool hex = plugin.sha256.size() == 64 &&
                         std::all_of(plugin.sha256.begin(), plugin.sha256.end(), [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
        if (!hex)
            reader.problem(*table.get("sha256"), "sha256",
                           "expected the library's SHA-256: 64 hexadecimal digits (sha256sum "
                           "prints it, and so does `arbiter check-plugin`)");
    }
    read_signers(reader, table, plugin, base_dir, out.signing);
    std::string baseline;
    if (reader.string("baseline", baseline) && !baseline.empty()) {
        std::filesystem::path path(baseline);
        plugin.baseline = path.is_absolute() ? path : (base_dir / path).lexically_normal();
    }
    const toml::table* config = reader.table("config");
    toml::table empty;
    FlexConverter converter(file, plugin.config_positions, problems);
    plugin.config = converter.convert(config ? *config : empty);
    reader.reject_unknown();
    out.plugins.push_back(std::move(plugin));
}

}  // namespace arbiter::host::config_reading
