#include "arbiter/host/elf_symbols.hpp"

#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace arbiter::host {

namespace {

// Reads a T at an offset of the file's bytes, refusing to read past the end.
template <class T>
T read_at(const std::vector<char>& bytes, uint64_t offset, const std::string& name, const char* what) {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
        throw std::runtime_error(name + ": damaged ELF file (" + what + " lies outside the file)");
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

}  // namespace

DynamicSymbols read_dynamic_symbols(const std::filesystem::path& library) {
    const std::string name = library.string();
    std::ifstream in(library, std::ios::binary);
    if (!in) throw std::runtime_error(name + ": cannot read the file: " + std::strerror(errno));
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

    if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
        throw std::runtime_error(name + ": not an ELF file");
    auto header = read_at<Elf64_Ehdr>(bytes, 0, name, "the ELF header");
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
        throw std::runtime_error(name + ": not a 64-bit little-endian ELF file");
    if (header.e_type != ET_DYN) throw std::runtime_error(name + ": not a shared object (ELF type " +
                                                          std::to_string(header.e_type) + ")");
    if (header.e_shentsize != sizeof(Elf64_Shdr))
        throw std::runtime_error(name + ": damaged ELF file (unexpected section header size)");

    DynamicSymbols symbols;
    for (uint16_t i = 0; i < header.e_shnum; ++i) {
        auto section = read_at<Elf64_Shdr>(bytes, header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), name,
                                           "a section header");
        if (section.sh_type != SHT_DYNSYM) continue;
        if (section.sh_link >= header.e_shnum)
            throw std::runtime_error(name + ": damaged ELF file (.dynsym names no string table)");
        auto strings = read_at<Elf64_Shdr>(bytes, header.e_shoff + uint64_t{section.sh_link} * sizeof(Elf64_Shdr),
                                           name, "the string table header");
        if (section.sh_entsize != sizeof(Elf64_Sym))
            throw std::runtime_error(name + ": damaged ELF file (unexpected symbol size)");
        const uint64_t count = section.sh_size / sizeof(Elf64_Sym);
        for (uint64_t s = 1; s < count; ++s) {
            auto symbol = read_at<Elf64_Sym>(bytes, section.sh_offset + s * sizeof(Elf64_Sym), name, "a symbol");
            if (symbol.st_shndx == SHN_UNDEF) continue;
            const unsigned binding = ELF64_ST_BIND(symbol.st_info);
            const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
            if (symbol.st_name >= strings.sh_size)
                throw std::runtime_error(name + ": damaged ELF file (a symbol name lies outside its table)");
            uint64_t start = strings.sh_offset + symbol.st_name;
            if (start >= bytes.size()) throw std::runtime_error(name + ": damaged ELF file (string table)");
            const char* text = bytes.data() + start;
            std::string symbol_name(text, strnlen(text, bytes.size() - start));
            if (binding == STB_GNU_UNIQUE) symbols.unique.push_back(symbol_name);
            if ((binding == STB_GLOBAL || binding == STB_WEAK || binding == STB_GNU_UNIQUE) &&
                visibility == STV_DEFAULT)
                symbols.exported.push_back(symbol_name);
        }
    }
    return symbols;
}

bool library_still_resident(const std::filesystem::path& library) {
    void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) return false;
    ::dlclose(handle);
    return true;
}

}  // namespace arbiter::host
