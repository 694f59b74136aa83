// What a shared library exports, read from its ELF dynamic symbol table, for
// `arbiter check-plugin` (docs/abi-rules.md, rule 14): a plugin exports its entry symbol and
// nothing else, and has no GNU unique symbols, which would keep it loaded forever.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace arbiter::host {

struct DynamicSymbols {
    std::vector<std::string> exported;  // defined, global or weak, default visibility
    std::vector<std::string> unique;    // defined with binding STB_GNU_UNIQUE
};

// Throws std::runtime_error naming the file when it is not a 64-bit little-endian ELF
// shared object, or its tables are damaged.
DynamicSymbols read_dynamic_symbols(const std::filesystem::path& library);

// Whether the dynamic loader still holds a library at this path (RTLD_NOLOAD).
bool library_still_resident(const std::filesystem::path& library);

}  // namespace arbiter::host
