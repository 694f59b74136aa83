// Whether a file the host reads may be trusted: whoever can write a plugin library runs
// code in the host, whoever can write a token or baseline file decides what it holds. A
// file (and the folder it stands in) must belong to this user or root, and no one else
// may write it: not the world, nor a group other than this process's own; a secret must
// not be readable by group or world either. Sizes are capped, so that
// a file replaced by something huge (or /dev/zero) is refused, not read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::host {

struct FileRules {
    const char* what;     // "plugin library", "token file", ... for the message
    uint64_t max_bytes;   // larger is refused unread
    bool secret = false;  // also refused when others may read it
};

inline constexpr FileRules kPluginLibraryRules{"plugin library", 1024ull << 20};
// The program isolated plugins run in: started at each start of a child, and unconfined
// until it confines itself, so held to a library's rules.
inline constexpr FileRules kPluginRunnerRules{"plugin runner", 1024ull << 20};
inline constexpr FileRules kBaselineRules{"baseline file", 256ull << 20};
inline constexpr FileRules kTokenRules{"token file", 4096, true};
inline constexpr FileRules kConfigRules{"config file", 16ull << 20};
// A plugin's minisign signature: four short lines (plugin_signature.hpp).
inline constexpr FileRules kSignatureRules{"signature file", 4096};

// Why `path` may not be trusted under `rules`, or nothing when it may. Follows a final
// symbolic link (a deploy tool's "current" link is common), then checks the file and
// the folder it is in: regular file, owner, write bits, size.
std::optional<std::string> untrusted_file(const std::filesystem::path& path,
                                          const FileRules& rules);

// The whole file, after the checks above; throws std::runtime_error saying why not.
std::vector<uint8_t> read_trusted_file(const std::filesystem::path& path, const FileRules& rules);

// A folder the host makes its own (the plugin work folder): when it exists it must be a
// real folder (not a link) owned by this user; nothing when it is fine or absent.
std::optional<std::string> untrusted_own_folder(const std::filesystem::path& path);

}  // namespace arbiter::host
