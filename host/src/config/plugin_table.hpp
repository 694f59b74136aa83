// A [plugins.NAME] table: the library, its trust (pins, signers), its isolation and its
// own settings, checked and located.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"
#include "config/table_reader.hpp"

namespace arbiter::host::config_reading {

// A bundled plugin's name ("reference"), not a path to a library.
bool is_bundled_name(const std::string& library);
// Reads the table into a PluginSettings appended to out.plugins.
void read_plugin(const std::string& name, const toml::table& table, const SourcePosition& position,
                 const std::filesystem::path& base_dir, const ConfigLoadOptions& options,
                 const std::string& file, std::vector<std::string>& problems, ServerConfig& out);

}  // namespace arbiter::host::config_reading
