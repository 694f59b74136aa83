// `arbiter plugins CONFIG`: what each configured plugin is, as negotiated.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "arbiter/host/host.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace arbiter::cli {

int run_plugins(const std::vector<std::string>& args) {
    OptionReader options("plugins", "usage: arbiter plugins CONFIG\n");
    if (!options.read(args)) return kExitUsage;
    if (options.positional().size() != 1) {
        std::fprintf(stderr, "usage: arbiter plugins CONFIG\n");
        return kExitUsage;
    }
    auto config = load_config_or_report(options.positional()[0]);
    if (!config || report_if_no_plugin(*config, "plugins")) return kExitInput;
    (void)setup_logging("warn");

    // Refused plugins are what this command shows: the host starts without them.
    std::unique_ptr<host::Host> host = start_host(std::move(*config), "plugins", false);
    if (!host) return kExitInput;
    // abi and schema: what the plugin was built against; the -min columns: the oldest it
    // works with (a host older than that refuses it).
    const char* row = "{:<12} {:<12} {:<10} {:<5} {:<8} {:<7} {:<10} {:<12} {:<56} {}\n";
    std::cout << fmt::format(fmt::runtime(row), "key", "plugin", "version", "abi", "abi-min",
                             "schema", "schema-min", "class", "capabilities", "library");
    bool refused = false;
    for (const auto& slot : host->plugins()) {
        if (!slot.active()) {
            refused = true;
            std::cout << fmt::format("{:<12} REFUSED: {}\n", slot.settings.name, slot.error);
            continue;
        }
        const auto& id = slot.library->identity();
        std::cout << fmt::format(fmt::runtime(row), slot.settings.name, id.name, id.version,
                                 fmt::format("{}.{}", id.abi_major, id.abi_minor),
                                 fmt::format("{}.{}", id.abi_major, id.abi_minor_required),
                                 fmt::format("{}.{}", id.schema_major, id.schema_minor),
                                 fmt::format("{}.{}", id.schema_major, id.schema_minor_required),
                                 host::to_string(slot.model_class),
                                 host::describe_capabilities(id.capabilities),
                                 slot.settings.library.string());
    }
    return refused ? kExitPartial : kExitOk;
}

}  // namespace arbiter::cli
