#include "support/temp_dir.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace arbiter::test {

TempDir::TempDir() {
    // mkdtemp, not a name of our own choosing: tests run in parallel under ctest.
    std::string pattern = (std::filesystem::temp_directory_path() / "arbiter-int-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))
        throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    path_ = buffer.data();
}

TempDir::~TempDir() {
    std::error_code ignored;
    // A test may have made a file read-only (the host's private copies are mode 0500);
    // remove_all copes, since removal needs write access to the folder only.
    std::filesystem::remove_all(path_, ignored);
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
}

void write_bytes(const std::filesystem::path& file, const std::vector<uint8_t>& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string read_text(const std::filesystem::path& file) {
    auto bytes = read_bytes(file);
    return std::string(bytes.begin(), bytes.end());
}

void write_text(const std::filesystem::path& file, std::string_view text) {
    write_bytes(file, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir,
                                            std::string_view suffix) {
    std::vector<std::filesystem::path> out;
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
        std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.ends_with(suffix)) out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace arbiter::test
