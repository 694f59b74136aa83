// `arbiter check-plugin LIB [--config CONFIG] [--events FILE]`: everything an operator
// should know before dropping a plugin in. The steps that run the plugin's code happen
// in a child process, so that a plugin that crashes yields a verdict, not a crash.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <flatbuffers/flexbuffers.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/config.hpp"
#include "arbiter/host/elf_symbols.hpp"
#include "arbiter/host/event_file.hpp"
#include "arbiter/host/ingest.hpp"
#include "arbiter/host/plugin_instance.hpp"
#include "arbiter/host/plugin_library.hpp"
#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace arbiter::cli {

namespace {

// Ordered by severity: the verdict is the worst step.
enum class Outcome { pass = 0, warn = 1, fail = 2 };

struct CheckOptions {
    std::filesystem::path library;
    std::optional<std::string> config;
    std::filesystem::path events;
};

std::filesystem::path default_sample_events() {
    return (host::default_bundled_plugin_dir() / ".." / ".." / ".." / "share" / "arbiter" /
            "samples" / "sample-match.arbev")
        .lexically_normal();
}

void report(Outcome outcome, const std::string& text) {
    static const char* labels[] = {"PASS", "WARN", "FAIL"};
    std::printf("  %s  %s\n", labels[static_cast<int>(outcome)], text.c_str());
    std::fflush(stdout);
}

void detail(const std::string& text) {
    std::printf("        %s\n", text.c_str());
    std::fflush(stdout);
}

Outcome check_symbols(const std::filesystem::path& library) {
    host::DynamicSymbols symbols;
    try {
        symbols = host::read_dynamic_symbols(library);
    } catch (const std::exception& error) {
        report(Outcome::fail, error.what());
        return Outcome::fail;
    }
    Outcome worst = Outcome::pass;
    std::vector<std::string> extra;
    bool has_entry = false;
    for (const auto& name : symbols.exported) {
        if (name == ARB_ENTRY_SYMBOL)
            has_entry = true;
        else
            extra.push_back(name);
    }
    if (!has_entry) {
        report(Outcome::fail,
               "does not export " ARB_ENTRY_SYMBOL ", the function the host calls first");
        // The usual cause is the one line of the SDK an author can forget and still build.
        detail("a plugin built with the SDK gets it from one line, after its analyzer class,");
        detail("in one of its source files: ARBITER_PLUGIN(YourAnalyzer);");
        detail("(<arbiter/sdk.hpp>; docs/writing-a-plugin.md, section 3). arbiter_add_plugin()");
        detail("stops the link of a plugin without it. A plugin in C defines");
        detail("arb_status " ARB_ENTRY_SYMBOL "(arb_negotiation*) itself, with default visibility");
        worst = Outcome::fail;
    } else if (extra.empty()) {
        report(Outcome::pass, "exports " ARB_ENTRY_SYMBOL " and nothing else");
    } else {
        report(Outcome::warn, fmt::format("exports {} symbol(s) besides the entry (build it with "
                                          "arbiter_add_plugin(), which hides them)",
                                          extra.size()));
        for (size_t i = 0; i < extra.size() && i < 10; ++i)
            detail(extra[i]);
        if (extra.size() > 10) detail(fmt::format("... and {} more", extra.size() - 10));
        worst = Outcome::warn;
    }
    if (symbols.unique.empty()) {
        report(Outcome::pass, "no GNU unique symbols (so a reload can unload it)");
    } else {
        report(Outcome::warn,
               fmt::format("{} GNU unique symbol(s) will keep it loaded after release, so a hot "
                           "reload never frees it (compile with -fno-gnu-unique)",
                           symbols.unique.size()));
        for (size_t i = 0; i < symbols.unique.size() && i < 10; ++i)
            detail(symbols.unique[i]);
        worst = Outcome::warn;
    }
    return worst;
}

// The plugin's settings from a server_config.toml: the table whose library is this
// file, else the one named like the plugin, else an empty table.
host::PluginSettings settings_for(const CheckOptions& options, const host::PluginIdentity& identity,
                                  std::string& origin) {
    host::PluginSettings settings;
    settings.name = identity.name;
    settings.library = options.library;
    settings.position = {"(no config)", 0, 0};
    flexbuffers::Builder empty_table;
    empty_table.Map([] {});
    empty_table.Finish();
    settings.config = empty_table.GetBuffer();
    origin = "an empty config table";
    if (!options.config) return settings;
    auto config = host::load_config(*options.config);
    std::error_code error;
    auto wanted = std::filesystem::weakly_canonical(options.library, error);
    for (const auto& plugin : config.plugins) {
        if (std::filesystem::weakly_canonical(plugin.library, error) == wanted ||
            plugin.name == identity.name) {
            origin = fmt::format("[plugins.{}] of {}", plugin.name, *options.config);
            return plugin;
        }
    }
    origin =
        fmt::format("an empty config table ({} has no table for this plugin)", *options.config);
    return settings;
}

std::string micros(double nanoseconds) {
    return fmt::format("{:.1f} us", nanoseconds / 1000.0);
}

// The steps that run plugin code. Returns the worst outcome.
Outcome run_plugin_steps(const CheckOptions& options) {
    host::Metrics metrics;
    host::PluginCopies store;
    std::shared_ptr<host::PluginLibrary> library;
    try {
        library = host::PluginLibrary::load(options.library, "checked", store, &metrics);
    } catch (const std::exception& error) {
        report(Outcome::fail, error.what());
        return Outcome::fail;
    }
    const auto& id = library->identity();
    report(Outcome::pass,
           fmt::format(
               "negotiates: {} {}, ABI {} (host {}.{}, in use {}.{}), event schema {} "
               "(host {}.{})",
               id.name, id.version,
               host::describe_version(id.abi_major, id.abi_minor, id.abi_minor_required),
               ARB_ABI_VERSION_MAJOR, ARB_ABI_VERSION_MINOR, id.abi_major, id.abi_minor_in_use,
               host::describe_version(id.schema_major, id.schema_minor, id.schema_minor_required),
               ARB_SCHEMA_VERSION_MAJOR, ARB_SCHEMA_VERSION_MINOR));
    // What an operator pins in the plugin's table to refuse any other build of it.
    const std::string sha256 = library->sha256();
    detail(fmt::format("sha256: {}  (pin it: sha256 = \"{}\")", sha256, sha256));
    detail(fmt::format("capabilities: {}; declared class: {}",
                       host::describe_capabilities(id.capabilities),
                       host::to_string(id.declared_class)));
    detail(fmt::format("contact: {}; {}", id.contact.empty() ? "-" : id.contact, id.description));
    Outcome worst = Outcome::pass;
    // Legal, and fine for a check that keeps nothing between batches, but most analyzers
    // keep windows or budgets, and nothing else tells their author these go at a reload.
    if (!(id.capabilities & ARB_CAP_STATE)) {
        report(Outcome::warn,
               "saves no state (no save_state/restore_state, ARB_CAP_STATE): every hot reload, "
               "and every restart of it when isolated, starts it afresh, and the history it "
               "kept of the matches in play is lost");
        detail("to carry it over, give the analyzer class std::vector<uint8_t> save_state()");
        detail("and void restore_state(std::span<const uint8_t>) (arbiter::StateWriter and");
        detail("StateReader; docs/writing-a-plugin.md, \"State across reload\")");
        worst = Outcome::warn;
    }
    if (!id.config_schema.is_null()) {
        report(Outcome::pass, "describes its config (JSON Schema of [plugins.NAME.config]):");
        const std::string schema = host::dump_json(id.config_schema, 2);
        for (size_t start = 0; start < schema.size();) {
            const size_t end = std::min(schema.find('\n', start), schema.size());
            detail(schema.substr(start, end - start));
            start = end + 1;
        }
    } else if (id.capabilities & ARB_CAP_DESCRIBE_CONFIG) {
        report(Outcome::warn, "does not describe its config: " + id.config_schema_problem);
    } else {
        detail("describes no config schema (no describe_config): only create checks its table");
    }

    std::unique_ptr<host::PluginInstance> instance;
    std::string origin;
    try {
        auto settings = settings_for(options, id, origin);
        instance = std::make_unique<host::PluginInstance>(
            library, settings, std::span<const uint8_t>(), 0, 1, &metrics);
    } catch (const std::exception& error) {
        report(Outcome::fail, std::string("does not create: ") + error.what());
        return Outcome::fail;
    }
    report(Outcome::pass, "creates with " + origin);

    std::vector<double> batch_ns;
    uint64_t events = 0, signals = 0, errors = 0, dropped = 0;
    std::string first_error;
    try {
        host::EventFileReader reader(options.events);
        while (auto item = reader.next()) {
            if (item->kind != host::EventFileItem::Kind::record) continue;
            auto ingested = host::ingest_batch(item->payload, ARB_MAX_BATCH_BYTES);
            if (!ingested.ok) continue;
            auto start = std::chrono::steady_clock::now();
            auto result = instance->on_batch(ingested.batch);
            auto stop = std::chrono::steady_clock::now();
            batch_ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
            events += ingested.batch.event_count;
            signals += result.signals.size();
            dropped += result.dropped;
            if (!result.ok()) {
                if (!errors++)
                    first_error =
                        std::string(host::status_name(result.status)) + ": " + result.error;
            }
            if (ingested.batch.ends_match)
                instance->on_match_end(ingested.batch.relay_id, ingested.batch.match_id);
        }
    } catch (const std::exception& error) {
        report(Outcome::fail, std::string("cannot read the sample match: ") + error.what());
        return Outcome::fail;
    }
    Outcome run = (errors || dropped) ? Outcome::warn : Outcome::pass;
    report(
        run,
        fmt::format(
            "runs {}: {} batches, {} events, {} signal(s), {} error(s), {} malformed signal(s)",
            options.events.filename().string(), batch_ns.size(), events, signals, errors, dropped));
    if (errors) detail("first error: " + first_error);
    worst = std::max(worst, run);
    if (!batch_ns.empty()) {
        double total = 0;
        for (double ns : batch_ns)
            total += ns;
        std::sort(batch_ns.begin(), batch_ns.end());
        detail(fmt::format(
            "time per batch: median {}, 99th percentile {}, mean {} ({:.0f} ns per event)",
            micros(batch_ns[batch_ns.size() / 2]), micros(batch_ns[batch_ns.size() * 99 / 100]),
            micros(total / static_cast<double>(batch_ns.size())),
            events ? total / static_cast<double>(events) : 0.0));
    }

    auto copy = library->private_copy();
    instance.reset();
    library.reset();
    if (host::library_still_resident(copy)) {
        report(Outcome::warn, "stays in memory after release: a hot reload cannot free it");
        worst = std::max(worst, Outcome::warn);
    } else {
        report(Outcome::pass, "unloads cleanly when released");
    }
    return worst;
}

// The child's exit status for each outcome: values nothing else uses, so that a plugin
// that calls exit(1), or a sanitizer that ends the process after a crash, is never read
// as one of our own outcomes.
constexpr int kChildExitBase = 70;

// Runs the plugin steps in a child; a crash there is reported as a failure.
Outcome run_isolated(const CheckOptions& options) {
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t child = ::fork();
    if (child < 0) {
        report(Outcome::fail,
               std::string("cannot fork a child to run the plugin in: ") + std::strerror(errno));
        return Outcome::fail;
    }
    if (child == 0) {
        Outcome outcome = run_plugin_steps(options);
        std::fflush(stdout);
        ::_exit(kChildExitBase + static_cast<int>(outcome));
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) >= kChildExitBase &&
        WEXITSTATUS(status) <= kChildExitBase + static_cast<int>(Outcome::fail))
        return static_cast<Outcome>(WEXITSTATUS(status) - kChildExitBase);
    if (WIFSIGNALED(status)) {
        report(Outcome::fail, fmt::format("the plugin crashed the process (signal {}: {})",
                                          WTERMSIG(status), ::strsignal(WTERMSIG(status))));
    } else {
        report(Outcome::fail,
               fmt::format("the plugin ended the process with exit status {} (it called exit, or "
                           "a sanitizer stopped it after a crash)",
                           WEXITSTATUS(status)));
    }
    return Outcome::fail;
}

