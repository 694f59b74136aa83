// A fresh folder per test, removed with everything in it when the test ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace arbiter::test {

class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

  private:
    std::filesystem::path path_;
};

std::vector<uint8_t> read_bytes(const std::filesystem::path& file);
void write_bytes(const std::filesystem::path& file, const std::vector<uint8_t>& bytes);
std::string read_text(const std::filesystem::path& file);
void write_text(const std::filesystem::path& file, std::string_view text);

// Every regular file in a folder or below it whose name ends in `suffix`, sorted (a host
// keeps its copies in a private folder of its own inside the work folder).
std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir,
                                            std::string_view suffix);

}  // namespace arbiter::test
