#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "arbiter/host/untrusted_text.hpp"
#include "commands.hpp"
#include "store/store.hpp"

namespace arbiter::cli {

bool setup_logging(const std::string& level) {
    if (!host::is_log_level(level)) {
        std::fprintf(stderr, "arbiter: unknown log level '%s' (one of %s)\n", level.c_str(),
                     host::kLogLevelsText);
        return false;
    }
    auto logger = spdlog::stderr_color_mt("arbiter");
    logger->set_pattern("[%l] %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(level));
    return true;
}

std::optional<host::ServerConfig> load_config_or_report(const std::string& path) {
    try {
        return host::load_config(path);
    } catch (const host::ConfigError& error) {
        for (const auto& problem : error.problems())
            std::fprintf(stderr, "%s\n", problem.c_str());
        return std::nullopt;
    }
}

void warn_refused_plugins(const host::Host& host, const char* command) {
    std::string names;
    for (const auto& slot : host.plugins())
        if (!slot.error.empty()) names += (names.empty() ? "" : ", ") + slot.settings.name;
    if (names.empty()) return;
    std::fprintf(stderr,
                 "arbiter %s: WARNING: assessed WITHOUT the refused plugin(s) %s (see above): what "
                 "they check is not in these assessments\n",
                 command, names.c_str());
}

std::unique_ptr<host::Host> start_host(host::ServerConfig config, const char* command,
                                       bool whole_config) {
    std::unique_ptr<host::Host> host;
    try {
        auto attachments = host::attach_store(config);
        host = std::make_unique<host::Host>(std::move(config), std::move(attachments));
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter %s: cannot start the host: %s\n", command, error.what());
        return nullptr;
    }
    if (whole_config)
        if (const auto refused = host->refused_at_start()) {
            std::fprintf(stderr, "arbiter %s: %s\n", command, refused->c_str());
            return nullptr;
        }
    return host;
}

bool has_enabled_plugin(const host::ServerConfig& config) {
    for (const auto& plugin : config.plugins)
        if (plugin.enabled) return true;
    return false;
}

bool report_if_no_plugin(const host::ServerConfig& config, const char* command) {
    if (has_enabled_plugin(config)) return false;
    std::fprintf(stderr,
                 "arbiter %s: %s enables no plugin, so every player would be Clear; add a "
                 "[plugins.NAME] table (docs/server-config.md)\n",
                 command, config.file.string().c_str());
    return true;
}

}  // namespace arbiter::cli

namespace arbiter::cli {

std::optional<tools::HumanRhythm> load_human_rhythm(const std::optional<std::string>& named,
                                                    const char* command) {
    std::filesystem::path file;
    if (named) {
        if (*named == "builtin") return tools::HumanRhythm::builtin();
        file = *named;
    } else {
        file = tools::default_human_traces();
        if (file.empty()) {
            std::fprintf(stderr,
                         "arbiter %s: ../shared/data/human-traces is absent: honest players' "
                         "rhythm comes from the built-in table\n",
                         command);
            return tools::HumanRhythm::builtin();
        }
    }
    try {
        return tools::HumanRhythm::from_file(file);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter %s: human traces: %s\n", command, error.what());
        return std::nullopt;
    }
}

std::string relay_name_problem(const std::string& name) {
    if (name.size() > 64) return "--relay takes at most 64 bytes";
    if (!host::is_valid_utf8(name) || name.find('\0') != std::string::npos)
        return "--relay must be text (UTF-8, no NUL)";
    return "";
}

ValueReader player_mix_reader(std::string option, std::vector<tools::PlayerMix>& target) {
    return [option = std::move(option), &target](const std::string& value) {
        try {
            target = tools::parse_player_mix(value);
        } catch (const std::invalid_argument& error) {
            std::string what = error.what();
            // The parser names simulate's option; soak's is another.
            if (what.starts_with("--players")) what.replace(0, 9, option);
            return what;
        }
        return std::string();
    };
}

// The first line of the token file, or ARBITER_TOKEN; a token on the command line would
// show in every process listing.
std::optional<std::string> read_relay_token(const std::optional<std::string>& token_file,
                                            const char* command) {
    if (token_file) {
        // Read at most 4 KiB: a token is short, and the file may be anything (/dev/zero).
        std::ifstream in(*token_file, std::ios::binary);
        std::string head(4096, '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        head.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
        const size_t end = head.find('\n');
        if (!in.good() && !in.eof()) head.clear();
        if (head.empty() || end == 0 || (end == std::string::npos && head.size() == 4096)) {
            std::fprintf(
                stderr, "arbiter %s: cannot read a token from %s (its first line, up to 4 KiB)\n",
                command, token_file->c_str());
            return std::nullopt;
        }
        head.resize(std::min(end, head.size()));
        if (!head.empty() && head.back() == '\r') head.pop_back();
        return head;
    }
    if (const char* token = std::getenv("ARBITER_TOKEN")) return std::string(token);
    return std::string();
}

}  // namespace arbiter::cli