constexpr const char* kUsage =
    "usage: arbiter check-plugin LIB [--config CONFIG] [--events FILE]\n";

}  // namespace

int run_check_plugin(const std::vector<std::string>& args) {
    CheckOptions options;
    OptionReader reader("check-plugin", kUsage);
    reader.text("--config", options.config);
    reader.text("--events", options.events);
    if (!reader.read(args)) return kExitUsage;
    const auto& positional = reader.positional();
    if (positional.size() != 1) {
        reader.complain("one plugin library, please");
        return kExitUsage;
    }
    options.library = positional[0];
    if (options.events.empty()) options.events = default_sample_events();
    if (options.config && !load_config_or_report(*options.config)) return kExitInput;
    (void)setup_logging("error");

    std::printf("arbiter check-plugin %s\n", options.library.c_str());
    Outcome worst = check_symbols(options.library);
    if (worst != Outcome::fail) worst = std::max(worst, run_isolated(options));
    static const char* verdicts[] = {"OK: ready to drop in", "USABLE, with the warnings above",
                                     "REFUSED: the host would not run this plugin"};
    std::printf("verdict: %s\n", verdicts[static_cast<int>(worst)]);
    return worst == Outcome::pass ? kExitOk : worst == Outcome::warn ? kExitPartial : kExitInput;
}

}  // namespace arbiter::cli
